/** A tiny DOM builder: elements from tag, attributes and children; text always via text nodes. */

export type Child = Node | string | null | undefined | false;

export interface Attrs {
  class?: string;
  [attr: string]: string | number | boolean | undefined | EventListener | ((ev: never) => void);
}

/** Create `<tag>` with `attrs` (`on*` functions become listeners; `true` sets an empty attribute). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    } else if (key === 'class') {
      el.className = String(value);
    } else if (value === true) {
      el.setAttribute(key, '');
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** A codicon (`<span class="codicon codicon-NAME">`), hidden from screen readers. */
export function icon(name: string, extra = ''): HTMLSpanElement {
  return h('span', { class: `codicon codicon-${name}${extra ? ` ${extra}` : ''}`, 'aria-hidden': 'true' });
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

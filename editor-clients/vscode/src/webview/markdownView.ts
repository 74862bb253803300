/** Markdown AST (shared/markdown.ts) → DOM, with copy/insert actions on code blocks. */

import { parseMarkdown, type Block, type Inline } from '../shared/markdown';
import { h, icon, type Child } from './dom';

export interface CodeActions {
  copy(text: string): void;
  insert(text: string): void;
  openLink(href: string): void;
}

function inlines(nodes: readonly Inline[], actions: CodeActions): Child[] {
  return nodes.map((n): Child => {
    switch (n.t) {
      case 'text':
        return n.text;
      case 'code':
        return h('code', { class: 'inline-code' }, n.text);
      case 'strong':
        return h('strong', {}, ...inlines(n.children, actions));
      case 'em':
        return h('em', {}, ...inlines(n.children, actions));
      case 'del':
        return h('del', {}, ...inlines(n.children, actions));
      case 'br':
        return h('br');
      case 'link':
        return h(
          'a',
          {
            href: n.href,
            title: n.href,
            onclick: (ev: MouseEvent) => {
              ev.preventDefault();
              actions.openLink(n.href);
            },
          },
          ...inlines(n.children, actions),
        );
    }
  });
}

function codeBlock(block: Extract<Block, { t: 'code' }>, actions: CodeActions): HTMLElement {
  const lang = block.lang || 'text';
  const copyBtn = h(
    'button',
    { class: 'icon-button', title: 'Copy', 'aria-label': `Copy ${lang} code`, 'data-action': 'copy', onclick: () => actions.copy(block.text) },
    icon('copy'),
  );
  const insertBtn = h(
    'button',
    {
      class: 'icon-button',
      title: 'Insert at cursor',
      'aria-label': `Insert ${lang} code at the cursor`,
      'data-action': 'insert',
      onclick: () => actions.insert(block.text),
    },
    icon('insert'),
  );
  return h(
    'div',
    { class: `codeblock${block.closed ? '' : ' open'}` },
    h('div', { class: 'codeblock-head' }, h('span', { class: 'codeblock-lang' }, lang), h('span', { class: 'spacer' }), copyBtn, insertBtn),
    h('pre', {}, h('code', { class: `language-${lang}` }, block.text)),
  );
}

function blocks(list: readonly Block[], actions: CodeActions): Child[] {
  return list.map((b): Child => {
    switch (b.t) {
      case 'heading': {
        // The panel's own title is the top level: "#" renders as <h2>.
        const level = Math.min(6, b.level + 1) as 2 | 3 | 4 | 5 | 6;
        return h(`h${level}`, {}, ...inlines(b.children, actions));
      }
      case 'paragraph':
        return h('p', {}, ...inlines(b.children, actions));
      case 'code':
        return codeBlock(b, actions);
      case 'list': {
        const items = b.items.map((item) => h('li', {}, ...blocks(item, actions)));
        return b.ordered ? h('ol', b.start !== 1 ? { start: b.start } : {}, ...items) : h('ul', {}, ...items);
      }
      case 'quote':
        return h('blockquote', {}, ...blocks(b.children, actions));
      case 'hr':
        return h('hr');
      case 'table': {
        const cell = (tag: 'th' | 'td', content: Inline[], i: number): HTMLElement => {
          const align = b.align[i];
          return h(tag, align ? { class: `align-${align}` } : {}, ...inlines(content, actions));
        };
        return h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h('thead', {}, h('tr', {}, ...b.head.map((c, i) => cell('th', c, i)))),
            h('tbody', {}, ...b.rows.map((row) => h('tr', {}, ...row.map((c, i) => cell('td', c, i))))),
          ),
        );
      }
    }
  });
}

/** Render Markdown `text` into a fresh `<div class="markdown">`. */
export function renderMarkdown(text: string, actions: CodeActions): HTMLElement {
  return h('div', { class: 'markdown' }, ...blocks(parseMarkdown(text), actions));
}

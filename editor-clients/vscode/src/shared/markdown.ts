/**
 * A small Markdown parser for streamed answers: text in, a tree of blocks and inlines out.
 *
 * The webview builds DOM nodes from the tree with `textContent`, never `innerHTML`, so model
 * output cannot inject markup or script; raw HTML in the text shows as text. Supports the
 * CommonMark subset models write: ATX headings, paragraphs, fenced code (``` and ~~~), bullet
 * and ordered lists (nested by indentation), block quotes, thematic breaks, GFM tables, and
 * inline code, **strong**, *emphasis*, ~~strike~~, [links](url) and autolinks. A fence that is
 * still open (the stream has not reached its end) runs to the end of the text.
 */

export type Inline =
  | { t: 'text'; text: string }
  | { t: 'code'; text: string }
  | { t: 'strong'; children: Inline[] }
  | { t: 'em'; children: Inline[] }
  | { t: 'del'; children: Inline[] }
  | { t: 'link'; href: string; children: Inline[] }
  | { t: 'br' };

export type Block =
  | { t: 'heading'; level: number; children: Inline[] }
  | { t: 'paragraph'; children: Inline[] }
  | { t: 'code'; lang: string; text: string; closed: boolean }
  | { t: 'list'; ordered: boolean; start: number; items: Block[][] }
  | { t: 'quote'; children: Block[] }
  | { t: 'hr' }
  | { t: 'table'; align: ('left' | 'center' | 'right' | null)[]; head: Inline[][]; rows: Inline[][][] };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const HR = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function isBlank(line: string): boolean {
  return line.trim().length === 0;
}

function splitRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells: string[] = [];
  let cur = '';
  let inCode = false;
  for (let i = 0; i < s.length; i += 1) {
    const c = s[i];
    if (c === '\\' && s[i + 1] === '|') {
      cur += '|';
      i += 1;
    } else if (c === '`') {
      inCode = !inCode;
      cur += c;
    } else if (c === '|' && !inCode) {
      cells.push(cur.trim());
      cur = '';
    } else {
      cur += c;
    }
  }
  cells.push(cur.trim());
  return cells;
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

/** Parse Markdown text into blocks. Never throws; unknown syntax becomes text. */
export function parseMarkdown(text: string): Block[] {
  return parseBlocks(text.replace(/\r\n?/g, '\n').split('\n'));
}

function parseBlocks(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] as string;
      const indent = line.length - line.trimStart().length;
      const body: string[] = [];
      let closed = false;
      i += 1;
      while (i < lines.length) {
        const l = lines[i] as string;
        const trimmed = l.trim();
        if (trimmed.startsWith(marker[0] as string) && trimmed.length >= marker.length && /^(`+|~+)$/.test(trimmed)) {
          closed = true;
          i += 1;
          break;
        }
        body.push(indent > 0 && l.startsWith(' '.repeat(indent)) ? l.slice(indent) : l);
        i += 1;
      }
      // While a fence is still streaming, the line being typed may be empty: don't show it.
      if (!closed && body.length > 0 && body[body.length - 1] === '') body.pop();
      blocks.push({ t: 'code', lang: fence[2] ?? '', text: body.join('\n'), closed });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ t: 'heading', level: (heading[1] as string).length, children: parseInline(heading[2] ?? '') });
      i += 1;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ t: 'hr' });
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && !isBlank(lines[i] as string)) {
        const m = QUOTE.exec(lines[i] as string);
        body.push(m ? (m[1] as string) : (lines[i] as string));
        i += 1;
      }
      blocks.push({ t: 'quote', children: parseBlocks(body) });
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      const parsed = parseList(lines, i);
      blocks.push(parsed.block);
      i = parsed.next;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1] as string) && (lines[i + 1] as string).includes('-')) {
      const head = splitRow(line);
      const align = splitRow(lines[i + 1] as string).map((c) => {
        const left = c.startsWith(':');
        const right = c.endsWith(':');
        return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
      });
      i += 2;
      const rows: Inline[][][] = [];
      while (i < lines.length && (lines[i] as string).includes('|') && !isBlank(lines[i] as string)) {
        rows.push(splitRow(lines[i] as string).map(parseInline));
        i += 1;
      }
      blocks.push({ t: 'table', align, head: head.map(parseInline), rows });
      continue;
    }
    // Paragraph: up to a blank line or the start of another block.
    const para: string[] = [line];
    i += 1;
    while (i < lines.length && !isBlank(lines[i] as string) && !startsBlock(lines[i] as string)) {
      para.push(lines[i] as string);
      i += 1;
    }
    blocks.push({ t: 'paragraph', children: parseInline(para.map((l) => l.trim()).join('\n')) });
  }
  return blocks;
}

function parseList(lines: string[], from: number): { block: Block; next: number } {
  const first = LIST_ITEM.exec(lines[from] as string) as RegExpExecArray;
  const ordered = /\d/.test(first[2] as string);
  const start = ordered ? Number.parseInt(first[2] as string, 10) : 1;
  const baseIndent = (first[1] as string).length;
  const bodies: string[][] = [];
  let current: string[] | undefined;
  let contentIndent = 0;
  let i = from;
  let blankRun = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      blankRun += 1;
      current?.push('');
      i += 1;
      continue;
    }
    const m = LIST_ITEM.exec(line);
    const indent = line.length - line.trimStart().length;
    if (m && (m[1] as string).length <= baseIndent + 1 && /\d/.test(m[2] as string) === ordered) {
      current = [m[4] as string];
      bodies.push(current);
      contentIndent = (m[1] as string).length + (m[2] as string).length + Math.max(1, (m[3] as string).length);
      blankRun = 0;
      i += 1;
      continue;
    }
    if (indent >= Math.min(contentIndent, baseIndent + 2) && current) {
      current.push(line.slice(Math.min(indent, contentIndent)));
      blankRun = 0;
      i += 1;
      continue;
    }
    if (blankRun === 0 && current && !startsBlock(line)) {
      // Lazy continuation of the item's paragraph.
      current.push(line.trim());
      i += 1;
      continue;
    }
    break;
  }
  const items = bodies.map((body) => {
    while (body.length > 0 && body[body.length - 1] === '') body.pop();
    return parseBlocks(body);
  });
  return { block: { t: 'list', ordered, start, items }, next: i };
}

const SAFE_SCHEMES = /^(https?:|mailto:|file:|vscode:|#)/i;

/** Whether a link target may be offered as a link (else it renders as text). */
export function isSafeHref(href: string): boolean {
  if (SAFE_SCHEMES.test(href)) return true;
  // Relative paths (workspace files) are fine; anything with another scheme (javascript:, data:) is not.
  return !/^[a-z][a-z0-9+.-]*:/i.test(href);
}

/** Parse inline Markdown. Newlines inside a paragraph become soft breaks (spaces) except after two trailing spaces or a backslash. */
export function parseInline(src: string): Inline[] {
  const out: Inline[] = [];
  let text = '';
  const flush = (): void => {
    if (text.length > 0) {
      out.push({ t: 'text', text });
      text = '';
    }
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === '\\' && i + 1 < src.length && /[\\`*_{}[\]()#+\-.!|~<>]/.test(src[i + 1] as string)) {
      text += src[i + 1];
      i += 2;
      continue;
    }
    if (c === '\n') {
      if (text.endsWith('  ') || text.endsWith('\\')) {
        text = text.replace(/( {2,}|\\)$/, '');
        flush();
        out.push({ t: 'br' });
      } else {
        text += ' ';
      }
      i += 1;
      continue;
    }
    if (c === '`') {
      let ticks = 1;
      while (src[i + ticks] === '`') ticks += 1;
      const marker = '`'.repeat(ticks);
      const end = src.indexOf(marker, i + ticks);
      if (end !== -1) {
        flush();
        let code = src.slice(i + ticks, end).replace(/\n/g, ' ');
        if (code.startsWith(' ') && code.endsWith(' ') && code.trim().length > 0) code = code.slice(1, -1);
        out.push({ t: 'code', text: code });
        i = end + ticks;
        continue;
      }
      text += marker;
      i += ticks;
      continue;
    }
    if (c === '[') {
      const close = findClosing(src, i + 1, '[', ']');
      if (close !== -1 && src[close + 1] === '(') {
        const paren = findClosing(src, close + 2, '(', ')');
        if (paren !== -1) {
          const href = (src.slice(close + 2, paren).trim().split(/\s+/)[0] ?? '').replace(/^<|>$/g, '');
          const label = parseInline(src.slice(i + 1, close));
          flush();
          if (isSafeHref(href)) {
            out.push({ t: 'link', href, children: label });
          } else {
            out.push(...label);
          }
          i = paren + 1;
          continue;
        }
      }
    }
    if (c === '<') {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/.exec(src.slice(i));
      if (m) {
        flush();
        out.push({ t: 'link', href: m[1] as string, children: [{ t: 'text', text: m[1] as string }] });
        i += m[0].length;
        continue;
      }
    }
    if (c === 'h' && (i === 0 || /[\s(]/.test(src[i - 1] as string))) {
      const m = /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/.exec(src.slice(i));
      if (m) {
        flush();
        out.push({ t: 'link', href: m[0], children: [{ t: 'text', text: m[0] }] });
        i += m[0].length;
        continue;
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      let run = 1;
      while (src[i + run] === c) run += 1;
      const n = c === '~' ? (run >= 2 ? 2 : 0) : Math.min(run, 2);
      const canOpen = n > 0 && i + n < src.length && !/\s/.test(src[i + n] as string);
      // Intraword underscores (snake_case) are not emphasis.
      const intraword = c === '_' && i > 0 && /\w/.test(src[i - 1] as string);
      if (canOpen && !intraword) {
        const marker = c.repeat(n);
        const end = findDelimiter(src, i + n, marker);
        if (end !== -1) {
          flush();
          const children = parseInline(src.slice(i + n, end));
          out.push(c === '~' ? { t: 'del', children } : n === 2 ? { t: 'strong', children } : { t: 'em', children });
          i = end + n;
          continue;
        }
      }
      text += c.repeat(run);
      i += run;
      continue;
    }
    text += c;
    i += 1;
  }
  flush();
  return out;
}

function findClosing(src: string, from: number, open: string, close: string): number {
  let depth = 0;
  for (let i = from; i < src.length; i += 1) {
    const c = src[i];
    if (c === '\\') {
      i += 1;
    } else if (c === '`') {
      const end = src.indexOf('`', i + 1);
      if (end === -1) return -1;
      i = end;
    } else if (c === open) {
      depth += 1;
    } else if (c === close) {
      if (depth === 0) return i;
      depth -= 1;
    }
  }
  return -1;
}

function findDelimiter(src: string, from: number, marker: string): number {
  for (let i = from; i < src.length; i += 1) {
    const c = src[i];
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (c === '`') {
      const end = src.indexOf('`', i + 1);
      if (end !== -1) i = end;
      continue;
    }
    if (src.startsWith(marker, i) && !/\s/.test(src[i - 1] as string)) {
      const after = src[i + marker.length];
      // `**a**b` closes; `*a**` must not close a single-star run on the double star.
      if (marker.length === 1 && after === marker) {
        i += 1;
        continue;
      }
      if (marker === '_' && after !== undefined && /\w/.test(after)) continue;
      return i;
    }
  }
  return -1;
}

/** Plain text of inlines (for titles, accessibility labels and copy). */
export function inlineText(nodes: readonly Inline[]): string {
  return nodes
    .map((n) => {
      switch (n.t) {
        case 'text':
        case 'code':
          return n.text;
        case 'br':
          return '\n';
        default:
          return inlineText(n.children);
      }
    })
    .join('');
}

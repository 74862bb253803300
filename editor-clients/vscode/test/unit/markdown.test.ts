import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inlineText, isSafeHref, parseInline, parseMarkdown } from '../../src/shared/markdown';

describe('parseMarkdown blocks', () => {
  it('parses headings, paragraphs, rules and quotes', () => {
    assert.deepEqual(parseMarkdown('# Title\n\nSome text\nmore\n\n---\n> quoted'), [
      { t: 'heading', level: 1, children: [{ t: 'text', text: 'Title' }] },
      { t: 'paragraph', children: [{ t: 'text', text: 'Some text more' }] },
      { t: 'hr' },
      { t: 'quote', children: [{ t: 'paragraph', children: [{ t: 'text', text: 'quoted' }] }] },
    ]);
  });

  it('parses fenced code, closed and still streaming', () => {
    assert.deepEqual(parseMarkdown('```ts\nconst a = 1;\n```\nafter'), [
      { t: 'code', lang: 'ts', text: 'const a = 1;', closed: true },
      { t: 'paragraph', children: [{ t: 'text', text: 'after' }] },
    ]);
    assert.deepEqual(parseMarkdown('~~~\nopen\n'), [{ t: 'code', lang: '', text: 'open', closed: false }]);
    assert.deepEqual(parseMarkdown('````md\n```\ninner\n```\n````'), [{ t: 'code', lang: 'md', text: '```\ninner\n```', closed: true }]);
  });

  it('parses nested and ordered lists', () => {
    const [list] = parseMarkdown('3. first\n4. second\n   - nested\n');
    assert.ok(list && list.t === 'list');
    assert.equal(list.ordered, true);
    assert.equal(list.start, 3);
    assert.equal(list.items.length, 2);
    const nested = list.items[1]?.[1];
    assert.ok(nested && nested.t === 'list' && !nested.ordered);
    assert.equal(nested.items.length, 1);
  });

  it('parses GFM tables with alignment', () => {
    const [table] = parseMarkdown('| a | b |\n|:--|--:|\n| 1 | `x|y` |\n');
    assert.ok(table && table.t === 'table');
    assert.deepEqual(table.align, ['left', 'right']);
    assert.deepEqual(table.rows[0]?.[1], [{ t: 'code', text: 'x|y' }]);
  });

  it('shows raw HTML as text', () => {
    assert.deepEqual(parseMarkdown('<script>alert(1)</script>'), [{ t: 'paragraph', children: [{ t: 'text', text: '<script>alert(1)</script>' }] }]);
  });
});

describe('parseInline', () => {
  it('parses emphasis, code and strike', () => {
    assert.deepEqual(parseInline('**b** *i* `c` ~~s~~'), [
      { t: 'strong', children: [{ t: 'text', text: 'b' }] },
      { t: 'text', text: ' ' },
      { t: 'em', children: [{ t: 'text', text: 'i' }] },
      { t: 'text', text: ' ' },
      { t: 'code', text: 'c' },
      { t: 'text', text: ' ' },
      { t: 'del', children: [{ t: 'text', text: 's' }] },
    ]);
  });

  it('leaves snake_case and lone stars alone', () => {
    assert.equal(inlineText(parseInline('call my_func_name now')), 'call my_func_name now');
    assert.deepEqual(parseInline('a * b'), [{ t: 'text', text: 'a * b' }]);
    assert.deepEqual(parseInline('unclosed **bold'), [{ t: 'text', text: 'unclosed **bold' }]);
  });

  it('keeps safe links and drops unsafe ones to text', () => {
    assert.deepEqual(parseInline('[docs](https://example.com/x)'), [{ t: 'link', href: 'https://example.com/x', children: [{ t: 'text', text: 'docs' }] }]);
    assert.deepEqual(parseInline('[x](javascript:alert(1))'), [{ t: 'text', text: 'x' }]);
    assert.deepEqual(parseInline('[file](src/app.py#L3)')[0], { t: 'link', href: 'src/app.py#L3', children: [{ t: 'text', text: 'file' }] });
    assert.equal(parseInline('see https://example.com/a.')[1]?.t, 'link');
    assert.equal(isSafeHref('data:text/html,x'), false);
    assert.equal(isSafeHref('vscode:extension/x'), true);
  });

  it('handles escapes and hard breaks', () => {
    assert.deepEqual(parseInline('\\*not em\\*'), [{ t: 'text', text: '*not em*' }]);
    assert.deepEqual(parseInline('a  \nb'), [{ t: 'text', text: 'a' }, { t: 'br' }, { t: 'text', text: 'b' }]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bufferBlock, explainPrompt, fixPrompt } from '../../src/commands';
import { MAX_ATTACHMENT_BYTES, mentionTokens, rankPaths, resolvePrompt, type MentionIo } from '../../src/prompt/mentions';

function io(files: Record<string, string | Uint8Array>, open: Record<string, string> = {}): MentionIo {
  return {
    openDocumentText: (uri) => open[uri],
    readFile: async (uri) => {
      const f = files[uri];
      if (f === undefined) throw new Error('ENOENT: no such file');
      return typeof f === 'string' ? new TextEncoder().encode(f) : f;
    },
    resolvePath: async (p) => (files[`file:///w/${p}`] !== undefined ? `file:///w/${p}` : undefined),
  };
}

describe('mentionTokens', () => {
  it('finds @paths, not e-mail addresses, and strips trailing punctuation', () => {
    assert.deepEqual(mentionTokens('see @src/app.py, and (@README.md) but not me@example.com; @src/app.py again.'), ['src/app.py', 'README.md']);
  });
});

describe('resolvePrompt', () => {
  it('sends the buffer text of open files and the disk text of others', async () => {
    const r = await resolvePrompt(
      { text: 'compare @a.py with @b.py', mentions: [{ uri: 'file:///w/a.py', label: 'a.py' }] },
      io({ 'file:///w/a.py': 'disk a', 'file:///w/b.py': 'disk b' }, { 'file:///w/a.py': 'unsaved a' }),
    );
    assert.deepEqual(r.blocks, [
      { type: 'text', text: 'compare @a.py with @b.py' },
      { type: 'resource', resource: { uri: 'file:///w/a.py', text: 'unsaved a', mimeType: 'text/x-python' } },
      { type: 'resource', resource: { uri: 'file:///w/b.py', text: 'disk b', mimeType: 'text/x-python' } },
    ]);
    assert.deepEqual(r.attachments.map((a) => a.label), ['a.py', 'b.py']);
    assert.deepEqual(r.problems, []);
  });

  it('drops picked mentions deleted from the text, and ignores unknown tokens', async () => {
    const r = await resolvePrompt({ text: 'hello @nothing', mentions: [{ uri: 'file:///w/a.py', label: 'a.py' }] }, io({ 'file:///w/a.py': 'x' }));
    assert.equal(r.blocks.length, 1);
  });

  it('reports binary, huge and unreadable files instead of attaching them', async () => {
    const r = await resolvePrompt(
      {
        text: '@bin @big @gone',
        mentions: [
          { uri: 'file:///w/bin', label: 'bin' },
          { uri: 'file:///w/big', label: 'big' },
          { uri: 'file:///w/gone', label: 'gone' },
        ],
      },
      io({ 'file:///w/bin': new Uint8Array([1, 0, 2]), 'file:///w/big': 'x'.repeat(MAX_ATTACHMENT_BYTES + 1) }),
    );
    assert.equal(r.blocks.length, 1);
    assert.equal(r.problems.length, 3);
    assert.match(r.problems[0] ?? '', /@bin: binary file/);
    assert.match(r.problems[1] ?? '', /@big: too large to attach \(513 KiB; the limit is 512 KiB\)/);
    assert.match(r.problems[2] ?? '', /@gone: cannot read it \(ENOENT: no such file\)/);
  });

  it('adds the selection with its range', async () => {
    const range = { start: { line: 2, character: 0 }, end: { line: 4, character: 3 } };
    const r = await resolvePrompt({ text: 'why?', mentions: [], selection: { uri: 'file:///w/a.py', label: 'a.py:3-5', text: 'sel', range } }, io({}));
    assert.deepEqual(r.blocks[1], { type: 'resource', resource: { uri: 'file:///w/a.py', text: 'sel' }, _meta: { range } });
  });
});

describe('rankPaths', () => {
  const paths = ['src/app.py', 'tests/test_app.py', 'docs/api.md', 'src/deep/apple_pie.py', 'README.md'];
  it('prefers file-name prefixes, then substrings, then fuzzy matches', () => {
    assert.deepEqual(rankPaths('app', paths), ['src/app.py', 'src/deep/apple_pie.py', 'tests/test_app.py']);
    assert.deepEqual(rankPaths('tap', paths), ['tests/test_app.py']);
    assert.deepEqual(rankPaths('', paths, 2), ['README.md', 'src/app.py']);
    assert.deepEqual(rankPaths('zzz', paths), []);
  });
});

describe('command prompts', () => {
  it('builds a Fix with Agent prompt with 1-based lines', () => {
    const range = { start: { line: 9, character: 0 }, end: { line: 9, character: 4 } };
    assert.equal(
      fixPrompt('src/a.py', [
        { message: 'undefined name x', severity: 0, source: 'pyflakes', code: 'F821', range },
        { message: 'unused import', severity: 1, code: { value: 401 }, range },
      ]),
      'Fix these 2 problems in src/a.py:\n- line 10: error: undefined name x (pyflakes F821)\n- line 10: warning: unused import (401)',
    );
    assert.deepEqual(bufferBlock('file:///a', 'text', range), { type: 'resource', resource: { uri: 'file:///a', text: 'text' }, _meta: { range } });
    assert.match(explainPrompt('a.py', 3, 7), /lines 3-7/);
  });
});

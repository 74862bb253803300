import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyHunks, computeHunks, diffStat, revertHunk, splitLines, unifiedDiff } from '../../src/shared/diff';

describe('splitLines', () => {
  it('keeps terminators so joining is lossless', () => {
    for (const text of ['', 'a', 'a\n', 'a\r\nb', 'a\n\nb\n', '\n']) {
      assert.equal(splitLines(text).join(''), text);
    }
    assert.deepEqual(splitLines('a\r\nb'), ['a\r\n', 'b']);
  });
});

describe('computeHunks', () => {
  it('is empty for equal texts', () => {
    assert.deepEqual(computeHunks('a\nb\n', 'a\nb\n'), []);
  });

  it('finds separate hunks with their positions', () => {
    const old = 'a\nb\nc\nd\ne\nf\n';
    const next = 'a\nB\nc\nd\ne\nf\ng\n';
    const hunks = computeHunks(old, next);
    assert.equal(hunks.length, 2);
    assert.deepEqual(hunks[0], { oldStart: 1, oldCount: 1, newStart: 1, newCount: 1, oldLines: ['b\n'], newLines: ['B\n'] });
    assert.deepEqual(hunks[1], { oldStart: 6, oldCount: 0, newStart: 6, newCount: 1, oldLines: [], newLines: ['g\n'] });
  });

  it('handles a new file and a deleted file', () => {
    assert.deepEqual(computeHunks('', 'x\n')[0]?.newLines, ['x\n']);
    assert.deepEqual(computeHunks('x\ny\n', '')[0]?.oldLines, ['x\n', 'y\n']);
  });
});

describe('applyHunks / revertHunk', () => {
  const old = 'one\r\ntwo\r\nthree\r\nfour\r\nfive';
  const next = 'ONE\r\ntwo\r\nthree\r\nfour\r\nFIVE!';

  it('reproduces either side and any mix, byte for byte (CRLF, no final newline)', () => {
    const hunks = computeHunks(old, next);
    assert.equal(hunks.length, 2);
    assert.equal(applyHunks(old, hunks, [true, true]), next);
    assert.equal(applyHunks(old, hunks, [false, false]), old);
    assert.equal(applyHunks(old, hunks, [true, false]), 'ONE\r\ntwo\r\nthree\r\nfour\r\nfive');
    assert.equal(applyHunks(old, hunks, [false, true]), 'one\r\ntwo\r\nthree\r\nfour\r\nFIVE!');
  });

  it('reverts one hunk of a proposal', () => {
    assert.equal(revertHunk(old, next, 1), 'ONE\r\ntwo\r\nthree\r\nfour\r\nfive');
    assert.throws(() => revertHunk(old, next, 2), /no hunk 2: the proposal has 2 hunks/);
  });

  it('handles non-BMP characters and tabs', () => {
    const a = '\tx = "🎉"\n';
    const b = '\tx = "🎉🚀"\n';
    assert.equal(applyHunks(a, computeHunks(a, b), [true]), b);
  });
});

describe('unifiedDiff', () => {
  it('writes headers, hunk ranges and context like diff -u', () => {
    const old = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';
    const next = 'a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n';
    assert.equal(
      unifiedDiff('src/x.txt', old, next, 1),
      ['--- a/src/x.txt', '+++ b/src/x.txt', '@@ -2,3 +2,3 @@', ' b', '-c', '+C', ' d', '@@ -10,1 +10,2 @@', ' j', '+k', ''].join('\n'),
    );
  });

  it('merges nearby hunks and diffs a new file against /dev/null', () => {
    assert.equal(unifiedDiff('n.txt', null, 'x\n'), '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+x\n');
    const merged = unifiedDiff('m', 'a\nb\nc\n', 'A\nb\nC\n');
    assert.equal((merged.match(/^@@/gm) ?? []).length, 1);
    assert.equal(unifiedDiff('same', 'x', 'x'), '');
  });

  it('counts added and removed lines', () => {
    assert.deepEqual(diffStat('a\nb\n', 'a\nc\nd\n'), { added: 2, removed: 1 });
    assert.deepEqual(diffStat(null, 'a\nb\n'), { added: 2, removed: 0 });
  });
});

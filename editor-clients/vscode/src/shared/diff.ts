/**
 * Line diffs for reviewing proposed edits: hunks, per-hunk accept/reject, unified diff text.
 *
 * Lines keep their end-of-line characters (`"a\r\n"`), so joining the lines of any mix of
 * accepted and rejected hunks reproduces each side byte for byte (CRLF, missing final newline).
 * Algorithm: Myers' O((N+M)·D) shortest edit script ("An O(ND) Difference Algorithm and Its
 * Variations", 1986), then runs of changes grouped into hunks.
 */

/** Split text into lines that keep their terminators; `""` has no lines. */
export function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text.charCodeAt(i) === 10 /* \n */) {
      lines.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

type Op = { op: 'equal' | 'delete' | 'insert'; a: number; b: number };

/** Myers' shortest edit script between two line arrays, as per-line operations in order. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d += 1) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0))) {
        x = v[offset + k + 1] ?? 0;
      } else {
        x = (v[offset + k - 1] ?? 0) + 1;
      }
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Walk the trace backwards from (n, m) to (0, 0).
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d -= 1) {
    const vd = trace[d] as Int32Array;
    const k = x - y;
    let prevK: number;
    if (k === -d || (k !== d && (vd[offset + k - 1] ?? 0) < (vd[offset + k + 1] ?? 0))) {
      prevK = k + 1;
    } else {
      prevK = k - 1;
    }
    const prevX = d === 0 ? 0 : (vd[offset + prevK] ?? 0);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      x -= 1;
      y -= 1;
      ops.push({ op: 'equal', a: x, b: y });
    }
    if (d > 0) {
      if (x === prevX) {
        y -= 1;
        ops.push({ op: 'insert', a: x, b: y });
      } else {
        x -= 1;
        ops.push({ op: 'delete', a: x, b: y });
      }
    }
  }
  ops.reverse();
  return ops;
}

/**
 * One changed region. Line numbers are 0-based indices into each side's `splitLines()`; an
 * empty side (pure insertion or deletion) has `count` 0 and `start` at the insertion point.
 */
export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  oldLines: string[];
  newLines: string[];
}

/** The hunks that turn `oldText` into `newText`, in order; `[]` when the texts are equal. */
export function computeHunks(oldText: string, newText: string): Hunk[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const ops = editScript(a, b);
  const hunks: Hunk[] = [];
  let current: Hunk | undefined;
  for (const op of ops) {
    if (op.op === 'equal') {
      current = undefined;
      continue;
    }
    if (!current) {
      current = { oldStart: op.a, oldCount: 0, newStart: op.b, newCount: 0, oldLines: [], newLines: [] };
      hunks.push(current);
    }
    if (op.op === 'delete') {
      current.oldCount += 1;
      current.oldLines.push(a[op.a] as string);
    } else {
      current.newCount += 1;
      current.newLines.push(b[op.b] as string);
    }
  }
  return hunks;
}

/**
 * Text with each hunk's new side where `accept[i]` is true and its old side elsewhere.
 * `hunks` must come from `computeHunks(oldText, ...)`.
 */
export function applyHunks(oldText: string, hunks: readonly Hunk[], accept: readonly boolean[]): string {
  const a = splitLines(oldText);
  const out: string[] = [];
  let pos = 0;
  hunks.forEach((hunk, i) => {
    out.push(...a.slice(pos, hunk.oldStart));
    out.push(...(accept[i] ? hunk.newLines : hunk.oldLines));
    pos = hunk.oldStart + hunk.oldCount;
  });
  out.push(...a.slice(pos));
  return out.join('');
}

/** `proposal` with hunk `index` (of `computeHunks(original, proposal)`) put back to the original. */
export function revertHunk(original: string, proposal: string, index: number): string {
  const hunks = computeHunks(original, proposal);
  if (index < 0 || index >= hunks.length) {
    throw new RangeError(`no hunk ${index}: the proposal has ${hunks.length} hunks`);
  }
  return applyHunks(original, hunks, hunks.map((_, i) => i !== index));
}

function stripEol(line: string): string {
  return line.replace(/\r?\n$/, '');
}

/**
 * A unified diff (`---`/`+++` headers, `@@` hunks with `context` lines around changes) for
 * display; no `oldText` (the server leaves it out for a new file) diffs against an empty file.
 */
export function unifiedDiff(path: string, oldText: string | null | undefined, newText: string, context = 3): string {
  const a = splitLines(oldText ?? '');
  const hunks = computeHunks(oldText ?? '', newText);
  if (hunks.length === 0) return '';
  const lines: string[] = [`--- ${oldText === null || oldText === undefined ? '/dev/null' : `a/${path}`}`, `+++ b/${path}`];
  let i = 0;
  while (i < hunks.length) {
    // Merge hunks whose context would overlap.
    let j = i;
    while (
      j + 1 < hunks.length &&
      (hunks[j + 1] as Hunk).oldStart - ((hunks[j] as Hunk).oldStart + (hunks[j] as Hunk).oldCount) <= 2 * context
    ) {
      j += 1;
    }
    const first = hunks[i] as Hunk;
    const last = hunks[j] as Hunk;
    const oldFrom = Math.max(0, first.oldStart - context);
    const oldTo = Math.min(a.length, last.oldStart + last.oldCount + context);
    const newFrom = first.newStart - (first.oldStart - oldFrom);
    const body: string[] = [];
    let pos = oldFrom;
    let newCount = 0;
    for (let h = i; h <= j; h += 1) {
      const hunk = hunks[h] as Hunk;
      for (; pos < hunk.oldStart; pos += 1) {
        body.push(` ${stripEol(a[pos] as string)}`);
        newCount += 1;
      }
      for (const l of hunk.oldLines) body.push(`-${stripEol(l)}`);
      for (const l of hunk.newLines) body.push(`+${stripEol(l)}`);
      newCount += hunk.newCount;
      pos = hunk.oldStart + hunk.oldCount;
    }
    for (; pos < oldTo; pos += 1) {
      body.push(` ${stripEol(a[pos] as string)}`);
      newCount += 1;
    }
    const oldCount = oldTo - oldFrom;
    const oldLabel = oldCount === 0 ? `${oldFrom},0` : `${oldFrom + 1},${oldCount}`;
    const newLabel = newCount === 0 ? `${newFrom},0` : `${newFrom + 1},${newCount}`;
    lines.push(`@@ -${oldLabel} +${newLabel} @@`, ...body);
    i = j + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** Lines added and removed between two texts (for "+12 −3" badges). */
export function diffStat(oldText: string | null | undefined, newText: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const hunk of computeHunks(oldText ?? '', newText)) {
    added += hunk.newCount;
    removed += hunk.oldCount;
  }
  return { added, removed };
}

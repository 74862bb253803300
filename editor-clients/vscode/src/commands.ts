/**
 * Prompts built by commands: "Fix with Agent" (diagnostics at the cursor or given by a code
 * action) and "Explain Selection".
 */

import * as path from 'node:path';
import type { ContentBlock, WireRange } from './shared/protocol';

export interface ProblemLike {
  message: string;
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
  range: WireRange;
}

const SEVERITY = ['error', 'warning', 'info', 'hint'];

/** The text of a "Fix with Agent" prompt for `problems` in `fileLabel` (lines shown 1-based). */
export function fixPrompt(fileLabel: string, problems: readonly ProblemLike[]): string {
  const lines = problems.map((p) => {
    const code = typeof p.code === 'object' ? p.code.value : p.code;
    const origin = [p.source, code].filter((x) => x !== undefined && x !== '').join(' ');
    return `- line ${p.range.start.line + 1}: ${SEVERITY[p.severity] ?? 'problem'}: ${p.message}${origin ? ` (${origin})` : ''}`;
  });
  const what = problems.length === 1 ? 'this problem' : `these ${problems.length} problems`;
  return `Fix ${what} in ${fileLabel}:\n${lines.join('\n')}`;
}

/** The resource block of a whole buffer with the range of interest in `_meta.range`. */
export function bufferBlock(uri: string, text: string, range?: WireRange): ContentBlock {
  return { type: 'resource', resource: { uri, text }, ...(range ? { _meta: { range } } : {}) };
}

export function explainPrompt(fileLabel: string, startLine: number, endLine: number): string {
  return `Explain the selected code in ${fileLabel} (lines ${startLine}-${endLine}): what it does, how, and anything surprising.`;
}

export function fileLabel(fsPath: string, relative: string | undefined): string {
  return relative && relative !== fsPath ? relative : path.basename(fsPath);
}

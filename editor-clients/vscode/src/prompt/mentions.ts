/**
 * Turn what the user typed into prompt content blocks: the text, then one `resource` block per
 * @-mentioned file and one for the selection, each carrying the editor's *buffer* text (unsaved
 * changes included), never stale disk text.
 *
 * Mentions come from the picker (`MentionCandidate`s with URIs) or are typed by hand
 * (`@src/app.ts`, resolved against the workspace folders). A picked mention whose `@label` was
 * deleted from the text is dropped. Pure apart from the injected `MentionIo`.
 */

import type { MentionCandidate } from '../shared/messages';
import type { ContentBlock, ResourceBlock, WireRange } from '../shared/protocol';
import type { Attachment } from '../shared/state';

/** Files larger than this are not attached (bytes). */
export const MAX_ATTACHMENT_BYTES = 512 * 1024;

export interface MentionIo {
  /** Buffer text of an open document, or `undefined` when it is not open. */
  openDocumentText(uri: string): string | undefined;
  /** Bytes of a file on disk; rejects when it cannot be read. */
  readFile(uri: string): Promise<Uint8Array>;
  /** URI of a workspace-relative (or absolute) path that exists, else `undefined`. */
  resolvePath(path: string): Promise<string | undefined>;
}

export interface SelectionBlockInput {
  uri: string;
  label: string;
  text: string;
  range: WireRange;
}

export interface ResolvedPrompt {
  blocks: ContentBlock[];
  attachments: Attachment[];
  /** Mentions that could not be attached, with why (shown to the user). */
  problems: string[];
}

const MENTION = /(^|[\s(])@([\w./-]+)/g;

/** `@tokens` typed in `text` (without the `@`), in order, duplicates removed. */
export function mentionTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(MENTION)) {
    const token = (m[2] as string).replace(/[.,;:!?]+$/, '');
    if (token.length > 0 && !out.includes(token)) out.push(token);
  }
  return out;
}

const MIME: Record<string, string> = {
  md: 'text/markdown',
  json: 'application/json',
  py: 'text/x-python',
  ts: 'text/x-typescript',
  js: 'text/javascript',
  html: 'text/html',
  css: 'text/css',
};

function mimeOf(uri: string): string | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(uri)?.[1]?.toLowerCase();
  return ext ? MIME[ext] : undefined;
}

function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8000);
  for (let i = 0; i < n; i += 1) if (bytes[i] === 0) return true;
  return false;
}

async function resourceFor(uri: string, label: string, io: MentionIo): Promise<ResourceBlock | string> {
  const open = io.openDocumentText(uri);
  let text: string;
  if (open !== undefined) {
    text = open;
  } else {
    let bytes: Uint8Array;
    try {
      bytes = await io.readFile(uri);
    } catch (error) {
      return `@${label}: cannot read it (${error instanceof Error ? error.message : String(error)})`;
    }
    if (bytes.byteLength > MAX_ATTACHMENT_BYTES) {
      return `@${label}: too large to attach (${Math.ceil(bytes.byteLength / 1024)} KiB; the limit is ${MAX_ATTACHMENT_BYTES / 1024} KiB). The agent can still read it with its tools.`;
    }
    if (isBinary(bytes)) return `@${label}: binary file, not attached`;
    text = new TextDecoder('utf-8').decode(bytes);
  }
  const mimeType = mimeOf(uri);
  return { type: 'resource', resource: { uri, text, ...(mimeType ? { mimeType } : {}) } };
}

/** Build the prompt's blocks: text first, then mentions in order, then the selection. */
export async function resolvePrompt(
  input: { text: string; mentions: readonly MentionCandidate[]; selection?: SelectionBlockInput },
  io: MentionIo,
): Promise<ResolvedPrompt> {
  const blocks: ContentBlock[] = [];
  const attachments: Attachment[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  if (input.text.trim().length > 0) blocks.push({ type: 'text', text: input.text });
  const tokens = mentionTokens(input.text);
  const wanted: { uri: string; label: string }[] = [];
  for (const m of input.mentions) {
    if (tokens.includes(m.label)) wanted.push({ uri: m.uri, label: m.label });
  }
  for (const token of tokens) {
    if (token === 'selection' || input.mentions.some((m) => m.label === token)) continue;
    const uri = await io.resolvePath(token);
    if (uri !== undefined) wanted.push({ uri, label: token });
  }
  for (const { uri, label } of wanted) {
    if (seen.has(uri)) continue;
    seen.add(uri);
    const block = await resourceFor(uri, label, io);
    if (typeof block === 'string') {
      problems.push(block);
      continue;
    }
    blocks.push(block);
    attachments.push({ label, uri });
  }
  if (input.selection) {
    const s = input.selection;
    blocks.push({ type: 'resource', resource: { uri: s.uri, text: s.text }, _meta: { range: s.range } });
    attachments.push({ label: s.label, uri: s.uri });
  }
  return { blocks, attachments, problems };
}

/**
 * Order `paths` (workspace-relative, `/`-separated) by how well they match `query`: a
 * case-insensitive subsequence match is required; matches in the file name, at word starts and
 * in a row score higher; shorter paths win ties. At most `limit` results.
 */
export function rankPaths(query: string, paths: readonly string[], limit = 20): string[] {
  const q = query.toLowerCase();
  if (q.length === 0) return [...paths].sort((a, b) => a.length - b.length || a.localeCompare(b)).slice(0, limit);
  const scored: { path: string; score: number }[] = [];
  for (const path of paths) {
    const score = fuzzyScore(q, path);
    if (score > 0) scored.push({ path, score });
  }
  scored.sort((a, b) => b.score - a.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}

function fuzzyScore(q: string, path: string): number {
  const lower = path.toLowerCase();
  const nameStart = lower.lastIndexOf('/') + 1;
  const name = lower.slice(nameStart);
  if (name.startsWith(q)) return 1000 - path.length / 1000;
  if (name.includes(q)) return 800 - path.length / 1000;
  if (lower.includes(q)) return 600 - path.length / 1000;
  let score = 0;
  let pos = 0;
  let streak = 0;
  for (const ch of q) {
    const found = lower.indexOf(ch, pos);
    if (found === -1) return 0;
    const prev = lower[found - 1];
    const wordStart = found === 0 || prev === '/' || prev === '_' || prev === '-' || prev === '.';
    streak = found === pos ? streak + 1 : 0;
    score += 1 + (wordStart ? 3 : 0) + streak * 2 + (found >= nameStart ? 2 : 0);
    pos = found + 1;
  }
  return score;
}

/**
 * "Rewind to here" on the host side: which prompt of the panel is which prompt of the server
 * (ids from `lspAgent/session/checkpoints`), and what a rewind does to the panel's transcript.
 * Pure functions over the session state; the controller does the requests.
 */

import type { CheckpointSummary, RewindResult } from './shared/protocol';
import type { SessionState, UserItem } from './shared/state';

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.trim() ?? '';
}

/**
 * Give the panel's prompts the server's ids: walking both lists from the newest, each
 * checkpoint goes to the newest earlier prompt whose first line it names (slash commands have
 * no checkpoint and are skipped this way). Returns whether an item changed.
 */
export function stampPrompts(session: SessionState, checkpoints: readonly CheckpointSummary[]): boolean {
  const prompts = session.items.filter((i): i is UserItem => i.kind === 'user');
  let at = prompts.length - 1;
  let changed = false;
  for (let c = checkpoints.length - 1; c >= 0 && at >= 0; c -= 1) {
    const checkpoint = checkpoints[c];
    if (!checkpoint) continue;
    const wanted = firstLine(checkpoint.prompt);
    while (at >= 0 && firstLine(prompts[at]?.text ?? '') !== wanted) at -= 1;
    const item = prompts[at];
    if (!item) break;
    if (item.messageId !== checkpoint.messageId) {
      item.messageId = checkpoint.messageId;
      item.rev += 1;
      changed = true;
    }
    at -= 1;
  }
  return changed;
}

/**
 * Apply a rewind's outcome to the panel: when the conversation was cut, the prompt and
 * everything after it leave the transcript. Returns the notice to show.
 */
export function applyRewind(session: SessionState, messageId: string, result: RewindResult): string {
  if (result.conversation) {
    const index = session.items.findIndex((i) => i.kind === 'user' && i.messageId === messageId);
    if (index >= 0) session.items.splice(index);
  }
  const parts: string[] = [];
  const restored = result.restored ?? [];
  const removed = result.removed ?? [];
  const conflicts = result.conflicts ?? [];
  if (restored.length > 0) parts.push(`${restored.length} file(s) restored`);
  if (removed.length > 0) parts.push(`${removed.length} removed`);
  if (conflicts.length > 0) {
    parts.push(`conflicts to resolve in ${conflicts.map((c) => c.path.split('/').pop()).join(', ')}`);
  }
  if (result.conversation) parts.push('the conversation is back to before it');
  let text = `Rewound to before “${result.prompt}”${parts.length > 0 ? `: ${parts.join('; ')}` : ''}.`;
  if (result.failure) text += ` Not restored: ${result.failure}`;
  return text;
}

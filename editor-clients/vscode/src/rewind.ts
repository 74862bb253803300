/**
 * "Rewind to here" on the host side: what a rewind does to the panel's transcript. Each prompt
 * knows its server id (the prompt result's `messageId`, or the replayed `user_message_chunk`'s),
 * so the button sends that id. Pure functions over the session state; the controller does the
 * requests.
 */

import type { RewindResult } from './shared/protocol';
import type { SessionState } from './shared/state';

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

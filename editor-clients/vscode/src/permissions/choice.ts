/**
 * Questions the server asks through `lspAgent/session/requestPermission` that are a choice
 * rather than a tool call (docs/protocol.md §5.1): which memory file a `# note` goes to, and
 * which memory file `/memory` opens. They are shown as a quick pick of the options' names;
 * dismissing it answers "cancelled".
 */

import * as vscode from 'vscode';
import type { RequestPermissionParams, RequestPermissionResult } from '../shared/protocol';

const CHOICE_PREFIXES = ['memory_target_', 'memory_open_'];

/** Whether a permission request is one of those choices. */
export function isChoice(params: RequestPermissionParams): boolean {
  const id = params.toolCall?.toolCallId;
  return typeof id === 'string' && CHOICE_PREFIXES.some((prefix) => id.startsWith(prefix));
}

interface ChoiceItem extends vscode.QuickPickItem {
  optionId: string;
}

/** Ask the choice with a quick pick; the picked option's id, or "cancelled". */
export async function pickChoice(params: RequestPermissionParams, token?: vscode.CancellationToken): Promise<RequestPermissionResult> {
  const items: ChoiceItem[] = params.options.map((o) => ({ label: o.name, optionId: o.optionId }));
  const picked = await vscode.window.showQuickPick(items, { title: `lsp-agent: ${params.toolCall.title ?? 'choose'}`, ignoreFocusOut: true }, token);
  return picked ? { outcome: { outcome: 'selected', optionId: picked.optionId } } : { outcome: { outcome: 'cancelled' } };
}

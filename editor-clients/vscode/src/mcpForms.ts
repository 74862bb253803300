/**
 * MCP servers' forms waiting for the user (`lspAgent/mcp/elicit`, docs/protocol.md §15.6):
 * each is shown as a card in the chat panel and answered exactly once — from the card, or as
 * `cancel` when the server withdraws the request. A panel that reloads gets them again.
 */

import type * as vscode from 'vscode';
import type { McpFormRequest, ToWebview } from './shared/messages';
import type { McpElicitParams, McpElicitResult } from './shared/protocol';

interface Entry {
  request: McpFormRequest;
  resolve(result: McpElicitResult): void;
  cancelListener?: vscode.Disposable;
}

export class McpForms {
  private readonly pending = new Map<string, Entry>();
  private counter = 0;

  constructor(private readonly post: (message: ToWebview) => void) {}

  /** Show the form; resolves with the user's answer, or `cancel` when `token` is cancelled. */
  ask(params: McpElicitParams, token?: vscode.CancellationToken): Promise<McpElicitResult> {
    this.counter += 1;
    const formId = `form-${this.counter}`;
    const request: McpFormRequest = {
      formId,
      server: params.server,
      message: params.message,
      requestedSchema: params.requestedSchema,
      ...(params.problems && params.problems.length > 0 ? { problems: params.problems } : {}),
    };
    return new Promise<McpElicitResult>((resolve) => {
      const entry: Entry = { request, resolve };
      this.pending.set(formId, entry);
      if (token?.isCancellationRequested) {
        this.answer(formId, 'cancel');
        return;
      }
      entry.cancelListener = token?.onCancellationRequested(() => this.answer(formId, 'cancel'));
      this.post({ type: 'mcpForm', form: request });
    });
  }

  /** The user's answer to form `formId` (ignored when it is no longer pending). */
  answer(formId: string, action: McpElicitResult['action'], content?: Record<string, string | number | boolean>): void {
    const entry = this.pending.get(formId);
    if (!entry) return;
    this.pending.delete(formId);
    entry.cancelListener?.dispose();
    entry.resolve(action === 'accept' ? { action, content: content ?? {} } : { action });
    this.post({ type: 'mcpFormClosed', formId });
  }

  /** Show every pending form again (the panel was reloaded). */
  replay(): void {
    for (const { request } of this.pending.values()) this.post({ type: 'mcpForm', form: request });
  }

  get size(): number {
    return this.pending.size;
  }
}

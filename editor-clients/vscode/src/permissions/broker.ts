/**
 * Open permission questions from the server (`lspAgent/session/requestPermission`), each
 * answered exactly once: from the chat panel, from the diff review, or by cancellation.
 */

import * as vscode from 'vscode';
import { answerScope, offeredScopes, PermissionAnswerError } from '../shared/permissionPrompt';
import type {
  PermissionOption,
  PermissionOptionKind,
  RequestPermissionParams,
  RequestPermissionResult,
  RuleScope,
} from '../shared/protocol';
import type { PermissionState } from '../shared/state';

export { PermissionAnswerError };

export interface PendingPermission {
  requestId: string;
  params: RequestPermissionParams;
}

export interface PermissionResolution {
  requestId: string;
  sessionId: string;
  state: PermissionState;
  chosen?: string;
  feedback?: string;
  edited?: boolean;
  /** Where an "always" answer is kept. */
  scope?: RuleScope;
}

interface Entry extends PendingPermission {
  resolve(result: RequestPermissionResult): void;
  cancelListener: vscode.Disposable | undefined;
}

export function stateOfKind(kind: PermissionOptionKind | undefined): PermissionState {
  return kind === 'allow_once' || kind === 'allow_always' ? 'allowed' : 'rejected';
}

/** The option of `kind` (first match), falling back to any option of the same verdict. */
export function optionOfKind(options: readonly PermissionOption[], kind: PermissionOptionKind): PermissionOption | undefined {
  return (
    options.find((o) => o.kind === kind) ??
    options.find((o) => stateOfKind(o.kind) === stateOfKind(kind) && o.kind.endsWith('_once'))
  );
}

export class PermissionBroker implements vscode.Disposable {
  private readonly entries = new Map<string, Entry>();
  private counter = 0;
  private readonly requested = new vscode.EventEmitter<PendingPermission>();
  private readonly resolved = new vscode.EventEmitter<PermissionResolution>();

  readonly onDidRequest = this.requested.event;
  readonly onDidResolve = this.resolved.event;

  /** Register a question from the server; resolves when answered or when `token` is cancelled. */
  request(params: RequestPermissionParams, token?: vscode.CancellationToken): Promise<RequestPermissionResult> {
    this.counter += 1;
    const requestId = `perm-${this.counter}`;
    return new Promise<RequestPermissionResult>((resolve) => {
      const entry: Entry = { requestId, params, resolve, cancelListener: undefined };
      this.entries.set(requestId, entry);
      if (token) {
        if (token.isCancellationRequested) {
          this.cancel(requestId);
          return;
        }
        entry.cancelListener = token.onCancellationRequested(() => this.cancel(requestId));
      }
      this.requested.fire({ requestId, params });
    });
  }

  get(requestId: string): PendingPermission | undefined {
    const e = this.entries.get(requestId);
    return e ? { requestId: e.requestId, params: e.params } : undefined;
  }

  /** Open questions, oldest first. */
  pending(): PendingPermission[] {
    return [...this.entries.values()].map((e) => ({ requestId: e.requestId, params: e.params }));
  }

  /**
   * Answer with `optionId`. `feedback` goes to the model; `editedText` (file URI → full text)
   * replaces the proposed texts; `scope` says where an "always" answer is kept (default: the
   * session, when offered) and is sent with "always" answers only. Throws
   * `PermissionAnswerError` for an unknown request or option, or a scope the server did not offer.
   */
  answer(
    requestId: string,
    optionId: string,
    extra: { feedback?: string; editedText?: Record<string, string>; scope?: RuleScope } = {},
  ): PermissionResolution {
    const entry = this.entries.get(requestId);
    if (!entry) {
      throw new PermissionAnswerError(`The permission request ${requestId} is no longer open.`);
    }
    const option = entry.params.options.find((o) => o.optionId === optionId);
    if (!option) {
      throw new PermissionAnswerError(`The permission request ${requestId} has no option "${optionId}".`);
    }
    const scope = answerScope(option, offeredScopes(entry.params.scopes), extra.scope);
    const feedback = extra.feedback?.trim();
    const edited = extra.editedText && Object.keys(extra.editedText).length > 0 ? extra.editedText : undefined;
    const result: RequestPermissionResult = {
      outcome: {
        outcome: 'selected',
        optionId,
        ...(feedback ? { feedback } : {}),
        ...(edited ? { editedText: edited } : {}),
        ...(scope ? { scope } : {}),
      },
    };
    const resolution: PermissionResolution = {
      requestId,
      sessionId: entry.params.sessionId,
      state: stateOfKind(option.kind),
      chosen: option.name,
      ...(feedback ? { feedback } : {}),
      ...(edited ? { edited: true } : {}),
      ...(scope ? { scope } : {}),
    };
    this.finish(entry, result, resolution);
    return resolution;
  }

  /** Answer `cancelled` (the turn was stopped or the server withdrew the question). */
  cancel(requestId: string): void {
    const entry = this.entries.get(requestId);
    if (!entry) return;
    this.finish(entry, { outcome: { outcome: 'cancelled' } }, { requestId, sessionId: entry.params.sessionId, state: 'cancelled' });
  }

  cancelSession(sessionId: string): void {
    for (const entry of [...this.entries.values()]) {
      if (entry.params.sessionId === sessionId) this.cancel(entry.requestId);
    }
  }

  private finish(entry: Entry, result: RequestPermissionResult, resolution: PermissionResolution): void {
    this.entries.delete(entry.requestId);
    entry.cancelListener?.dispose();
    entry.resolve(result);
    this.resolved.fire(resolution);
  }

  dispose(): void {
    for (const entry of [...this.entries.values()]) this.cancel(entry.requestId);
    this.requested.dispose();
    this.resolved.dispose();
  }
}

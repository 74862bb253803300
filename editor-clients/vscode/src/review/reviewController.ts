/**
 * "Review" of a proposed edit: VS Code's diff editor (original ⟷ proposal), CodeLenses to
 * accept or reject each hunk, editor-title actions to accept, reject, or reject with feedback.
 *
 * Rejecting a hunk puts that hunk's original lines back into the proposal; accepting a hunk
 * marks it reviewed. The user may also type into the proposal. "Accept" answers the permission
 * request with the proposal's current text: unchanged → a plain allow; changed → an allow with
 * `outcome.editedText` (file URI → the text the user approved).
 */

import * as vscode from 'vscode';
import { computeHunks, revertHunk, type Hunk } from '../shared/diff';
import type { DiffItem } from '../shared/protocol';
import { optionOfKind, type PermissionBroker, type PermissionResolution } from '../permissions/broker';
import { PROPOSAL_SCHEME, type ProposalEntry, type ProposalStore } from './proposalStore';

export const ReviewCommands = {
  accept: 'lspAgent.review.accept',
  reject: 'lspAgent.review.reject',
  rejectWithFeedback: 'lspAgent.review.rejectWithFeedback',
  acceptHunk: 'lspAgent.review.acceptHunk',
  rejectHunk: 'lspAgent.review.rejectHunk',
} as const;

/** A stable identity of a hunk across edits elsewhere in the proposal. */
function hunkKey(hunk: Hunk): string {
  return `${hunk.oldStart}:${hunk.oldLines.join('')}\u0000${hunk.newLines.join('')}`;
}

export interface ReviewHost {
  /** Whether the running server takes edited proposals (`outcome.editedText`). */
  editedProposalsSupported(): boolean;
  log: vscode.LogOutputChannel;
}

export class ReviewController implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly accepted = new Map<string, Set<string>>();
  private readonly lensEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensEmitter.event;

  constructor(
    private readonly store: ProposalStore,
    private readonly broker: PermissionBroker,
    private readonly host: ReviewHost,
  ) {
    this.disposables.push(
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSAL_SCHEME }, this),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === PROPOSAL_SCHEME) this.lensEmitter.fire();
      }),
      broker.onDidResolve((r) => void this.onResolved(r)),
      vscode.commands.registerCommand(ReviewCommands.accept, (uri?: vscode.Uri) => this.accept(uri)),
      vscode.commands.registerCommand(ReviewCommands.reject, (uri?: vscode.Uri) => this.reject(uri, false)),
      vscode.commands.registerCommand(ReviewCommands.rejectWithFeedback, (uri?: vscode.Uri) => this.reject(uri, true)),
      vscode.commands.registerCommand(ReviewCommands.acceptHunk, (uri: vscode.Uri, index: number) => this.acceptHunk(uri, index)),
      vscode.commands.registerCommand(ReviewCommands.rejectHunk, (uri: vscode.Uri, index: number) => this.rejectHunk(uri, index)),
    );
  }

  /**
   * Open the diff editor(s) for the edits of a pending request. The user clicked "Review", so
   * the diff takes focus. Returns how many diffs were opened.
   */
  async open(requestId: string): Promise<number> {
    const pending = this.broker.get(requestId);
    if (!pending) {
      void vscode.window.showWarningMessage('This permission request is no longer open.');
      return 0;
    }
    let entries = this.store.entriesOf(requestId);
    if (entries.length === 0) {
      const diffs = (pending.params.toolCall.content ?? []).filter((c): c is DiffItem => c.type === 'diff');
      entries = diffs.map((diff, index) =>
        this.store.add({
          requestId,
          index,
          targetUri: diff.uri ?? vscode.Uri.file(diff.path).toString(),
          targetPath: diff.path,
          original: diff.oldText ?? '',
          proposed: diff.newText,
        }),
      );
    }
    if (entries.length === 0) {
      void vscode.window.showInformationMessage('This request has no file changes to review.');
      return 0;
    }
    for (const [i, entry] of entries.entries()) {
      const name = entry.targetPath.split(/[\\/]/).pop() ?? entry.targetPath;
      await vscode.commands.executeCommand(
        'vscode.diff',
        entry.originalUri,
        entry.proposalUri,
        `${name} ↔ proposed by lsp-agent`,
        { preview: false, preserveFocus: i > 0 },
      );
    }
    return entries.length;
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const entry = this.store.entry(document.uri);
    if (!entry || !this.broker.get(entry.requestId)) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    const lenses: vscode.CodeLens[] = [
      new vscode.CodeLens(top, { title: '$(check) Accept', command: ReviewCommands.accept, arguments: [document.uri] }),
      new vscode.CodeLens(top, { title: '$(close) Reject', command: ReviewCommands.reject, arguments: [document.uri] }),
      new vscode.CodeLens(top, {
        title: '$(comment) Reject with feedback…',
        command: ReviewCommands.rejectWithFeedback,
        arguments: [document.uri],
      }),
    ];
    const hunks = computeHunks(entry.original, document.getText());
    const accepted = this.accepted.get(document.uri.toString()) ?? new Set<string>();
    hunks.forEach((hunk, index) => {
      const line = Math.min(hunk.newStart, Math.max(0, document.lineCount - 1));
      const range = new vscode.Range(line, 0, line, 0);
      const label = `Change ${index + 1} of ${hunks.length}`;
      if (accepted.has(hunkKey(hunk))) {
        lenses.push(new vscode.CodeLens(range, { title: `$(pass-filled) ${label} accepted`, command: '' }));
      } else {
        lenses.push(
          new vscode.CodeLens(range, {
            title: `$(check) Accept change ${index + 1}/${hunks.length}`,
            command: ReviewCommands.acceptHunk,
            arguments: [document.uri, index],
          }),
        );
      }
      lenses.push(
        new vscode.CodeLens(range, {
          title: '$(discard) Reject change',
          command: ReviewCommands.rejectHunk,
          arguments: [document.uri, index],
        }),
      );
    });
    return lenses;
  }

  private entryFor(uri?: vscode.Uri): ProposalEntry | undefined {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    const entry = target ? this.store.entry(target) : undefined;
    if (!entry) {
      void vscode.window.showWarningMessage('Open a proposal from lsp-agent (the "Review" button) to use this command.');
    }
    return entry;
  }

  private document(entry: ProposalEntry): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === entry.proposalUri.toString());
  }

  acceptHunk(uri: vscode.Uri, index: number): void {
    const entry = this.store.entry(uri);
    if (!entry) return;
    const hunks = computeHunks(entry.original, this.store.currentText(entry));
    const hunk = hunks[index];
    if (!hunk) return;
    const set = this.accepted.get(uri.toString()) ?? new Set<string>();
    set.add(hunkKey(hunk));
    this.accepted.set(uri.toString(), set);
    this.lensEmitter.fire();
  }

  /** Put hunk `index` of the proposal back to the original text. */
  async rejectHunk(uri: vscode.Uri, index: number): Promise<boolean> {
    const entry = this.store.entry(uri);
    if (!entry) return false;
    const current = this.store.currentText(entry);
    let next: string;
    try {
      next = revertHunk(entry.original, current, index);
    } catch (error) {
      this.host.log.warn(`Reject change: ${String(error)}`);
      return false;
    }
    const doc = this.document(entry) ?? (await vscode.workspace.openTextDocument(entry.proposalUri));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), next);
    const ok = await vscode.workspace.applyEdit(edit);
    this.lensEmitter.fire();
    return ok;
  }

  /** Accept the whole proposal (as the user left it). Returns the resolution, if answered. */
  async accept(uri?: vscode.Uri): Promise<PermissionResolution | undefined> {
    const entry = this.entryFor(uri);
    if (!entry) return undefined;
    const pending = this.broker.get(entry.requestId);
    if (!pending) return undefined;
    const option = optionOfKind(pending.params.options, 'allow_once');
    if (!option) {
      void vscode.window.showErrorMessage('The server offered no way to allow this change.');
      return undefined;
    }
    const edited: Record<string, string> = {};
    for (const e of this.store.entriesOf(entry.requestId)) {
      const text = this.store.currentText(e);
      if (text !== e.proposed) edited[e.targetUri] = text;
    }
    if (Object.keys(edited).length > 0 && !this.host.editedProposalsSupported()) {
      const choice = await vscode.window.showWarningMessage(
        'This lsp-agent server cannot apply a proposal you changed; it can apply the original proposal or take your feedback.',
        { modal: true },
        'Accept original proposal',
      );
      if (choice !== 'Accept original proposal') return undefined;
      return this.broker.answer(entry.requestId, option.optionId);
    }
    return this.broker.answer(entry.requestId, option.optionId, { editedText: edited });
  }

  /** Reject the proposal, asking for feedback for the model when `withFeedback`. */
  async reject(uri: vscode.Uri | undefined, withFeedback: boolean): Promise<PermissionResolution | undefined> {
    const entry = this.entryFor(uri);
    if (!entry) return undefined;
    const pending = this.broker.get(entry.requestId);
    if (!pending) return undefined;
    const option = optionOfKind(pending.params.options, 'reject_once');
    if (!option) {
      void vscode.window.showErrorMessage('The server offered no way to reject this change.');
      return undefined;
    }
    let feedback: string | undefined;
    if (withFeedback) {
      feedback = await vscode.window.showInputBox({
        title: 'Reject with feedback',
        prompt: 'Tell the agent what to do instead',
        placeHolder: 'e.g. keep the old name; only fix the off-by-one',
        ignoreFocusOut: true,
      });
      if (feedback === undefined) return undefined;
    }
    return this.broker.answer(entry.requestId, option.optionId, feedback ? { feedback } : {});
  }

  /** Close the diff tabs of a request once it is answered (its proposal is no longer actionable). */
  private async onResolved(resolution: PermissionResolution): Promise<void> {
    const entries = this.store.entriesOf(resolution.requestId);
    if (entries.length === 0) return;
    const uris = new Set(entries.map((e) => e.proposalUri.toString()));
    // Keep the user's edits from prompting "save changes?" when the tab closes.
    for (const doc of vscode.workspace.textDocuments) {
      if (uris.has(doc.uri.toString()) && doc.isDirty) await doc.save();
    }
    const tabs: vscode.Tab[] = [];
    for (const group of vscode.window.tabGroups?.all ?? []) {
      for (const tab of group.tabs) {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff && uris.has(input.modified.toString())) tabs.push(tab);
      }
    }
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
    for (const e of entries) this.accepted.delete(e.proposalUri.toString());
    this.store.removeRequest(resolution.requestId);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.lensEmitter.dispose();
  }
}

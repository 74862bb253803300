/**
 * The chat controller: turns and the glue between the server (AgentClient), the chat panel, the
 * permission broker and the review diff, on top of the window's chat tabs (chatTabs.ts).
 *
 * It keeps the authoritative chat state (the same reducer the webview runs), forwards every
 * server update to the panel, and never moves keyboard focus unless a user action asked for it.
 */

import * as vscode from 'vscode';
import { ChatTabs, type ControllerDeps } from './chatTabs';
import { insertIntoEditor, openLink, openLocation, selectionBlock, selectionInfo } from './editorContext';
import { errorMessage } from './server/agentClient';
import type { PendingPermission, PermissionResolution } from './permissions/broker';
import { decisionOrigin, describeOrigin, resolvedLabel } from './shared/permissionPrompt';
import { resolvePrompt, type MentionIo, type SelectionBlockInput } from './prompt/mentions';
import { workspaceMentionIo, WorkspaceMentions } from './prompt/workspaceMentions';
import type { MentionCandidate, PanelSnapshot, RewindRestore, SelectionInfo, ToHost } from './shared/messages';
import { applyRewind } from './rewind';
import { McpForms } from './mcpForms';
import type { ContentBlock, McpAction, McpElicitParams, McpElicitResult, McpServerInfo, McpServersResult, RewindResult, TurnResult, SessionDidEndParams, SessionDidStartParams, SessionUpdateParams } from './shared/protocol';
import {
  addPermission,
  applyUpdate,
  createSession,
  endTurn,
  pendingPermissions,
  resolvePermission,
  startTurn,
  titleFromPrompt,
  type Attachment,
  type SessionState,
} from './shared/state';

export type { ControllerDeps } from './chatTabs';

const HISTORY_KEY = 'lspAgent.promptHistory';
const HISTORY_LIMIT = 100;
/** After asking the server to cancel, wait this long before also cancelling the request (ms). */
const CANCEL_GRACE_MS = 5000;

export interface PromptRequest {
  sessionId?: string;
  text: string;
  mentions: readonly MentionCandidate[];
  /** Attach the editor's current selection (from the panel's selection chip). */
  includeSelection: boolean;
  /** Extra blocks built by a command (Fix with Agent, Explain Selection). */
  extraBlocks?: ContentBlock[];
  extraAttachments?: Attachment[];
}

export class ChatController extends ChatTabs implements vscode.Disposable {
  private readonly turns = new Map<string, vscode.CancellationTokenSource>();
  /** Sessions running a turn the server started itself (an agent command), until `didEnd`. */
  private readonly serverTurns = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private selection: SelectionInfo | undefined;
  private mcpServers: McpServerInfo[] = [];
  private readonly mentions: WorkspaceMentions;

  constructor(deps: ControllerDeps) {
    super(deps);
    this.mentions = new WorkspaceMentions({ client: deps.client, log: deps.log });
    this.disposables.push(
      deps.broker.onDidRequest((p) => this.onPermissionRequested(p)),
      deps.broker.onDidResolve((r) => this.onPermissionResolved(r)),
      deps.client.onDidChangeStatus((status) => {
        this.post({ type: 'serverStatus', status });
        if (status.phase === 'running') {
          void this.refreshMcp();
          void this.restoreTabs();
        }
        if (status.phase !== 'running') this.failRunningTurns(status.message ?? 'The server stopped.');
        this.changed.fire();
      }),
    );
  }

  pendingCount(): number {
    return this.deps.broker.pending().length;
  }

  snapshot(): PanelSnapshot {
    return {
      sessions: this.allSessions,
      ...(this.activeSessionId ? { activeSessionId: this.activeSessionId } : {}),
      server: this.deps.client.status,
      history: this.history(),
      ...(this.selection ? { selection: this.selection } : {}),
      editedProposals: this.deps.client.capabilities !== undefined,
      mcpServers: this.mcpServers,
    };
  }

  // ---- MCP servers ----------------------------------------------------------------------------

  /** `lspAgent/mcp/didChange`, or the answer of a list/approve/reconnect request. */
  mcpChanged(result: McpServersResult): void {
    this.mcpServers = Array.isArray(result?.servers) ? result.servers : [];
    this.post({ type: 'mcpServers', servers: this.mcpServers });
  }

  private async refreshMcp(): Promise<void> {
    try {
      this.mcpChanged(await this.deps.client.mcpList());
    } catch (error) {
      this.deps.log.warn(`Listing the MCP servers failed: ${errorMessage(error)}`);
    }
  }

  private async mcpAction(action: McpAction, name: string): Promise<void> {
    if (action === 'login') this.notify(undefined, 'info', `MCP server ${name}: finish the login in your browser.`);
    try {
      this.mcpChanged(await this.deps.client.mcpAct(action, name));
    } catch (error) {
      this.notify(undefined, 'error', `MCP server ${name}: ${errorMessage(error)}`);
    }
  }

  private readonly forms = new McpForms((message) => this.post(message));

  /** An MCP server's form (`lspAgent/mcp/elicit`): a card in the panel until answered. */
  mcpElicit(params: McpElicitParams, token?: vscode.CancellationToken): Promise<McpElicitResult> {
    const answer = this.forms.ask(params, token);
    this.deps.log.info(`MCP server ${params.server} asks: ${params.message}`);
    if (!this.deps.panelVisible()) {
      void vscode.window
        .showInformationMessage(`MCP server ${params.server} asks: ${params.message}`, 'Show')
        .then((choice) => (choice === 'Show' ? this.deps.reveal(true) : undefined));
    }
    return answer;
  }


  private history(): string[] {
    return this.deps.memento.get<string[]>(HISTORY_KEY, []);
  }

  private async remember(text: string): Promise<void> {
    const trimmed = text.trim();
    if (trimmed.length === 0) return;
    const history = this.history().filter((h) => h !== trimmed);
    history.push(trimmed);
    const kept = history.slice(-HISTORY_LIMIT);
    await this.deps.memento.update(HISTORY_KEY, kept);
    this.post({ type: 'history', history: kept });
  }


  // ---- server → client ----------------------------------------------------------------------

  onUpdate(params: SessionUpdateParams): void {
    const session = this.sessionFor(params.sessionId);
    if (applyUpdate(session, params.update)) {
      this.post({ type: 'sessionUpdate', sessionId: params.sessionId, update: params.update });
      if (params.update.sessionUpdate === 'usage_update' || params.update.sessionUpdate === 'current_mode_update') {
        this.changed.fire();
      }
    }
  }

  /**
   * `lspAgent/session/didStart`: the server started a turn for an agent command (the user picked
   * "Fix with agent" in the lightbulb). The session gets a tab (a closed one is reopened), which
   * becomes the active one, and the panel is shown: with `preserveFocus` once the view exists
   * (the first time, VS Code can only open it through its focus command).
   */
  onSessionStarted(params: SessionDidStartParams): void {
    const text = params.title?.trim() || 'Agent command';
    let session = this.sessions.get(params.sessionId);
    const reopened = session ? undefined : this.closed.get(params.sessionId);
    if (reopened) {
      this.closed.delete(params.sessionId);
      this.sessions.set(params.sessionId, reopened);
      session = reopened;
      this.post({ type: 'sessionAdded', session, activate: true });
    } else if (!session) {
      session = createSession({
        id: params.sessionId,
        title: titleFromPrompt(text),
        ...(params.cwd ? { cwd: params.cwd } : {}),
        modeId: this.deps.defaultMode(),
      });
      this.sessions.set(session.id, session);
      this.post({ type: 'sessionAdded', session, activate: true });
    }
    this.activeSessionId = session.id;
    this.post({ type: 'sessionActivated', sessionId: session.id });
    if (!session.running) {
      this.serverTurns.add(session.id);
      startTurn(session, text, []);
      this.post({ type: 'turnStarted', sessionId: session.id, text, attachments: [] });
    }
    this.changed.fire();
    void this.deps.reveal(false);
  }

  /** `lspAgent/session/didEnd`: the turn of a server-started session is over. */
  onSessionEnded(params: SessionDidEndParams): void {
    if (!this.serverTurns.delete(params.sessionId)) return;
    const session = this.sessions.get(params.sessionId) ?? this.closed.get(params.sessionId);
    if (!session?.running) return;
    const result: TurnResult | { error: string } = params.error ? { error: params.error } : { stopReason: params.stopReason };
    endTurn(session, result);
    this.post({ type: 'turnEnded', sessionId: session.id, result });
    this.changed.fire();
  }

  private onPermissionRequested(p: PendingPermission): void {
    const session = this.sessionFor(p.params.sessionId);
    addPermission(session, p.requestId, p.params);
    const origin = decisionOrigin(p.params);
    this.deps.log.info(
      `Permission asked for "${p.params.toolCall.title}": ${p.params.reason || 'no reason given'}${origin ? ` (${describeOrigin(origin, false)})` : ''}` +
        (p.params.suggestedRules?.length ? `; "always" would keep ${p.params.suggestedRules.join(', ')}` : ''),
    );
    this.post({ type: 'permissionRequested', requestId: p.requestId, request: p.params });
    this.deps.setBadge(this.pendingCount());
    this.changed.fire();
    if (!this.deps.panelVisible()) {
      // A notification toast does not take focus; "Show" is the user's explicit request.
      void vscode.window
        .showInformationMessage(`lsp-agent asks: ${p.params.toolCall.title}`, 'Show')
        .then((choice) => (choice === 'Show' ? this.deps.reveal(true) : undefined));
    }
  }

  private onPermissionResolved(r: PermissionResolution): void {
    this.deps.log.info(`Permission ${r.requestId} answered: ${r.state === 'cancelled' ? 'cancelled' : resolvedLabel(r.chosen ?? r.state, r.scope)}`);
    const session = this.sessions.get(r.sessionId);
    if (session) {
      resolvePermission(session, r.requestId, {
        state: r.state,
        ...(r.chosen ? { chosen: r.chosen } : {}),
        ...(r.feedback ? { feedback: r.feedback } : {}),
        ...(r.edited ? { edited: true } : {}),
        ...(r.scope ? { scope: r.scope } : {}),
      });
    }
    this.post({
      type: 'permissionResolved',
      sessionId: r.sessionId,
      requestId: r.requestId,
      state: r.state,
      ...(r.chosen ? { chosen: r.chosen } : {}),
      ...(r.feedback ? { feedback: r.feedback } : {}),
      ...(r.edited ? { edited: true } : {}),
      ...(r.scope ? { scope: r.scope } : {}),
    });
    this.deps.setBadge(this.pendingCount());
    this.changed.fire();
  }

  // ---- turns --------------------------------------------------------------------------------

  /** Send a prompt; resolves when the turn ends (with its result, or undefined on error). */
  async prompt(request: PromptRequest): Promise<TurnResult | undefined> {
    let session: SessionState | undefined;
    try {
      session = request.sessionId ? this.sessions.get(request.sessionId) : this.active;
      session ??= await this.newSession();
    } catch (error) {
      this.notify(undefined, 'error', `Cannot start a chat: ${errorMessage(error)}`);
      return undefined;
    }
    if (session.running) {
      this.notify(session.id, 'warning', 'Wait for the current answer or stop it first.');
      return undefined;
    }
    const selection = request.includeSelection ? this.currentSelectionBlock() : undefined;
    const resolved = await resolvePrompt(
      { text: request.text, mentions: request.mentions, ...(selection ? { selection } : {}) },
      this.mentionIo(),
    );
    const blocks = [...resolved.blocks, ...(request.extraBlocks ?? [])];
    const attachments = [...resolved.attachments, ...(request.extraAttachments ?? [])];
    for (const problem of resolved.problems) {
      this.notify(session.id, 'warning', problem);
    }
    if (blocks.length === 0) return undefined;
    void this.remember(request.text);
    startTurn(session, request.text, attachments);
    this.post({ type: 'turnStarted', sessionId: session.id, text: request.text, attachments });
    this.changed.fire();
    const cts = new vscode.CancellationTokenSource();
    this.turns.set(session.id, cts);
    let result: TurnResult | { error: string };
    try {
      result = await this.deps.client.prompt({ sessionId: session.id, prompt: blocks }, cts.token);
    } catch (error) {
      result = isCancelledError(error) ? { stopReason: 'cancelled' } : { error: errorMessage(error) };
    } finally {
      cts.dispose();
      this.turns.delete(session.id);
    }
    if (!session.running) return 'error' in result ? undefined : result;
    endTurn(session, result);
    this.post({ type: 'turnEnded', sessionId: session.id, result });
    this.changed.fire();
    return 'error' in result ? undefined : result;
  }

  /** "Rewind to here": the server restores code and/or conversation; the panel follows. */
  private async rewind(sessionId: string, messageId: string, restore: RewindRestore): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    if (session.running) {
      this.notify(sessionId, 'warning', 'Stop the running answer before rewinding.');
      return;
    }
    let result: RewindResult;
    try {
      result = await this.deps.client.rewind(sessionId, messageId, restore);
    } catch (error) {
      this.notify(sessionId, 'error', `Rewind failed: ${errorMessage(error)}`);
      return;
    }
    const summary = applyRewind(session, messageId, result);
    this.post({ type: 'snapshot', snapshot: this.snapshot() });
    const conflicts = result.conflicts ?? [];
    this.notify(sessionId, result.failure || conflicts.length > 0 ? 'warning' : 'info', summary);
    if (result.conversation) this.post({ type: 'focusPrompt', text: result.prompt });
    const first = conflicts[0];
    if (first) await openLocation(first.uri);
    this.changed.fire();
  }

  /** Stop the running turn: `lspAgent/session/cancel`, then `$/cancelRequest` if the server is slow. */
  async cancel(sessionId?: string): Promise<void> {
    const id = sessionId ?? this.activeSessionId;
    if (!id) return;
    const cts = this.turns.get(id);
    if (!cts) {
      // A turn the server started (agent command) has no request of ours to cancel.
      if (!this.serverTurns.has(id)) return;
      this.deps.broker.cancelSession(id);
      try {
        await this.deps.client.cancel(id);
      } catch (error) {
        this.deps.log.warn(`cancel: ${errorMessage(error)}`);
      }
      return;
    }
    this.deps.broker.cancelSession(id);
    try {
      await this.deps.client.cancel(id);
    } catch (error) {
      this.deps.log.warn(`cancel: ${errorMessage(error)}`);
      cts.cancel();
      return;
    }
    const timer = setTimeout(() => {
      if (this.turns.get(id) === cts) cts.cancel();
    }, CANCEL_GRACE_MS);
    timer.unref?.();
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    try {
      await this.deps.client.setMode(sessionId, modeId);
      applyUpdate(session, { sessionUpdate: 'current_mode_update', currentModeId: modeId });
      this.post({ type: 'sessionUpdate', sessionId, update: { sessionUpdate: 'current_mode_update', currentModeId: modeId } });
      this.changed.fire();
    } catch (error) {
      this.notify(sessionId, 'error', `Could not switch mode: ${errorMessage(error)}`);
      // Put the picker back to the mode the server has.
      this.post({ type: 'sessionUpdate', sessionId, update: { sessionUpdate: 'current_mode_update', currentModeId: session.modeId } });
    }
  }

  private failRunningTurns(reason: string): void {
    this.serverTurns.clear();
    for (const session of this.sessions.values()) {
      if (!session.running) continue;
      this.turns.get(session.id)?.cancel();
      endTurn(session, { error: reason });
      this.post({ type: 'turnEnded', sessionId: session.id, result: { error: reason } });
    }
  }

  // ---- editor context -----------------------------------------------------------------------

  /** Track the editor selection offered as an attachment in the panel. */
  updateSelection(editor: vscode.TextEditor | undefined): void {
    const next = selectionInfo(editor);
    if (JSON.stringify(next) === JSON.stringify(this.selection)) return;
    this.selection = next;
    this.post({ type: 'selection', ...(next ? { selection: next } : {}) });
  }

  /** The active editor's selection as a resource block input, if any. */
  currentSelectionBlock(editor = vscode.window.activeTextEditor): SelectionBlockInput | undefined {
    return selectionBlock(editor);
  }

  mentionIo(): MentionIo {
    return workspaceMentionIo();
  }

  async mentionCandidates(query: string): Promise<MentionCandidate[]> {
    return this.mentions.candidates(query);
  }

  // ---- messages from the panel --------------------------------------------------------------

  async handle(message: ToHost): Promise<void> {
    try {
      await this.dispatch(message);
    } catch (error) {
      this.deps.log.error(`Chat view action ${message.type} failed: ${errorMessage(error)}`);
      this.notify(this.activeSessionId, 'error', errorMessage(error));
    }
  }

  private async dispatch(message: ToHost): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.post({ type: 'snapshot', snapshot: this.snapshot() });
        this.forms.replay();
        this.deps.setBadge(this.pendingCount());
        if (this.deps.client.status.phase === 'stopped') void this.deps.client.start();
        return;
      case 'mcpFormAnswer':
        this.forms.answer(message.formId, message.action, message.content);
        return;
      case 'newSession':
        await this.newSession();
        return;
      case 'activateSession':
        if (!this.sessions.has(message.sessionId) && !this.closed.has(message.sessionId)) {
          // A session of the server this window never showed: a tab that fills with its
          // replayed history (when the server can load sessions) and with new updates.
          this.sessionFor(message.sessionId);
          this.activate(message.sessionId);
          await this.resume(message.sessionId);
          return;
        }
        this.activate(message.sessionId);
        return;
      case 'closeSession':
        await this.closeSession(message.sessionId);
        return;
      case 'prompt':
        await this.prompt({
          ...(message.sessionId ? { sessionId: message.sessionId } : {}),
          text: message.text,
          mentions: message.mentions,
          includeSelection: message.includeSelection,
        });
        return;
      case 'cancel':
        await this.cancel(message.sessionId);
        return;
      case 'setMode':
        await this.setMode(message.sessionId, message.modeId);
        return;
      case 'permission':
        this.deps.broker.answer(message.requestId, message.optionId, {
          ...(message.feedback ? { feedback: message.feedback } : {}),
          ...(message.scope ? { scope: message.scope } : {}),
        });
        return;
      case 'review':
        await this.deps.review.open(message.requestId);
        return;
      case 'mentionQuery':
        this.post({ type: 'mentionResults', query: message.query, items: await this.mentionCandidates(message.query) });
        return;
      case 'copy':
        await vscode.env.clipboard.writeText(message.text);
        void vscode.window.setStatusBarMessage('$(check) Copied', 2000);
        return;
      case 'insert':
        await insertIntoEditor(message.text);
        return;
      case 'openLocation':
        await openLocation(message.uri, message.line);
        return;
      case 'openLink':
        await openLink(message.href);
        return;
      case 'runAction':
        await this.deps.runAction(message.id);
        return;
      case 'listSessions':
        this.post({ type: 'sessionList', sessions: await this.listSessions() });
        return;
      case 'mcpAction':
        await this.mcpAction(message.action, message.name);
        return;
      case 'rewind':
        await this.rewind(message.sessionId, message.messageId, message.restore);
        return;
    }
  }

  /** Pending permission questions in the active session (for the status bar). */
  activePending(): number {
    const active = this.active;
    return active ? pendingPermissions(active).length : 0;
  }

  dispose(): void {
    for (const cts of this.turns.values()) cts.cancel();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

/** `$/cancelRequest` answered with RequestCancelled (-32800), or VS Code's CancellationError. */
export function isCancelledError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; name?: unknown };
  return e.code === -32800 || e.name === 'Canceled' || e.name === 'CancellationError';
}

/**
 * The chat controller: sessions, turns and the glue between the server (AgentClient), the
 * chat panel, the permission broker and the review diff.
 *
 * It keeps the authoritative chat state (the same reducer the webview runs), forwards every
 * server update to the panel, and never moves keyboard focus unless a user action asked for it.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage, SessionLoadUnsupportedError, type AgentClient } from './server/agentClient';
import type { PermissionBroker, PendingPermission, PermissionResolution } from './permissions/broker';
import { decisionOrigin, describeOrigin, resolvedLabel } from './shared/permissionPrompt';
import { rankPaths, resolvePrompt, type MentionIo, type SelectionBlockInput } from './prompt/mentions';
import type { ReviewController } from './review/reviewController';
import type { MentionCandidate, PanelSnapshot, RewindRestore, SelectionInfo, SessionSummary, ToHost, ToWebview } from './shared/messages';
import { applyRewind } from './rewind';
import { McpForms } from './mcpForms';
import type { ContentBlock, McpAction, McpElicitParams, McpElicitResult, McpServerInfo, McpServersResult, RewindResult, TurnResult, ModeId, SessionDidEndParams, SessionDidStartParams, SessionUpdateParams } from './shared/protocol';
import {
  addNotice,
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

const HISTORY_KEY = 'lspAgent.promptHistory';
const HISTORY_LIMIT = 100;
/** The window's open tabs (session ids) and the active one, reopened after a window reload. */
const TABS_KEY = 'lspAgent.openSessions';
/** After asking the server to cancel, wait this long before also cancelling the request (ms). */
const CANCEL_GRACE_MS = 5000;
const FILE_INDEX_TTL_MS = 10_000;
const FILE_INDEX_LIMIT = 20_000;
const MENTION_EXCLUDE = '**/{node_modules,.git,.venv,venv,__pycache__,dist,out,build,.mypy_cache,.ruff_cache}/**';

export interface ControllerDeps {
  client: AgentClient;
  broker: PermissionBroker;
  review: ReviewController;
  post(message: ToWebview): void;
  reveal(focus: boolean): Promise<void>;
  panelVisible(): boolean;
  setBadge(count: number): void;
  memento: vscode.Memento;
  log: vscode.LogOutputChannel;
  defaultMode(): ModeId;
  /** The mode the user chose in the settings, if they did (new sessions then name it). */
  chosenMode?(): ModeId | undefined;
  runAction(id: string): Promise<void>;
}

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

export class ChatController implements vscode.Disposable {
  private readonly sessions = new Map<string, SessionState>();
  /**
   * Tabs the user closed whose session the server could not release (it was not running):
   * they are shown again if the server still talks about them.
   */
  private readonly closed = new Map<string, SessionState>();
  private activeSessionId: string | undefined;
  private readonly turns = new Map<string, vscode.CancellationTokenSource>();
  /** Sessions running a turn the server started itself (an agent command), until `didEnd`. */
  private readonly serverTurns = new Set<string>();
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];
  private selection: SelectionInfo | undefined;
  private fileIndex: { at: number; paths: Map<string, string> } | undefined;
  private creating: Promise<SessionState> | undefined;
  private mcpServers: McpServerInfo[] = [];

  /** Fires when anything shown in the status bar may have changed. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly deps: ControllerDeps) {
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

  // ---- state access -------------------------------------------------------------------------

  get active(): SessionState | undefined {
    return this.activeSessionId ? this.sessions.get(this.activeSessionId) : undefined;
  }

  session(id: string): SessionState | undefined {
    return this.sessions.get(id);
  }

  get allSessions(): SessionState[] {
    return [...this.sessions.values()];
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

  private post(message: ToWebview): void {
    this.deps.post(message);
    if (message.type === 'sessionAdded' || message.type === 'sessionClosed' || message.type === 'sessionActivated') {
      if (this.restored) void this.deps.memento.update(TABS_KEY, { open: [...this.sessions.keys()], active: this.activeSessionId });
    }
  }

  private restored = false;

  /**
   * After a window reload (a new server): reopen the tabs the window had, each filled with the
   * history the server replays (`lspAgent/session/load`), and activate the one that was active.
   * A tab whose session cannot be loaded (never prompted, deleted) is dropped quietly.
   */
  private async restoreTabs(): Promise<void> {
    if (this.restored) return;
    const saved = this.deps.memento.get<{ open?: string[]; active?: string }>(TABS_KEY);
    if (!saved?.open?.length || this.deps.client.capabilities?.loadSession !== true) {
      this.restored = true;
      return;
    }
    for (const id of saved.open) {
      if (this.sessions.has(id)) continue;
      try {
        this.sessionFor(id);
        await this.deps.client.loadSession({ sessionId: id, ...this.cwdParam() });
      } catch (error) {
        this.deps.log.info(`Not reopening session ${id}: ${errorMessage(error)}`);
        this.sessions.delete(id);
        if (this.activeSessionId === id) this.activeSessionId = undefined;
        this.post({ type: 'sessionClosed', sessionId: id });
      }
    }
    this.restored = true;
    const active = saved.active && this.sessions.has(saved.active) ? saved.active : [...this.sessions.keys()][0];
    if (active) this.activate(active);
  }

  private cwdParam(): { cwd?: string } {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return cwd ? { cwd } : {};
  }

  /** Show a notice in a session's transcript (kept in the host state too, so snapshots have it). */
  private notify(sessionId: string | undefined, level: 'info' | 'warning' | 'error', text: string): void {
    const session = sessionId ? this.sessions.get(sessionId) : undefined;
    if (session) addNotice(session, level, text);
    this.post({ type: 'notice', ...(session ? { sessionId: session.id } : {}), level, text });
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

  // ---- sessions -----------------------------------------------------------------------------

  /** Create a session on the server and make it the active tab. */
  private chosenMode(): ModeId | undefined {
    return this.deps.chosenMode ? this.deps.chosenMode() : this.deps.defaultMode();
  }

  async newSession(): Promise<SessionState> {
    if (this.creating) return this.creating;
    this.creating = this.createSession().finally(() => {
      this.creating = undefined;
    });
    return this.creating;
  }

  private async createSession(): Promise<SessionState> {
    await this.deps.client.start();
    const folders = vscode.workspace.workspaceFolders?.map((f) => f.uri.fsPath) ?? [];
    const result = await this.deps.client.newSession({
      ...(folders[0] ? { cwd: folders[0] } : {}),
      ...(folders.length > 1 ? { additionalDirectories: folders.slice(1) } : {}),
      ...(this.chosenMode() ? { mode: this.chosenMode() } : {}),
    });
    const session = createSession({
      id: result.sessionId,
      ...(folders[0] ? { cwd: folders[0] } : {}),
      ...(result.modes ? { modeId: result.modes.currentModeId, availableModes: result.modes.availableModes } : { modeId: this.deps.defaultMode() }),
      ...(result.availableCommands ? { commands: result.availableCommands } : {}),
    });
    this.sessions.set(session.id, session);
    this.activeSessionId = session.id;
    this.post({ type: 'sessionAdded', session, activate: true });
    this.changed.fire();
    return session;
  }

  activate(sessionId: string): void {
    const reopened = this.closed.get(sessionId);
    if (reopened) {
      this.closed.delete(sessionId);
      this.sessions.set(sessionId, reopened);
      this.post({ type: 'sessionAdded', session: reopened, activate: true });
    }
    if (!this.sessions.has(sessionId)) return;
    this.activeSessionId = sessionId;
    this.post({ type: 'sessionActivated', sessionId });
    this.changed.fire();
  }

  /**
   * Close a tab: a running turn is cancelled first, then the server releases the session
   * (`lspAgent/session/close`). If the server cannot be reached the tab is kept aside and shown
   * again should the session speak.
   */
  async closeSession(sessionId: string): Promise<void> {
    if (this.sessions.get(sessionId)?.running) await this.cancel(sessionId);
    const session = this.sessions.get(sessionId);
    let released = false;
    try {
      await this.deps.client.closeSession(sessionId);
      released = true;
    } catch (error) {
      this.deps.log.warn(`close session ${sessionId}: ${errorMessage(error)}`);
    }
    if (session && !released) this.closed.set(sessionId, session);
    this.sessions.delete(sessionId);
    if (this.activeSessionId === sessionId) this.activeSessionId = [...this.sessions.keys()].pop();
    this.post({ type: 'sessionClosed', sessionId });
    if (this.activeSessionId) this.post({ type: 'sessionActivated', sessionId: this.activeSessionId });
    this.changed.fire();
  }

  /** The server's sessions with what this window knows of them, open tabs first. */
  async listSessions(): Promise<SessionSummary[]> {
    const known = (id: string): SessionState | undefined => this.sessions.get(id) ?? this.closed.get(id);
    const { sessions } = await this.deps.client.listSessions(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
    const rows = sessions.map((s) => ({
      sessionId: s.sessionId,
      title: known(s.sessionId)?.title ?? s.title ?? `Session ${s.sessionId.slice(0, 8)}`,
      ...(s.cwd ? { cwd: s.cwd } : {}),
      busy: s.busy === true,
      open: this.sessions.has(s.sessionId),
      ...(s.backgroundRun ? { backgroundRun: s.backgroundRun } : {}),
    }));
    return rows.sort((a, b) => Number(b.open) - Number(a.open));
  }

  /**
   * Replay a session's history into its tab (`lspAgent/session/load`). The client sends it only
   * when the server advertises `loadSession`; otherwise the tab says why it starts empty.
   */
  private async resume(sessionId: string): Promise<void> {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    try {
      await this.deps.client.loadSession({ sessionId, ...(cwd ? { cwd } : {}) });
    } catch (error) {
      const unsupported = error instanceof SessionLoadUnsupportedError;
      this.notify(sessionId, unsupported ? 'info' : 'error', unsupported ? errorMessage(error) : `Could not resume the session: ${errorMessage(error)}`);
    }
  }

  private sessionFor(sessionId: string): SessionState {
    let session = this.sessions.get(sessionId);
    const reopened = session ? undefined : this.closed.get(sessionId);
    if (reopened) {
      // The agent is still talking in a closed tab (a late update): show it again.
      this.closed.delete(sessionId);
      this.sessions.set(sessionId, reopened);
      this.post({ type: 'sessionAdded', session: reopened, activate: false });
      return reopened;
    }
    if (!session) {
      // An update for a session this window did not create (another client, or a reload).
      session = createSession({ id: sessionId, title: 'Session' });
      this.sessions.set(sessionId, session);
      this.post({ type: 'sessionAdded', session, activate: this.activeSessionId === undefined });
      this.activeSessionId ??= sessionId;
    }
    return session;
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
    if (first) await this.openLocation(first.uri);
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
    let next: SelectionInfo | undefined;
    if (editor && (editor.document.uri.scheme === 'file' || editor.document.uri.scheme === 'untitled') && !editor.selection.isEmpty) {
      const s = editor.selection;
      const endLine = s.end.character === 0 && s.end.line > s.start.line ? s.end.line : s.end.line + 1;
      next = {
        uri: editor.document.uri.toString(),
        label: `${path.basename(editor.document.uri.fsPath || editor.document.uri.path)}:${s.start.line + 1}-${endLine}`,
        startLine: s.start.line + 1,
        endLine,
      };
    }
    if (JSON.stringify(next) === JSON.stringify(this.selection)) return;
    this.selection = next;
    this.post({ type: 'selection', ...(next ? { selection: next } : {}) });
  }

  /** The active editor's selection as a resource block input, if any. */
  currentSelectionBlock(editor = vscode.window.activeTextEditor): SelectionBlockInput | undefined {
    if (!editor || editor.selection.isEmpty) return undefined;
    const s = editor.selection;
    const doc = editor.document;
    return {
      uri: doc.uri.toString(),
      label: `${path.basename(doc.uri.fsPath || doc.uri.path)}:${s.start.line + 1}-${s.end.line + 1}`,
      text: doc.getText(s),
      range: {
        start: { line: s.start.line, character: s.start.character },
        end: { line: s.end.line, character: s.end.character },
      },
    };
  }

  mentionIo(): MentionIo {
    return {
      openDocumentText: (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.getText(),
      readFile: async (uri) => vscode.workspace.fs.readFile(vscode.Uri.parse(uri)),
      resolvePath: async (p) => {
        const candidates: vscode.Uri[] = path.isAbsolute(p)
          ? [vscode.Uri.file(p)]
          : (vscode.workspace.workspaceFolders ?? []).map((f) => vscode.Uri.joinPath(f.uri, p));
        for (const uri of candidates) {
          try {
            const stat = await vscode.workspace.fs.stat(uri);
            if (stat.type === vscode.FileType.File) return uri.toString();
          } catch {
            // Not in this folder.
          }
        }
        return undefined;
      },
    };
  }

  private async files(): Promise<Map<string, string>> {
    const now = Date.now();
    if (this.fileIndex && now - this.fileIndex.at < FILE_INDEX_TTL_MS) return this.fileIndex.paths;
    const uris = await vscode.workspace.findFiles('**/*', MENTION_EXCLUDE, FILE_INDEX_LIMIT);
    const paths = new Map<string, string>();
    for (const uri of uris) paths.set(vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1), uri.toString());
    this.fileIndex = { at: now, paths };
    return paths;
  }

  async mentionCandidates(query: string): Promise<MentionCandidate[]> {
    // `@server:` completes the resources of an MCP server (the server matches them).
    if (query.includes(':')) return this.resourceCandidates(query);
    const files = await this.files();
    return rankPaths(query, [...files.keys()]).map((label) => {
      const dir = path.posix.dirname(label);
      return { uri: files.get(label) as string, label, ...(dir !== '.' ? { description: dir } : {}) };
    });
  }

  private async resourceCandidates(query: string): Promise<MentionCandidate[]> {
    if (this.deps.client.status.phase !== 'running') return [];
    try {
      const { items } = await this.deps.client.mcpResources(query);
      return items.map((item) => ({ uri: item.uri, label: item.label, description: item.description ?? item.name, kind: 'mcp' }));
    } catch (error) {
      this.deps.log.warn(`MCP resource completion failed: ${errorMessage(error)}`);
      return [];
    }
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
        await this.insertIntoEditor(message.text);
        return;
      case 'openLocation':
        await this.openLocation(message.uri, message.line);
        return;
      case 'openLink':
        await this.openLink(message.href);
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

  private async insertIntoEditor(text: string): Promise<void> {
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!editor) {
      void vscode.window.showWarningMessage('Open a file to insert the code into.');
      return;
    }
    await editor.edit((edit) => {
      for (const selection of editor.selections) edit.replace(selection, text);
    });
  }

  private async openLocation(uri: string, line?: number): Promise<void> {
    const target = /^[a-z][a-z0-9+.-]*:/i.test(uri) ? vscode.Uri.parse(uri) : vscode.Uri.file(uri);
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(target, { preview: true, selection: new vscode.Range(position, position) });
  }

  private async openLink(href: string): Promise<void> {
    if (/^(https?|mailto):/i.test(href)) {
      await vscode.env.openExternal(vscode.Uri.parse(href));
      return;
    }
    const [file, fragment] = href.split('#');
    const lineMatch = /^L?(\d+)/.exec(fragment ?? '');
    const line = lineMatch ? Number(lineMatch[1]) : undefined;
    if (!file) return;
    if (file.startsWith('file:') || path.isAbsolute(file)) {
      await this.openLocation(file, line);
      return;
    }
    const resolved = await this.mentionIo().resolvePath(decodeURIComponent(file));
    if (resolved) await this.openLocation(resolved, line);
    else void vscode.window.showWarningMessage(`No file ${file} in the workspace.`);
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

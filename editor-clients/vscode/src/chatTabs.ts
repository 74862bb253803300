/**
 * The chat tabs of the window: the sessions it shows (created here, started by the server, or
 * opened from the list of the server's sessions), the active one, the tabs closed but kept
 * aside, and the open tabs remembered across window reloads. The chat controller (controller.ts)
 * adds turns, permissions and the panel's messages on top.
 */

import * as vscode from 'vscode';
import type { PermissionBroker } from './permissions/broker';
import type { ReviewController } from './review/reviewController';
import { errorMessage, SessionLoadUnsupportedError, type AgentClient } from './server/agentClient';
import type { SessionSummary, ToWebview } from './shared/messages';
import type { ModeId } from './shared/protocol';
import { addNotice, createSession, type SessionState } from './shared/state';

/** The window's open tabs (session ids) and the active one, reopened after a window reload. */
const TABS_KEY = 'lspAgent.openSessions';

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

export abstract class ChatTabs {
  protected readonly sessions = new Map<string, SessionState>();
  /**
   * Tabs the user closed whose session the server could not release (it was not running):
   * they are shown again if the server still talks about them.
   */
  protected readonly closed = new Map<string, SessionState>();
  protected activeSessionId: string | undefined;
  protected readonly changed = new vscode.EventEmitter<void>();
  private creating: Promise<SessionState> | undefined;

  /** Fires when anything shown in the status bar may have changed. */
  readonly onDidChange = this.changed.event;

  constructor(protected readonly deps: ControllerDeps) {}

  /** Stop the session's running turn (the controller's turns). */
  abstract cancel(sessionId?: string): Promise<void>;

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

  protected post(message: ToWebview): void {
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
  protected async restoreTabs(): Promise<void> {
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
  protected notify(sessionId: string | undefined, level: 'info' | 'warning' | 'error', text: string): void {
    const session = sessionId ? this.sessions.get(sessionId) : undefined;
    if (session) addNotice(session, level, text);
    this.post({ type: 'notice', ...(session ? { sessionId: session.id } : {}), level, text });
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
  protected async resume(sessionId: string): Promise<void> {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    try {
      await this.deps.client.loadSession({ sessionId, ...(cwd ? { cwd } : {}) });
    } catch (error) {
      const unsupported = error instanceof SessionLoadUnsupportedError;
      this.notify(sessionId, unsupported ? 'info' : 'error', unsupported ? errorMessage(error) : `Could not resume the session: ${errorMessage(error)}`);
    }
  }

  protected sessionFor(sessionId: string): SessionState {
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
}

/**
 * The one language client of a window: starts `lsp-agent serve` for all workspace folders,
 * checks the version handshake, restarts a crashed server with backoff, and gives the rest of
 * the extension typed lspAgent/* calls and events.
 */

import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import type { HostAction, RewindRestore, ServerStatus } from '../shared/messages';
import {
  MethodCapabilities,
  Methods,
  type DiagnosticsDidChangeParams,
  type DidChangeFilesParams,
  type McpAction,
  type McpElicitParams,
  type McpElicitResult,
  type McpResourcesResult,
  type McpServersResult,
  type NewSessionParams,
  type NewSessionResult,
  type PromptParams,
  type PromptResult,
  type RequestPermissionParams,
  type RequestPermissionResult,
  type SaveDocumentsParams,
  type SaveDocumentsResult,
  type ServerAgentCapabilities,
  type SessionDidEndParams,
  type SessionDidStartParams,
  type ListSessionsResult,
  type ListCheckpointsResult,
  type RewindResult,
  type LoadSessionParams,
  type LoadSessionResult,
  type SessionUpdateParams,
} from '../shared/protocol';
import { RestartPolicy } from './backoff';
import type { ServerCommand, LocateResult } from './locate';
import { checkHandshake } from './version';

/** What the wrapper needs from a vscode-languageclient `LanguageClient` (a seam for tests). */
export interface LanguageClientLike {
  readonly state: State;
  readonly initializeResult: { capabilities: { experimental?: unknown }; serverInfo?: { name: string; version?: string } } | undefined;
  start(): Promise<void>;
  stop(timeout?: number): Promise<void>;
  dispose(timeout?: number): Promise<void>;
  sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R>;
  sendNotification(method: string, params?: unknown): Promise<void>;
  onRequest<P, R>(method: string, handler: (params: P, token: vscode.CancellationToken) => Promise<R>): { dispose(): void };
  onNotification<P>(method: string, handler: (params: P) => void): { dispose(): void };
}

export type ClientFactory = (
  id: string,
  name: string,
  serverOptions: ServerOptions,
  clientOptions: LanguageClientOptions,
) => LanguageClientLike;

/** Handlers for what the server asks of the editor. */
export interface AgentHandlers {
  onUpdate(params: SessionUpdateParams): void;
  /** The server started a turn by itself (an agent command such as a "Fix with agent" code action). */
  sessionDidStart(params: SessionDidStartParams): void;
  /** A turn the server started by itself ended. */
  sessionDidEnd(params: SessionDidEndParams): void;
  /**
   * Called before a server command runs (`workspace/executeCommand`, e.g. a code action the
   * user picked): resolves with the arguments to send, or `undefined` to not run it.
   */
  commandArguments?(command: string, args: unknown[]): Promise<unknown[] | undefined>;
  requestPermission(params: RequestPermissionParams, token: vscode.CancellationToken): Promise<RequestPermissionResult>;
  saveDocuments(params: SaveDocumentsParams): Promise<SaveDocumentsResult>;
  didChangeFiles(params: DidChangeFilesParams): void;
  /** The MCP servers' state or configuration changed. */
  mcpDidChange?(params: McpServersResult): void;
  /** An MCP server asks the user to fill a form (`lspAgent/mcp/elicit`). */
  mcpElicit?(params: McpElicitParams, token: vscode.CancellationToken): Promise<McpElicitResult>;
}

export interface AgentClientOptions {
  log: vscode.LogOutputChannel;
  handlers: AgentHandlers;
  /** Where the server is, read fresh at every start (settings may have changed). */
  locate(): LocateResult;
  /** `initializationOptions` for the next start. */
  initializationOptions(): unknown;
  /** Extra environment for the server process. */
  env(): Record<string, string>;
  createClient: ClientFactory;
  restartPolicy?: RestartPolicy;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => { dispose(): void };
}

const CLIENT_ID = 'lspAgent';
const CLIENT_NAME = 'lsp-agent';
const STOP_TIMEOUT_MS = 2000;

const ACTIONS = {
  configure: { id: 'configureServer', label: 'Configure server path' },
  install: { id: 'openInstallGuide', label: 'Installation guide' },
  log: { id: 'showLog', label: 'Show log' },
  restart: { id: 'restartServer', label: 'Restart server' },
} satisfies Record<string, HostAction>;

/** Error from a call made while no server runs. */
export class ServerNotRunningError extends Error {
  constructor(status: ServerStatus) {
    super(status.message ?? `The lsp-agent server is not running (${status.phase}).`);
    this.name = 'ServerNotRunningError';
  }
}

/** The server does not advertise `loadSession`: it cannot replay a session's history. */
export class SessionLoadUnsupportedError extends Error {
  constructor(version: string | undefined) {
    super(
      `This lsp-agent server${version ? ` (${version})` : ''} cannot resume sessions: it does not advertise loadSession. ` +
        'Only updates from now on are shown.',
    );
    this.name = 'SessionLoadUnsupportedError';
  }
}

export class AgentClient implements vscode.Disposable {
  private client: LanguageClientLike | undefined;
  private agent: ServerAgentCapabilities | undefined;
  private currentStatus: ServerStatus = { phase: 'stopped' };
  private readonly statusEmitter = new vscode.EventEmitter<ServerStatus>();
  private readonly policy: RestartPolicy;
  private restartTimer: { dispose(): void } | undefined;
  private starting: Promise<void> | undefined;
  private disposed = false;
  private generation = 0;

  /** Fires on every server status change (starting, running, restarting, failed, ...). */
  readonly onDidChangeStatus: vscode.Event<ServerStatus> = this.statusEmitter.event;

  constructor(private readonly options: AgentClientOptions) {
    this.policy = options.restartPolicy ?? new RestartPolicy();
  }

  get status(): ServerStatus {
    return this.currentStatus;
  }

  /** The server's `capabilities.experimental.lspAgent`, once running. */
  get capabilities(): ServerAgentCapabilities | undefined {
    return this.agent;
  }

  /** The underlying language client while one exists (for tests and diagnostics). */
  get languageClient(): LanguageClientLike | undefined {
    return this.client;
  }

  private setStatus(status: ServerStatus): void {
    this.currentStatus = status;
    this.statusEmitter.fire(status);
  }

  /** Start the server (no-op while it runs or starts). Resolves once it runs or has failed. */
  start(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    if (this.starting) return this.starting;
    if (this.client && this.currentStatus.phase === 'running') return Promise.resolve();
    this.starting = this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Stop and start again, forgetting earlier crashes (the user asked for it). */
  async restart(): Promise<void> {
    this.policy.reset();
    this.cancelRestartTimer();
    if (this.starting) await this.starting.catch(() => undefined);
    await this.stopClient();
    await this.start();
  }

  async stop(): Promise<void> {
    this.cancelRestartTimer();
    if (this.starting) await this.starting.catch(() => undefined);
    await this.stopClient();
    this.setStatus({ phase: 'stopped' });
  }

  private cancelRestartTimer(): void {
    this.restartTimer?.dispose();
    this.restartTimer = undefined;
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.agent = undefined;
    this.generation += 1;
    if (client) {
      try {
        if (client.state === State.Running || client.state === State.Starting) {
          await client.stop(STOP_TIMEOUT_MS);
        }
      } catch (error) {
        this.options.log.warn(`Stopping the server failed: ${String(error)}`);
      }
      await client.dispose(STOP_TIMEOUT_MS).catch(() => undefined);
    }
  }

  private async doStart(): Promise<void> {
    const located = this.options.locate();
    if (!located.ok) {
      this.options.log.error(located.message);
      this.setStatus({ phase: 'missing', message: located.message, actions: [ACTIONS.configure, ACTIONS.install, ACTIONS.log] });
      return;
    }
    this.setStatus({ phase: 'starting', message: 'Starting lsp-agent…' });
    const generation = ++this.generation;
    const client = this.createClient(located.server, generation);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      if (generation !== this.generation) return;
      const message = `lsp-agent failed to start (${located.server.command}): ${errorMessage(error)}`;
      this.options.log.error(message);
      await this.stopClient();
      this.scheduleRestart(message);
      return;
    }
    if (generation !== this.generation) return;
    const handshake = checkHandshake(client.initializeResult);
    if (!handshake.ok) {
      this.options.log.error(handshake.message);
      await this.stopClient();
      this.setStatus({
        phase: 'incompatible',
        message: handshake.message,
        ...(handshake.version ? { version: handshake.version } : {}),
        actions: [ACTIONS.configure, ACTIONS.install, ACTIONS.log],
      });
      return;
    }
    this.agent = handshake.agent;
    this.policy.started(this.now());
    this.options.log.info(
      `lsp-agent ${handshake.agent.version} (protocol ${handshake.agent.protocolVersion}) running from ${located.server.source}: ${located.server.command}`,
    );
    this.setStatus({ phase: 'running', version: handshake.agent.version });
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  private scheduleRestart(reason: string): void {
    if (this.disposed) return;
    const delay = this.policy.exited(this.now());
    if (delay === undefined) {
      this.setStatus({
        phase: 'failed',
        message: `${reason} It failed ${this.policy.maxAttempts} times in a row; not restarting it again. See the log.`,
        actions: [ACTIONS.restart, ACTIONS.log, ACTIONS.configure],
      });
      return;
    }
    const seconds = Math.round(delay / 100) / 10;
    this.setStatus({
      phase: 'restarting',
      message: `${reason} Restarting in ${seconds} s (attempt ${this.policy.attempt} of ${this.policy.maxAttempts}).`,
      actions: [ACTIONS.log],
    });
    const setTimer =
      this.options.setTimer ??
      ((fn: () => void, ms: number) => {
        const handle = setTimeout(fn, ms);
        return { dispose: () => clearTimeout(handle) };
      });
    this.cancelRestartTimer();
    this.restartTimer = setTimer(() => {
      this.restartTimer = undefined;
      void this.start();
    }, delay);
  }

  private createClient(server: ServerCommand, generation: number): LanguageClientLike {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      transport: TransportKind.stdio,
      options: {
        env: { ...process.env, ...this.options.env() },
        ...(folder ? { cwd: folder } : {}),
      },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file buffer goes to the server: it edits open buffers, never stale disk text.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.options.log,
      initializationOptions: this.options.initializationOptions(),
      diagnosticCollectionName: CLIENT_NAME,
      markdown: { isTrusted: false, supportHtml: false },
      middleware: {
        executeCommand: async (command, args, next) => {
          const hook = this.options.handlers.commandArguments;
          const final = hook ? await hook(command, args) : args;
          return final === undefined ? undefined : next(command, final);
        },
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          if (generation === this.generation && !this.disposed) {
            this.agent = undefined;
            const client = this.client;
            this.client = undefined;
            void client?.dispose(STOP_TIMEOUT_MS).catch(() => undefined);
            this.scheduleRestart('The lsp-agent server exited unexpectedly.');
          }
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      initializationFailedHandler: (error: unknown) => {
        this.options.log.error(`initialize failed: ${errorMessage(error)}`);
        return false;
      },
    };
    const client = this.options.createClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    const h = this.options.handlers;
    client.onNotification(Methods.sessionUpdate, (params: SessionUpdateParams) => h.onUpdate(params));
    client.onNotification(Methods.sessionDidStart, (params: SessionDidStartParams) => h.sessionDidStart(params));
    client.onNotification(Methods.sessionDidEnd, (params: SessionDidEndParams) => h.sessionDidEnd(params));
    client.onNotification(Methods.workspaceDidChangeFiles, (params: DidChangeFilesParams) => h.didChangeFiles(params));
    client.onNotification(Methods.mcpDidChange, (params: McpServersResult) => h.mcpDidChange?.(params));
    client.onRequest(Methods.sessionRequestPermission, (params: RequestPermissionParams, token) => h.requestPermission(params, token));
    client.onRequest(Methods.workspaceSaveDocuments, (params: SaveDocumentsParams) => h.saveDocuments(params));
    client.onRequest(Methods.mcpElicit, (params: McpElicitParams, token) =>
      h.mcpElicit ? h.mcpElicit(params, token) : Promise.resolve<McpElicitResult>({ action: 'cancel' }),
    );
    return client;
  }

  private running(): LanguageClientLike {
    const client = this.client;
    if (!client || this.currentStatus.phase !== 'running') {
      throw new ServerNotRunningError(this.currentStatus);
    }
    return client;
  }

  async newSession(params: NewSessionParams): Promise<NewSessionResult> {
    return this.running().sendRequest<NewSessionResult>(Methods.sessionNew, params);
  }

  /** Run one turn; cancelling `token` sends `$/cancelRequest` (the server also answers the request). */
  async prompt(params: PromptParams, token?: vscode.CancellationToken): Promise<PromptResult> {
    return this.running().sendRequest<PromptResult>(Methods.sessionPrompt, params, token);
  }

  async cancel(sessionId: string): Promise<void> {
    await this.running().sendNotification(Methods.sessionCancel, { sessionId });
  }

  /**
   * Release a session on the server (`lspAgent/session/close`): its turn is cancelled and
   * everything it holds is freed; its id is unknown afterwards.
   */
  async closeSession(sessionId: string): Promise<void> {
    await this.running().sendRequest<unknown>(Methods.sessionClose, { sessionId });
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    await this.running().sendRequest<unknown>(Methods.sessionSetMode, { sessionId, modeId });
  }

  /**
   * Resume a session (`lspAgent/session/load`): the server replays its history as updates, then
   * answers. Only servers that advertise `loadSession` serve it; with others this throws
   * {@link SessionLoadUnsupportedError} without sending anything.
   */
  async loadSession(params: LoadSessionParams): Promise<LoadSessionResult> {
    const client = this.running();
    const capability = MethodCapabilities[Methods.sessionLoad];
    if (this.agent?.[capability] !== true) throw new SessionLoadUnsupportedError(this.agent?.version);
    return client.sendRequest<LoadSessionResult>(Methods.sessionLoad, params);
  }

  /** The open and saved sessions; with `cwd`, only that folder's. */
  async listSessions(cwd?: string): Promise<ListSessionsResult> {
    return this.running().sendRequest<ListSessionsResult>(Methods.sessionList, cwd ? { cwd } : {});
  }

  /** The session's prompts that can be rewound to, oldest first (`lspAgent/session/checkpoints`). */
  async checkpoints(sessionId: string): Promise<ListCheckpointsResult> {
    return this.running().sendRequest<ListCheckpointsResult>(Methods.sessionCheckpoints, { sessionId });
  }

  /** Go back to before prompt `messageId` (`lspAgent/session/rewind`). */
  async rewind(sessionId: string, messageId: string, restore: RewindRestore): Promise<RewindResult> {
    return this.running().sendRequest<RewindResult>(Methods.sessionRewind, { sessionId, messageId, restore });
  }

  async mcpList(): Promise<McpServersResult> {
    return this.running().sendRequest<McpServersResult>(Methods.mcpList, {});
  }

  /** Resources matching the `@server:uri` mention being typed (`query` is the text after `@`). */
  async mcpResources(query: string): Promise<McpResourcesResult> {
    return this.running().sendRequest<McpResourcesResult>(Methods.mcpResources, { query });
  }

  /**
   * Approve, reject, reconnect, turn on or off (for this project, any scope: kept in the
   * user's ~/.claude.json), log in to or log out of one MCP server (approval covers its
   * current definition). A login is answered once the browser came back: the server opens the
   * authorisation URL with `window/showDocument` `{external: true}` (the language client's
   * handler opens it with `env.openExternal`).
   */
  async mcpAct(action: McpAction, name: string): Promise<McpServersResult> {
    if (action === 'reconnect') return this.running().sendRequest<McpServersResult>(Methods.mcpReconnect, { name });
    if (action === 'login') return this.running().sendRequest<McpServersResult>(Methods.mcpLogin, { name });
    if (action === 'logout') return this.running().sendRequest<McpServersResult>(Methods.mcpLogout, { name });
    if (action === 'enable' || action === 'disable') {
      return this.running().sendRequest<McpServersResult>(Methods.mcpSetEnabled, { name, enabled: action === 'enable' });
    }
    return this.running().sendRequest<McpServersResult>(Methods.mcpApprove, { name, approved: action === 'approve' });
  }

  /**
   * Tell the running server the workspace's trust changed (`workspace/didChangeConfiguration`
   * with `settings.lspAgent.trusted`, docs/protocol.md §12.2): its memory files, settings and
   * MCP servers follow from the next turn, without a restart. Returns false when no server runs
   * (the next start passes the trust in `initializationOptions` anyway).
   */
  async setTrusted(trusted: boolean): Promise<boolean> {
    if (!this.client || this.currentStatus.phase !== 'running') return false;
    await this.client.sendNotification('workspace/didChangeConfiguration', { settings: { lspAgent: { trusted } } });
    return true;
  }

  /**
   * Tell the running server the user's `lspAgent.mcpServers` changed
   * (`workspace/didChangeConfiguration` with `settings.lspAgent.mcpServers`, docs/mcp.md): it
   * starts, stops and restarts servers at once. Returns false when no server runs (the next
   * start passes them in `initializationOptions`).
   */
  async setMcpServers(servers: Record<string, unknown> | undefined): Promise<boolean> {
    if (!this.client || this.currentStatus.phase !== 'running') return false;
    await this.client.sendNotification('workspace/didChangeConfiguration', { settings: { lspAgent: { mcpServers: servers ?? null } } });
    return true;
  }

  /** Send bridged diagnostics; silently dropped while no server runs (they are re-sent on change). */
  async sendDiagnostics(params: DiagnosticsDidChangeParams): Promise<void> {
    if (!this.client || this.currentStatus.phase !== 'running') return;
    await this.client.sendNotification(Methods.diagnosticsDidChange, params);
  }

  dispose(): void {
    this.disposed = true;
    this.cancelRestartTimer();
    void this.stopClient();
    this.statusEmitter.dispose();
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) {
    return String((error as { message: unknown }).message);
  }
  return String(error);
}

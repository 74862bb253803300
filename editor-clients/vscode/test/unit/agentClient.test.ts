import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { State } from 'vscode-languageclient/node';
import type { LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { AgentClient, ServerNotRunningError, SessionLoadUnsupportedError, type LanguageClientLike } from '../../src/server/agentClient';
import { RestartPolicy } from '../../src/server/backoff';
import type { LocateResult } from '../../src/server/locate';
import type { ServerStatus } from '../../src/shared/messages';
import { fake } from '../fake-vscode/index';

type Handler = (params: unknown, token?: unknown) => unknown;

class FakeClient implements LanguageClientLike {
  state = State.Stopped;
  initializeResult: LanguageClientLike['initializeResult'];
  requests: [string, unknown][] = [];
  notifications: [string, unknown][] = [];
  handlers = new Map<string, Handler>();
  stopped = 0;
  constructor(
    readonly serverOptions: ServerOptions,
    readonly clientOptions: LanguageClientOptions,
    private readonly behaviour: { fail?: string; experimental?: unknown },
  ) {}
  async start(): Promise<void> {
    if (this.behaviour.fail) throw new Error(this.behaviour.fail);
    this.state = State.Running;
    this.initializeResult = { capabilities: { experimental: this.behaviour.experimental }, serverInfo: { name: 'lsp-agent', version: '0.1.0' } };
  }
  async stop(): Promise<void> {
    this.stopped += 1;
    this.state = State.Stopped;
  }
  async dispose(): Promise<void> {
    this.state = State.Stopped;
  }
  async sendRequest<R>(method: string, params: unknown): Promise<R> {
    this.requests.push([method, params]);
    return { sessionId: 's1' } as R;
  }
  async sendNotification(method: string, params?: unknown): Promise<void> {
    this.notifications.push([method, params]);
  }
  onRequest<P, R>(method: string, handler: (params: P, token: never) => Promise<R>) {
    this.handlers.set(method, handler as Handler);
    return { dispose: () => undefined };
  }
  onNotification<P>(method: string, handler: (params: P) => void) {
    this.handlers.set(method, handler as Handler);
    return { dispose: () => undefined };
  }
  /** Simulate the server process dying. */
  crash(): void {
    void this.clientOptions.errorHandler?.closed();
  }
}

const GOOD = { lspAgent: { version: '0.1.0', protocolVersion: 1 } };

function make(options: { locate?: LocateResult; behaviours?: { fail?: string; experimental?: unknown }[] } = {}) {
  const clients: FakeClient[] = [];
  const timers: { fn: () => void; ms: number; disposed: boolean }[] = [];
  const statuses: ServerStatus[] = [];
  const behaviours = options.behaviours ?? [{ experimental: GOOD }];
  const log = fake.outputLines;
  const client = new AgentClient({
    log: { info: (m: string) => log.push(m), warn: (m: string) => log.push(m), error: (m: string) => log.push(m) } as never,
    handlers: {
      onUpdate: () => undefined,
      sessionDidStart: () => undefined,
      sessionDidEnd: () => undefined,
      requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }),
      saveDocuments: async () => ({ saved: [] }),
      didChangeFiles: () => undefined,
    },
    locate: () => options.locate ?? { ok: true, server: { command: '/bin/lsp-agent', args: ['serve'], source: 'PATH' } },
    initializationOptions: () => ({ lspAgent: { trusted: true } }),
    env: () => ({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }),
    createClient: (_id, _name, serverOptions, clientOptions) => {
      const c = new FakeClient(serverOptions, clientOptions, behaviours[Math.min(clients.length, behaviours.length - 1)] ?? {});
      clients.push(c);
      return c;
    },
    restartPolicy: new RestartPolicy({ baseDelayMs: 1000, maxDelayMs: 8000, maxAttempts: 2, stableMs: 60_000 }),
    now: () => 0,
    setTimer: (fn, ms) => {
      const t = { fn, ms, disposed: false };
      timers.push(t);
      return { dispose: () => (t.disposed = true) };
    },
  });
  client.onDidChangeStatus((s) => statuses.push(s));
  return { client, clients, timers, statuses };
}

beforeEach(() => fake.reset());

describe('AgentClient', () => {
  it('starts the server with the settings, registers the protocol handlers, and reports running', async () => {
    const t = make();
    await t.client.start();
    const c = t.clients[0];
    assert.ok(c);
    assert.deepEqual(t.statuses.map((s) => s.phase), ['starting', 'running']);
    assert.equal(t.client.capabilities?.version, '0.1.0');
    const so = c.serverOptions as { command: string; args: string[]; options: { env: Record<string, string> } };
    assert.equal(so.command, '/bin/lsp-agent');
    assert.deepEqual(so.args, ['serve']);
    assert.equal(so.options.env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:9');
    assert.deepEqual(c.clientOptions.initializationOptions, { lspAgent: { trusted: true } });
    assert.deepEqual(c.clientOptions.documentSelector, [{ scheme: 'file' }, { scheme: 'untitled' }]);
    assert.deepEqual([...c.handlers.keys()].sort(), [
      'lspAgent/mcp/didChange',
      'lspAgent/mcp/elicit',
      'lspAgent/session/didEnd',
      'lspAgent/session/didStart',
      'lspAgent/session/requestPermission',
      'lspAgent/session/update',
      'lspAgent/workspace/didChangeFiles',
      'lspAgent/workspace/saveDocuments',
    ]);
    await t.client.newSession({ cwd: '/w' });
    await t.client.cancel('s1');
    await t.client.sendDiagnostics({ uri: 'file:///a', version: 1, diagnostics: [] });
    assert.deepEqual(c.requests, [['lspAgent/session/new', { cwd: '/w' }]]);
    assert.deepEqual(c.notifications.map(([m]) => m), ['lspAgent/session/cancel', 'lspAgent/diagnostics/didChange']);
  });

  it("sends the editor's mcpServers to a running server, and cancels a form nobody can show", async () => {
    const t = make();
    assert.equal(await t.client.setMcpServers({ ed: { command: 'ed-server' } }), false, 'no server yet');
    await t.client.start();
    const c = t.clients[0];
    assert.ok(c);
    assert.equal(await t.client.setMcpServers({ ed: { command: 'ed-server', args: ['--stdio'] } }), true);
    await t.client.setMcpServers(undefined);
    assert.deepEqual(c.notifications, [
      ['workspace/didChangeConfiguration', { settings: { lspAgent: { mcpServers: { ed: { command: 'ed-server', args: ['--stdio'] } } } } }],
      // Removing the setting removes the servers (null, not a missing key, which changes nothing).
      ['workspace/didChangeConfiguration', { settings: { lspAgent: { mcpServers: null } } }],
    ]);
    const elicit = c.handlers.get('lspAgent/mcp/elicit');
    assert.ok(elicit);
    assert.deepEqual(await elicit({ server: 'ed', message: 'Who?', requestedSchema: {} }), { action: 'cancel' });
  });

  it('sends lspAgent/session/load only to a server that advertises loadSession', async () => {
    const without = make();
    await without.client.start();
    assert.equal(without.client.capabilities?.loadSession, false);
    await assert.rejects(without.client.loadSession({ sessionId: 's9' }), (e: unknown) => {
      assert.ok(e instanceof SessionLoadUnsupportedError);
      assert.match(e.message, /cannot resume sessions: it does not advertise loadSession/);
      return true;
    });
    assert.deepEqual(without.clients[0]?.requests, []);
    const withLoad = make({ behaviours: [{ experimental: { lspAgent: { ...GOOD.lspAgent, loadSession: true } } }] });
    await withLoad.client.start();
    await withLoad.client.loadSession({ sessionId: 's9', cwd: '/w' });
    assert.deepEqual(withLoad.clients[0]?.requests, [['lspAgent/session/load', { sessionId: 's9', cwd: '/w' }]]);
  });

  it('explains a missing server with actions and makes no client', async () => {
    const t = make({ locate: { ok: false, message: 'The lsp-agent server was not found on PATH.' } });
    await t.client.start();
    assert.equal(t.clients.length, 0);
    const last = t.statuses.at(-1);
    assert.equal(last?.phase, 'missing');
    assert.deepEqual(last?.actions?.map((a) => a.id), ['configureServer', 'openInstallGuide', 'showLog']);
    await assert.rejects(t.client.newSession({}), ServerNotRunningError);
  });

  it('stops a server that fails the handshake', async () => {
    const t = make({ behaviours: [{ experimental: {} }] });
    await t.client.start();
    assert.equal(t.clients[0]?.stopped, 1);
    assert.equal(t.client.status.phase, 'incompatible');
    assert.match(t.client.status.message ?? '', /did not announce the lspAgent protocol/);
    assert.equal(t.timers.length, 0, 'an incompatible server is not restarted');
  });

  it('restarts a crashed server with backoff and gives up after the limit', async () => {
    const t = make({ behaviours: [{ experimental: GOOD }, { fail: 'spawn EACCES' }] });
    await t.client.start();
    t.clients[0]?.crash();
    assert.equal(t.client.status.phase, 'restarting');
    assert.match(t.client.status.message ?? '', /exited unexpectedly\. Restarting in 1 s \(attempt 1 of 2\)/);
    assert.equal(t.timers.at(-1)?.ms, 1000);
    t.timers.at(-1)?.fn();
    await new Promise((r) => setImmediate(r));
    assert.equal(t.clients.length, 2);
    assert.equal(t.client.status.phase, 'restarting');
    assert.match(t.client.status.message ?? '', /failed to start \(\/bin\/lsp-agent\): spawn EACCES.*Restarting in 2 s/);
    t.timers.at(-1)?.fn();
    await new Promise((r) => setImmediate(r));
    assert.equal(t.client.status.phase, 'failed');
    assert.deepEqual(t.client.status.actions?.map((a) => a.id), ['restartServer', 'showLog', 'configureServer']);
  });

  it('does not restart after a deliberate stop', async () => {
    const t = make();
    await t.client.start();
    const first = t.clients[0];
    await t.client.stop();
    first?.crash();
    assert.equal(t.client.status.phase, 'stopped');
    assert.equal(t.timers.length, 0);
  });
});

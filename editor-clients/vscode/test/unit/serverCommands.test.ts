/**
 * The extension with vscode-languageclient's real node client, talking over in-memory streams
 * to a small in-process server that advertises the agent commands the real server advertises.
 *
 * The language client registers every `executeCommandProvider.commands` entry as a VS Code
 * command; VS Code (and the fake) refuse a second registration of an id, which would make the
 * client fail to start. So: activation must register no duplicates, and a server-started turn
 * (`workspace/executeCommand` → `lspAgent/session/didStart` … `didEnd`) must reach the panel.
 */

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import {
  LanguageClient,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
  type MessageConnection,
} from 'vscode-languageclient/node';
import { activate, Commands, type ExtensionApi } from '../../src/extension';
import type { ToWebview } from '../../src/shared/messages';
import { ServerCommands } from '../../src/shared/protocol';
import { commands, fake, makeContext, makeWebviewView, Uri } from '../fake-vscode/index';

const ROOT = resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[]; keybindings: { command: string }[]; menus: Record<string, { command: string }[]> };
};
/** What lsp_agent/lsp/action_prompts.py registers with pygls (`executeCommandProvider`). */
const ADVERTISED = ['lspAgent.fixWithAgent', 'lspAgent.explainWithAgent', 'lspAgent.askAgent', 'lspAgent.applySuggestion'];

const dir = mkdtempSync(join(tmpdir(), 'ext-cmds-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const exe = join(dir, 'lsp-agent');
writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });

interface InProcessServer {
  connection: MessageConnection;
  executed: { command: string; arguments?: unknown[] }[];
  cancels: unknown[];
}

let server: InProcessServer | undefined;
let api: ExtensionApi;
let context: { subscriptions: { dispose(): unknown }[] };

/** A server speaking just enough LSP: initialize (with the agent commands), executeCommand. */
function startServer(toServer: PassThrough, toClient: PassThrough): InProcessServer {
  const connection = createMessageConnection(new StreamMessageReader(toServer), new StreamMessageWriter(toClient));
  const executed: InProcessServer['executed'] = [];
  const cancels: unknown[] = [];
  connection.onRequest('initialize', () => ({
    capabilities: {
      textDocumentSync: { openClose: true, change: 2 },
      executeCommandProvider: { commands: ADVERTISED },
      codeActionProvider: { codeActionKinds: ['quickfix'], resolveProvider: true },
      experimental: { lspAgent: { version: '0.1.0', protocolVersion: 1 } },
    },
    serverInfo: { name: 'lsp-agent', version: '0.1.0' },
  }));
  connection.onRequest('workspace/executeCommand', (params: { command: string; arguments?: unknown[] }) => {
    executed.push(params);
    const long = params.command === 'lspAgent.explainWithAgent';
    const sessionId = long ? 'sess-explain' : 'sess-fix';
    const title = long ? 'Explain with agent: bug.py' : 'Fix with agent: bug.py';
    // As the real server: the notification first, then the answer, then the turn's stream.
    void connection.sendNotification('lspAgent/session/didStart', { sessionId, cwd: dir, title, origin: params.command });
    if (long) return { sessionId }; // runs until cancelled
    setImmediate(() => {
      void connection.sendNotification('lspAgent/session/update', {
        sessionId,
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Fixing the name.' } },
      });
      void connection.sendNotification('lspAgent/session/didEnd', { sessionId, stopReason: 'end_turn' });
    });
    return { sessionId };
  });
  connection.onNotification('lspAgent/session/cancel', (params: { sessionId: string }) => {
    cancels.push(params);
    void connection.sendNotification('lspAgent/session/didEnd', { sessionId: params.sessionId, stopReason: 'cancelled' });
  });
  connection.onRequest('shutdown', () => null);
  connection.onNotification('exit', () => undefined);
  connection.listen();
  return { connection, executed, cancels };
}

beforeEach(async () => {
  fake.reset();
  fake.workspaceFolders = [{ uri: Uri.file(dir), name: 'w', index: 0 }];
  fake.setConfiguration({ 'lspAgent.server.path': exe });
  context = makeContext(ROOT);
  api = activate(context as never, (id, name, _serverOptions, clientOptions) => {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    server = startServer(toServer, toClient);
    return new LanguageClient(id, name, () => Promise.resolve({ reader: toClient, writer: toServer }), clientOptions);
  });
  await api.client.start();
});

afterEach(async () => {
  await api.client.stop();
  for (const d of context.subscriptions.reverse()) d.dispose();
  server?.connection.dispose();
  server = undefined;
});

describe('server-advertised commands', () => {
  it('the fake refuses a second registration of a command id, as VS Code does', () => {
    const first = fake.commands.get(Commands.newChat);
    assert.ok(first);
    assert.throws(() => commands.registerCommand(Commands.newChat, () => undefined), /command 'lspAgent\.newChat' already exists/);
    assert.equal(fake.commands.get(Commands.newChat), first, 'the first registration stays');
  });

  it('activation with a server advertising the agent commands registers each id once', () => {
    assert.equal(api.client.status.phase, 'running', JSON.stringify(api.client.status));
    assert.deepEqual(Object.values(ServerCommands).sort(), [...ADVERTISED].sort(), 'ServerCommands matches the server');
    const own = manifest.contributes.commands.map((c) => c.command);
    const clash = own.filter((id) => ADVERTISED.includes(id));
    assert.deepEqual(clash, [], 'no extension command uses a server command id');
    // Every command the manifest names elsewhere is one the extension declares.
    const referenced = [...manifest.contributes.keybindings.map((k) => k.command), ...Object.values(manifest.contributes.menus).flat().map((m) => m.command)];
    assert.deepEqual(referenced.filter((id) => !own.includes(id)), []);
    // Both sets are registered: the extension's and, through the language client, the server's.
    assert.deepEqual([...fake.commands.keys()].sort(), [...own, ...ADVERTISED].sort());
  });

  it('a server-started turn gets a tab in the panel, streams, and ends on didEnd', async () => {
    const page = makeWebviewView();
    fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
    page.receive({ type: 'ready' });
    // What VS Code does when the user picks the server's "Fix with agent" code action.
    const args = { action: 'fix', uri: Uri.file(join(dir, 'bug.py')).toString(), problems: [] };
    const answer = await fake.commands.get(ServerCommands.fixWithAgent)?.(args);
    assert.deepEqual(answer, { sessionId: 'sess-fix' });
    assert.deepEqual(server?.executed, [{ command: 'lspAgent.fixWithAgent', arguments: [args] }]);

    const added = await page.waitFor((m: ToWebview) => m.type === 'sessionAdded', 'sessionAdded');
    assert.equal(added.session.id, 'sess-fix');
    assert.equal(added.activate, true);
    const started = await page.waitFor((m: ToWebview) => m.type === 'turnStarted', 'turnStarted');
    assert.deepEqual(started, { type: 'turnStarted', sessionId: 'sess-fix', text: 'Fix with agent: bug.py', attachments: [] });
    const ended = await page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    assert.deepEqual(ended.result, { stopReason: 'end_turn' });
    const session = api.controller.session('sess-fix');
    assert.ok(session);
    assert.equal(session.title, 'Fix with agent: bug.py');
    assert.equal(session.cwd, dir);
    assert.equal(session.running, false);
    assert.deepEqual(session.items.map((i) => i.kind), ['user', 'agent']);
    assert.equal(api.controller.active?.id, 'sess-fix');
    // Shown, never focused: the view was resolved, so it is revealed with preserveFocus.
    assert.deepEqual(fake.callsOf('webviewView.show'), [[true]]);
  });

  it('Stop on a server-started turn sends lspAgent/session/cancel; didEnd ends it', async () => {
    const page = makeWebviewView();
    fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
    page.receive({ type: 'ready' });
    await fake.commands.get(ServerCommands.explainWithAgent)?.({ action: 'explain', uri: Uri.file(join(dir, 'bug.py')).toString(), problems: [] });
    await page.waitFor((m: ToWebview) => m.type === 'turnStarted' && m.sessionId === 'sess-explain', 'turnStarted');
    assert.equal(api.controller.session('sess-explain')?.running, true);
    // A prompt typed into that tab meanwhile is refused with a notice, as during any turn.
    page.receive({ type: 'prompt', sessionId: 'sess-explain', text: 'and then?', mentions: [], includeSelection: false });
    await page.waitFor((m: ToWebview) => m.type === 'notice' && m.sessionId === 'sess-explain', 'the busy notice');
    page.receive({ type: 'cancel', sessionId: 'sess-explain' });
    const ended = await page.waitFor((m: ToWebview) => m.type === 'turnEnded' && m.sessionId === 'sess-explain', 'turnEnded');
    assert.deepEqual(ended.result, { stopReason: 'cancelled' });
    assert.deepEqual(server?.cancels, [{ sessionId: 'sess-explain' }]);
    assert.equal(api.controller.session('sess-explain')?.running, false);
  });

  it('"Ask agent about selection" asks for the question first; Escape does not run it', async () => {
    const args = { action: 'ask', uri: Uri.file(join(dir, 'bug.py')).toString(), startLine: 0, endLine: 1 };
    fake.answer('  Why a loop here?  ');
    await fake.commands.get(ServerCommands.askAgent)?.(args);
    fake.answer(undefined);
    assert.equal(await fake.commands.get(ServerCommands.askAgent)?.(args), undefined);
    fake.answer('');
    await fake.commands.get(ServerCommands.askAgent)?.(args);
    assert.deepEqual(server?.executed, [
      { command: 'lspAgent.askAgent', arguments: [{ ...args, question: 'Why a loop here?' }] },
      { command: 'lspAgent.askAgent', arguments: [args] },
    ]);
    assert.equal(fake.callsOf('showInputBox').length, 3);
  });
});

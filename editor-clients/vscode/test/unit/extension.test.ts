import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { State } from 'vscode-languageclient/node';
import { activate, type ExtensionApi } from '../../src/extension';
import type { LanguageClientLike } from '../../src/server/agentClient';
import { Diagnostic, DiagnosticSeverity, fake, makeContext, makeWebviewView, Position, Range, Selection, Uri } from '../fake-vscode/index';

const ROOT = resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[]; configuration: { properties: Record<string, unknown> }; views: Record<string, { id: string }[]> };
  main: string;
};

const dir = mkdtempSync(join(tmpdir(), 'ext-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const exe = join(dir, 'lsp-agent');
writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });

/** A language client that answers like lsp-agent without a process. */
class ScriptedClient implements LanguageClientLike {
  state = State.Stopped;
  initializeResult: LanguageClientLike['initializeResult'];
  requests: [string, any][] = [];
  notifications: [string, any][] = [];
  constructor(readonly initOptions: unknown) {}
  async start() {
    this.state = State.Running;
    this.initializeResult = { capabilities: { experimental: { lspAgent: { version: '0.1.0', protocolVersion: 1 } } } };
  }
  async stop() {
    this.state = State.Stopped;
  }
  async dispose() {}
  async sendRequest<R>(method: string, params: any): Promise<R> {
    this.requests.push([method, params]);
    if (method === 'lspAgent/session/new') return { sessionId: `s${this.requests.length}`, modes: { currentModeId: 'default', availableModes: [{ id: 'default', name: 'Default' }, { id: 'plan', name: 'Plan' }] } } as R;
    if (method === 'lspAgent/session/prompt') return { stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 2 } } as R;
    return {} as R;
  }
  async sendNotification(method: string, params?: any) {
    this.notifications.push([method, params]);
  }
  onRequest() {
    return { dispose: () => undefined };
  }
  onNotification() {
    return { dispose: () => undefined };
  }
}

let api: ExtensionApi;
let clients: ScriptedClient[];
let context: { subscriptions: { dispose(): unknown }[] };

beforeEach(async () => {
  fake.reset();
  fake.workspaceFolders = [{ uri: Uri.file(dir), name: 'w', index: 0 }];
  fake.setConfiguration({ 'lspAgent.server.path': exe, 'lspAgent.diagnostics.debounceMs': 0, 'lspAgent.permissionMode': 'acceptEdits' });
  fake.isTrusted = false;
  clients = [];
  context = makeContext(ROOT);
  api = activate(context as never, (_id, _name, _so, co) => {
    const c = new ScriptedClient(co.initializationOptions);
    clients.push(c);
    return c;
  });
  await api.client.start();
});

afterEach(() => {
  for (const d of context.subscriptions.reverse()) d.dispose();
});

describe('activation', () => {
  it('registers exactly the commands, view and settings the manifest declares', async () => {
    const declared = manifest.contributes.commands.map((c) => c.command).sort();
    const registered = [...fake.commands.keys()].sort();
    assert.deepEqual(registered, declared);
    assert.deepEqual([...fake.webviewProviders.keys()], manifest.contributes.views.lspAgent?.map((v) => v.id));
    assert.equal(manifest.main, './dist/extension.js');
    for (const key of ['server.path', 'server.pythonInterpreter', 'model', 'permissionMode', 'verificationMode', 'hooks.trusted']) {
      assert.ok(`lspAgent.${key}` in manifest.contributes.configuration.properties, `setting lspAgent.${key}`);
    }
  });

  it('passes workspace trust and settings in initializationOptions, never trusting hooks when untrusted', () => {
    fake.setConfiguration({ 'lspAgent.hooks.trusted': true });
    assert.deepEqual(clients[0]?.initOptions, {
      lspAgent: { trusted: false, permissionMode: 'acceptEdits', logLevel: 'warning', clientCapabilities: { saveDocuments: true, reloadDocuments: true, mcpElicitation: true } },
    });
  });

  it('granting workspace trust tells the running server at once, without a restart', async () => {
    fake.isTrusted = true;
    fake.emitters.didGrantTrust.fire();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(clients.length, 1, 'no second client: the server was not restarted');
    assert.equal(clients[0]?.state, State.Running);
    const told = clients[0]?.notifications.filter(([m]) => m === 'workspace/didChangeConfiguration');
    assert.deepEqual(told, [['workspace/didChangeConfiguration', { settings: { lspAgent: { trusted: true } } }]]);
  });

  it('bridges other extensions’ diagnostics with the document version', async () => {
    const file = join(dir, 'x.py');
    writeFileSync(file, 'import os\n');
    const doc = fake.openDocument(file);
    const d = new Diagnostic(new Range(0, 0, 0, 9), '"os" is not accessed', DiagnosticSeverity.Hint);
    d.source = 'Pylance';
    fake.setDiagnostics(doc.uri, 'python', [d]);
    await new Promise((r) => setTimeout(r, 20));
    const sent = clients[0]?.notifications.filter(([m]) => m === 'lspAgent/diagnostics/didChange');
    assert.deepEqual(sent, [
      ['lspAgent/diagnostics/didChange', { uri: doc.uri.toString(), version: 1, diagnostics: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 9 } }, severity: 4, message: '"os" is not accessed', source: 'Pylance' }] }],
    ]);
  });

  it('Fix with Agent sends the problems at the cursor with the buffer', async () => {
    const file = join(dir, 'bug.py');
    writeFileSync(file, 'x = 1\nprint(y)\n');
    const doc = fake.openDocument(file);
    fake.showEditor(doc, new Selection(new Position(1, 2), new Position(1, 2)));
    const far = new Diagnostic(new Range(0, 0, 0, 1), 'elsewhere', DiagnosticSeverity.Warning);
    const here = new Diagnostic(new Range(1, 6, 1, 7), 'undefined name y', DiagnosticSeverity.Error);
    here.source = 'pyflakes';
    fake.setDiagnostics(doc.uri, 'lint', [far, here]);
    const page = makeWebviewView();
    fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
    page.receive({ type: 'ready' });
    await fake.commands.get('lspAgent.chat.fixWithAgent')?.();
    const prompt = clients[0]?.requests.find(([m]) => m === 'lspAgent/session/prompt')?.[1];
    assert.equal(prompt.prompt[0].text, 'Fix this problem in bug.py:\n- line 2: error: undefined name y (pyflakes)');
    assert.deepEqual(prompt.prompt[1], {
      type: 'resource',
      resource: { uri: doc.uri.toString(), text: 'x = 1\nprint(y)\n' },
      _meta: { range: { start: { line: 1, character: 6 }, end: { line: 1, character: 7 } } },
    });
    const newSession = clients[0]?.requests.find(([m]) => m === 'lspAgent/session/new')?.[1];
    assert.deepEqual(newSession, { cwd: dir, mode: 'acceptEdits' });
    await page.waitFor((m) => m.type === 'turnEnded', 'turnEnded');
  });

  it('Explain Selection sends the selected text with its range; mode switching and cancel reach the server', async () => {
    const file = join(dir, 'sel.py');
    writeFileSync(file, 'def f():\n    return 42\n');
    const doc = fake.openDocument(file);
    fake.showEditor(doc, new Selection(new Position(1, 4), new Position(1, 13)));
    await fake.commands.get('lspAgent.chat.explainSelection')?.();
    const prompt = clients[0]?.requests.find(([m]) => m === 'lspAgent/session/prompt')?.[1];
    assert.match(prompt.prompt[0].text, /^Explain the selected code in sel\.py \(lines 2-2\)/);
    assert.deepEqual(prompt.prompt[1].resource.text, 'return 42');
    fake.answer({ id: 'plan' });
    await fake.commands.get('lspAgent.switchMode')?.();
    assert.deepEqual(clients[0]?.requests.at(-1), ['lspAgent/session/setMode', { sessionId: prompt.sessionId, modeId: 'plan' }]);
    assert.equal(api.controller.active?.modeId, 'plan');
  });

  it('closing a chat tab releases its session on the server (lspAgent/session/close)', async () => {
    const page = makeWebviewView();
    fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
    page.receive({ type: 'ready' });
    const session = await api.controller.newSession();
    page.receive({ type: 'closeSession', sessionId: session.id });
    await page.waitFor((m) => m.type === 'sessionClosed', 'sessionClosed');
    assert.deepEqual(clients[0]?.requests.at(-1), ['lspAgent/session/close', { sessionId: session.id }]);
  });

  it('shows the log and opens the panel on request', async () => {
    await fake.commands.get('lspAgent.showLog')?.();
    assert.deepEqual(fake.callsOf('outputChannel.show'), [['lsp-agent']]);
    await fake.commands.get('lspAgent.openPanel')?.();
    assert.deepEqual(fake.callsOf('executeCommand').at(-1), ['lspAgent.chat.focus']);
  });
});

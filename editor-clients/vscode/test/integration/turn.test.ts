/**
 * End to end without VS Code: the extension is activated against the fake `vscode` API, its
 * real vscode-languageclient node client starts the real `lsp-agent serve`, and the model is
 * the project's scripted Messages-API server on 127.0.0.1. The test plays the chat webview
 * (posting what the page would post) and checks what the extension does.
 *
 * Needs Python with lsp-agent installed: `LSP_AGENT_PYTHON` (default: the repository's
 * `.venv/bin/python`, else `python3`).
 */

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { activate, type ExtensionApi } from '../../src/extension';
import type { ToWebview } from '../../src/shared/messages';
import type { RequestPermissionParams } from '../../src/shared/protocol';
import {
  CancellationTokenSource,
  CodeActionTriggerKind,
  commands,
  Diagnostic,
  DiagnosticSeverity,
  fake,
  makeContext,
  makeWebviewView,
  Range,
  Uri,
  workspace,
  WorkspaceEdit,
} from '../fake-vscode/index';

const EXTENSION_ROOT = resolve(__dirname, '..', '..', '..');
const REPO_ROOT = resolve(EXTENSION_ROOT, '..', '..');

function python(): string {
  if (process.env.LSP_AGENT_PYTHON) return process.env.LSP_AGENT_PYTHON;
  const venv = join(REPO_ROOT, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

interface Scripted {
  port: number;
  proc: ChildProcess;
  stderr(): string;
  /** Stop it; resolves with its exit code (0: every step consumed, no bad request). */
  stop(): Promise<number | null>;
}

async function startScripted(scenario: unknown, dir: string): Promise<Scripted> {
  const scenarioFile = join(dir, 'scenario.json');
  const portFile = join(dir, 'port');
  writeFileSync(scenarioFile, JSON.stringify(scenario));
  const proc = spawn(python(), ['-m', 'lsp_agent.testing', '--scenario', scenarioFile, '--port', '0', '--port-file', portFile, '--var', `cwd=${dir}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  for (let i = 0; i < 300 && !existsSync(portFile); i += 1) {
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!existsSync(portFile)) {
    proc.kill();
    throw new Error(`the scripted model server did not start (${python()}): ${err}`);
  }
  return {
    port: Number(readFileSync(portFile, 'utf8').trim()),
    proc,
    stderr: () => err,
    stop: async () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

const CART = `def total(items):
    result = 0
    for item in items:
        result += item.price
    return result


def describe(items):
    return f"{len(items)} items"
`;

interface Setup {
  dir: string;
  scripted: Scripted;
  api: ExtensionApi;
  page: ReturnType<typeof makeWebviewView>;
  context: { subscriptions: { dispose(): unknown }[] };
}

let setup: Setup | undefined;

async function launch(steps: unknown[], files: Record<string, string> = {}, opts: { trusted?: boolean } = {}): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'lsp-agent-vscode-'));
  writeFileSync(join(dir, 'cart.py'), CART);
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), body);
  }
  const scripted = await startScripted({ name: 'vscode-integration', steps }, dir);
  fake.reset();
  fake.isTrusted = opts.trusted ?? true;
  fake.workspaceFolders = [{ uri: Uri.file(dir), name: 'shop', index: 0 }];
  fake.setConfiguration({
    'lspAgent.server.pythonInterpreter': python(),
    // The session store goes beside this test's folder.
    'lspAgent.server.env': { ANTHROPIC_BASE_URL: `http://127.0.0.1:${scripted.port}`, ANTHROPIC_API_KEY: 'dummy', LSP_AGENT_DATA_DIR: `${dir}.data` },
    'lspAgent.server.logLevel': 'info',
  });
  fake.openDocument(join(dir, 'cart.py'));
  const context = makeContext(EXTENSION_ROOT);
  const api = activate(context);
  const page = makeWebviewView();
  fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
  page.receive({ type: 'ready' });
  setup = { dir, scripted, api, page, context };
  await page.waitFor((m: ToWebview) => m.type === 'snapshot', 'snapshot');
  for (let i = 0; i < 600 && api.client.status.phase !== 'running'; i += 1) {
    if (api.client.status.phase === 'missing' || api.client.status.phase === 'incompatible' || api.client.status.phase === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(api.client.status.phase, 'running', `server status: ${JSON.stringify(api.client.status)}\n${fake.outputLines.join('\n')}`);
  return setup;
}

afterEach(async () => {
  if (!setup) return;
  const { api, context, dir, scripted } = setup;
  setup = undefined;
  await api.client.stop();
  for (const d of context.subscriptions.reverse()) d.dispose();
  await scripted.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}.data`, { recursive: true, force: true });
});

beforeEach(() => {
  setup = undefined;
});

function text(t: string) {
  return { type: 'text', text: t };
}

function toolUse(id: string, name: string, input: Record<string, unknown>) {
  return { type: 'tool_use', id, name, input };
}

describe('extension ↔ lsp-agent serve', () => {
  it('runs a turn: streams, asks permission in the panel, applies the edit to the buffer', async () => {
    const s = await launch([
      { response: { content: [text('Let me read the cart.'), toolUse('toolu_read', 'Read', { file_path: '{{cwd}}/cart.py' })], stop_reason: 'tool_use' } },
      {
        expect: { tool_results: [{ is_error: false }] },
        response: {
          content: [toolUse('toolu_edit', 'Edit', { file_path: '{{cwd}}/cart.py', old_string: '        result += item.price', new_string: '        result += item.price * item.quantity' })],
          stop_reason: 'tool_use',
        },
      },
      { expect: { tool_results: [{ is_error: false }] }, response: { content: [text('Quantities are **counted** now.')] } },
    ]);
    s.page.receive({ type: 'prompt', text: 'Count quantities in @cart.py', mentions: [], includeSelection: false });

    const started = await s.page.waitFor((m: ToWebview) => m.type === 'turnStarted', 'turnStarted');
    assert.deepEqual(started.attachments, [{ label: 'cart.py', uri: Uri.file(join(s.dir, 'cart.py')).toString() }], 'the typed @mention was attached');
    const asked = await s.page.waitFor((m: ToWebview) => m.type === 'permissionRequested', 'permissionRequested');
    assert.equal(asked.request.toolCall.kind, 'edit');
    const diff = asked.request.toolCall.content.find((c: { type: string }) => c.type === 'diff');
    assert.equal(diff.oldText, CART);
    assert.match(diff.newText, /item\.price \* item\.quantity/);
    const allow = asked.request.options.find((o: { kind: string }) => o.kind === 'allow_once');
    assert.ok(allow, 'an allow_once option is offered');
    // Nothing took focus while the question waited.
    assert.deepEqual(fake.callsOf('webviewView.show'), []);
    assert.deepEqual(fake.callsOf('showTextDocument'), []);
    s.page.receive({ type: 'permission', requestId: asked.requestId, optionId: allow.optionId });

    const ended = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    assert.equal(ended.result.stopReason, 'end_turn', JSON.stringify(ended.result));
    assert.ok(ended.result.usage.inputTokens > 0);
    const resolved = await s.page.waitFor((m: ToWebview) => m.type === 'permissionResolved', 'permissionResolved');
    assert.equal(resolved.state, 'allowed');

    // The edit reached the open buffer through workspace/applyEdit, not the disk.
    const doc = fake.documents.find((d) => d.uri.fsPath === join(s.dir, 'cart.py'));
    assert.equal(doc?.getText(), CART.replace('result += item.price', 'result += item.price * item.quantity'));
    assert.equal(readFileSync(join(s.dir, 'cart.py'), 'utf8'), CART);

    // The host state the panel mirrors: streamed text, tool calls completed.
    const session = s.api.controller.active;
    assert.ok(session);
    const agentText = session.items.filter((i) => i.kind === 'agent').map((i) => (i as { text: string }).text).join('');
    assert.match(agentText, /Let me read the cart\./);
    assert.match(agentText, /Quantities are \*\*counted\*\* now\./);
    const tools = session.items.filter((i) => i.kind === 'tool') as { id: string; status: string; toolKind: string }[];
    assert.deepEqual(tools.map((t) => [t.toolKind, t.status]), [['read', 'completed'], ['edit', 'completed']]);
    assert.equal(session.running, false);
    assert.ok(s.page.posted.some((m) => m.type === 'sessionUpdate' && m.update.sessionUpdate === 'agent_message_chunk'));
    assert.equal(await s.scripted.stop(), 0, `scripted model: ${s.scripted.stderr()}`);
    if (process.env.LSP_AGENT_RECORD) {
      // Refresh test/fixtures/recorded-turn.json: what the panel received in this real turn.
      writeFileSync(process.env.LSP_AGENT_RECORD, `${JSON.stringify(s.page.posted.map((m) => scrub(m, s.dir)), null, 1)}\n`);
    }
  });

  it('the project memory reaches the model only once Workspace Trust is granted, without a restart', async () => {
    const marker = 'PROJECT-MEMORY-VSCODE-71c2';
    const s = await launch(
      [
        { expect: { last_user_contains: 'first, untrusted', request_lacks: marker }, response: { content: [text('one')] } },
        { expect: { last_user_contains: 'second, trusted', request_contains: marker }, response: { content: [text('two')] } },
      ],
      { 'CLAUDE.md': `${marker}: answer briefly\n` },
      { trusted: false },
    );
    const ended = (n: number) => s.page.waitFor(() => s.page.posted.filter((m) => m.type === 'turnEnded').length >= n, `turn ${n}`);
    s.page.receive({ type: 'prompt', text: 'first, untrusted', mentions: [], includeSelection: false });
    await ended(1);
    const client = s.api.client;
    fake.isTrusted = true;
    fake.emitters.didGrantTrust.fire();
    for (let i = 0; i < 200 && !fake.outputLines.some((l) => l.includes('workspace trusted: told the running server')); i += 1) {
      await new Promise((r) => setTimeout(r, 25));
    }
    s.page.receive({ type: 'prompt', text: 'second, trusted', mentions: [], includeSelection: false });
    await ended(2);
    assert.equal(s.api.client, client);
    assert.equal(client.status.phase, 'running');
    assert.equal(await s.scripted.stop(), 0, `scripted model: ${s.scripted.stderr()}`);
  });

  it("a repository's bypassPermissions default mode asks first, naming the file; declining keeps default", async () => {
    const s = await launch(
      [
        { response: { content: [toolUse('toolu_touch', 'Bash', { command: 'touch made.txt' })], stop_reason: 'tool_use' } },
        { expect: { tool_results: [{ is_error: true, contains: 'rejected' }] }, response: { content: [text('Not touched.')] } },
      ],
      { '.claude/settings.json': JSON.stringify({ permissions: { defaultMode: 'bypassPermissions' } }) },
    );
    s.page.receive({ type: 'prompt', text: 'Touch made.txt', mentions: [], includeSelection: false });
    const asked = await s.page.waitFor((m: ToWebview) => m.type === 'permissionRequested', 'the confirmation');
    const request = asked.request as RequestPermissionParams;
    assert.ok(request.toolCall.title.includes(join(s.dir, '.claude', 'settings.json')), request.toolCall.title);
    assert.match(request.toolCall.title, /bypassPermissions/);
    const keep = request.options.find((o) => o.kind === 'reject_once');
    assert.ok(keep, 'a way to keep the default mode');
    s.page.receive({ type: 'permission', requestId: asked.requestId, optionId: keep.optionId });
    // Still in default mode: the command asks.
    const bash = await s.page.waitFor(
      (m: ToWebview) => m.type === 'permissionRequested' && m.requestId !== asked.requestId,
      'the Bash prompt',
    );
    const bashRequest = bash.request as RequestPermissionParams;
    assert.equal(bashRequest.toolCall.toolCallId, 'toolu_touch');
    const reject = bashRequest.options.find((o) => o.kind === 'reject_once');
    assert.ok(reject);
    s.page.receive({ type: 'permission', requestId: bash.requestId, optionId: reject.optionId });
    const ended = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    assert.equal(ended.result.stopReason, 'end_turn', JSON.stringify(ended.result));
    assert.equal(s.api.controller.active?.modeId, 'default');
    assert.equal(existsSync(join(s.dir, 'made.txt')), false);
    assert.equal(await s.scripted.stop(), 0, `scripted model: ${s.scripted.stderr()}`);
  });

  it('"always allow" in the project scope saves the rule; the same call is not asked again', async () => {
    const touch = { command: 'touch made.txt', description: 'Create made.txt' };
    const s = await launch([
      { response: { content: [text('Creating the file.'), toolUse('toolu_touch1', 'Bash', touch)], stop_reason: 'tool_use' } },
      { expect: { tool_results: [{ is_error: false }] }, response: { content: [toolUse('toolu_touch2', 'Bash', touch)], stop_reason: 'tool_use' } },
      { expect: { tool_results: [{ is_error: false }] }, response: { content: [text('Touched it twice.')] } },
      {
        expect: { last_user_contains: 'once more in a new chat' },
        response: { content: [toolUse('toolu_touch3', 'Bash', touch)], stop_reason: 'tool_use' },
      },
      { expect: { tool_results: [{ is_error: false }] }, response: { content: [text('Done without asking.')] } },
    ]);
    const settingsFile = join(s.dir, '.claude', 'settings.local.json');
    assert.equal(existsSync(settingsFile), false);
    s.page.receive({ type: 'prompt', text: 'Create made.txt', mentions: [], includeSelection: false });

    const asked = await s.page.waitFor((m: ToWebview) => m.type === 'permissionRequested', 'permissionRequested');
    const request = asked.request as RequestPermissionParams;
    assert.equal(request.toolCall.toolCallId, 'toolu_touch1');
    assert.ok(request.reason, 'the server says why it asks');
    assert.equal(request.source, 'default', 'no rule asked: the default policy did');
    assert.equal(request.rule, undefined);
    assert.deepEqual(request.suggestedRules, ['Bash(touch made.txt)'], 'the rule "always" saves, shown before answering');
    assert.deepEqual(request.scopes, ['session', 'project', 'user']);
    const always = request.options.find((o) => o.kind === 'allow_always');
    assert.ok(always, 'allow_always is offered');
    s.page.receive({ type: 'permission', requestId: asked.requestId, optionId: always.optionId, scope: 'project' });

    const resolved = await s.page.waitFor((m: ToWebview) => m.type === 'permissionResolved', 'permissionResolved');
    assert.deepEqual([resolved.state, resolved.chosen, resolved.scope], ['allowed', always.name, 'project']);
    const ended = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    assert.equal(ended.result.stopReason, 'end_turn', JSON.stringify(ended.result));
    // Asked once: the second, identical call ran under the remembered rule.
    assert.deepEqual(s.page.posted.filter((m) => m.type === 'permissionRequested').map((m) => (m as { request: RequestPermissionParams }).request.toolCall.toolCallId), ['toolu_touch1']);
    const session = s.api.controller.active;
    const tools = (session?.items.filter((i) => i.kind === 'tool') ?? []) as { id: string; status: string }[];
    assert.deepEqual(tools.map((t) => [t.id, t.status]), [['toolu_touch1', 'completed'], ['toolu_touch2', 'completed']]);
    assert.ok(existsSync(join(s.dir, 'made.txt')));
    // The rule went to the project's local settings, as a JSON object the next server reads.
    assert.deepEqual(JSON.parse(readFileSync(settingsFile, 'utf8')), { permissions: { allow: ['Bash(touch made.txt)'] } });
    assert.ok(fake.outputLines.some((l) => l.includes('answered: Always allow · saved to project settings')), fake.outputLines.join('\n'));

    // A new chat (a new session of the same server) does not ask either: the saved rule applies.
    s.page.receive({ type: 'newSession' });
    const added = await s.page.waitFor((m: ToWebview) => m.type === 'sessionAdded' && m.session.id !== session?.id, 'a second session');
    s.page.receive({ type: 'prompt', sessionId: added.session.id, text: 'Touch it once more in a new chat', mentions: [], includeSelection: false });
    const second = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded' && m.sessionId === added.session.id, 'the second turn');
    assert.equal(second.result.stopReason, 'end_turn', JSON.stringify(second.result));
    assert.equal(s.page.posted.filter((m) => m.type === 'permissionRequested').length, 1, 'still asked only once');
    assert.equal(await s.scripted.stop(), 0, `scripted model: ${s.scripted.stderr()}`);
  });

  it('reviews an edit in the diff: rejects one hunk, accepts the rest as edited text', async () => {
    const s = await launch([
      { response: { content: [toolUse('toolu_read', 'Read', { file_path: '{{cwd}}/cart.py' })], stop_reason: 'tool_use' } },
      {
        expect: { tool_results: [{ is_error: false }] },
        response: {
          content: [
            toolUse('toolu_write', 'Write', {
              file_path: '{{cwd}}/cart.py',
              content: CART.replace('    result = 0', '    result = Decimal(0)').replace('{len(items)} items', '{len(items)} item(s)'),
            }),
          ],
          stop_reason: 'tool_use',
        },
      },
      { expect: { tool_results: [{ is_error: false }] }, response: { content: [text('Applied what you kept.')] } },
    ]);
    s.page.receive({ type: 'prompt', text: 'Use Decimal and fix the plural', mentions: [], includeSelection: false });
    const asked = await s.page.waitFor((m: ToWebview) => m.type === 'permissionRequested', 'permissionRequested');

    // "Review" opens VS Code's diff: original (read-only provider) ⟷ proposal (in-memory file system).
    s.page.receive({ type: 'review', requestId: asked.requestId });
    const diffCall = await waitForCall('vscode.diff');
    const [original, proposal] = diffCall.slice(1) as [Uri, Uri];
    assert.equal(original.scheme, 'lsp-agent-original');
    assert.equal(proposal.scheme, 'lsp-agent-proposal');
    const lenses = fake.codeLensProviders[0]?.provider.provideCodeLenses(fake.openDocument(proposal)) as { command: { title: string } }[];
    assert.deepEqual(
      lenses.map((l) => l.command.title),
      ['$(check) Accept', '$(close) Reject', '$(comment) Reject with feedback…', '$(check) Accept change 1/2', '$(discard) Reject change', '$(check) Accept change 2/2', '$(discard) Reject change'],
    );
    // Reject the first hunk (Decimal), keep the second (plural), accept from the diff editor.
    assert.equal(await fake.commands.get('lspAgent.review.rejectHunk')?.(proposal, 0), true);
    await fake.commands.get('lspAgent.review.accept')?.(proposal);

    const ended = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    assert.equal(ended.result.stopReason, 'end_turn', JSON.stringify(ended.result));
    const resolved = await s.page.waitFor((m: ToWebview) => m.type === 'permissionResolved', 'permissionResolved');
    assert.equal(resolved.edited, true);
    const doc = fake.documents.find((d) => d.uri.fsPath === join(s.dir, 'cart.py'));
    assert.equal(doc?.getText(), CART.replace('{len(items)} items', '{len(items)} item(s)'), 'only the kept hunk was applied');
    // The review tab was closed once answered.
    assert.equal(fake.tabs.length, 0);
    assert.equal(await s.scripted.stop(), 0, `scripted model: ${s.scripted.stderr()}`);
  });
});

/** The parts of a `vscode.CodeAction` from the language client that the test reads. */
interface OfferedAction {
  title: string;
  kind?: { value: string };
  command?: { command: string; arguments?: unknown[] };
}

describe('code actions', () => {
  it('"Fix with agent" on a bridged diagnostic runs a turn the panel adopts; the edit reaches the buffer', async () => {
    const s = await launch([
      {
        expect: { last_user_contains: 'Fix this problem in cart.py:\n- error at cart.py:4:9 [shoplint Q001]: quantity is ignored' },
        response: { content: [text('Reading the cart.'), toolUse('toolu_read', 'Read', { file_path: '{{cwd}}/cart.py' })], stop_reason: 'tool_use' },
      },
      {
        expect: { tool_results: [{ is_error: false }] },
        response: {
          content: [toolUse('toolu_edit', 'Edit', { file_path: '{{cwd}}/cart.py', old_string: '        result += item.price', new_string: '        result += item.price * item.quantity' })],
          stop_reason: 'tool_use',
        },
      },
      { expect: { tool_results: [{ is_error: false }] }, response: { content: [text('Quantities are counted now.')] } },
    ]);
    const uri = Uri.file(join(s.dir, 'cart.py'));
    const doc = fake.documents.find((d) => d.uri.toString() === uri.toString());
    assert.ok(doc);
    // Another extension (a linter) reports a problem; the bridge sends it to the server.
    fake.setConfiguration({ 'lspAgent.diagnostics.debounceMs': 0 });
    const problem = new Diagnostic(new Range(3, 8, 3, 28), 'quantity is ignored', DiagnosticSeverity.Error);
    problem.source = 'shoplint';
    problem.code = 'Q001';
    fake.setDiagnostics(uri, 'shoplint', [problem]);

    // The lightbulb asks the language client's provider. The context carries no diagnostics, so
    // a "Fix with agent" action exists only because the server stored the bridged one.
    assert.equal(fake.codeActionProviders.length, 1, 'the language client registered one code action provider');
    const provider = fake.codeActionProviders[0]?.provider;
    const token = new CancellationTokenSource().token;
    const context = { diagnostics: [], only: undefined, triggerKind: CodeActionTriggerKind.Invoke };
    let fix: OfferedAction | undefined;
    let titles: string[] = [];
    for (let i = 0; i < 400 && !fix; i += 1) {
      const offered = ((await provider.provideCodeActions(doc, new Range(3, 0, 3, 0), context, token)) ?? []) as OfferedAction[];
      titles = offered.map((a) => a.title);
      fix = offered.find((a) => a.title.startsWith('Fix with agent'));
      if (!fix) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(fix, `no "Fix with agent" action; offered: ${JSON.stringify(titles)}`);
    assert.deepEqual(titles, ['Fix with agent: quantity is ignored', 'Explain with agent']);
    assert.equal(fix.kind?.value, 'quickfix');
    assert.equal(fix.command, undefined, 'the client resolves commands, so the server leaves it to codeAction/resolve');

    // Picking it: VS Code resolves the action, then runs its command (the language client's).
    const resolved = (await provider.resolveCodeAction(fix, token)) as OfferedAction;
    const command = resolved.command;
    assert.equal(command?.command, 'lspAgent.fixWithAgent');
    const answer = (await commands.executeCommand(command.command, ...(command.arguments ?? []))) as { sessionId: string };
    assert.equal(typeof answer.sessionId, 'string');

    // The panel adopts the session: a new active tab, the turn, the permission question.
    const added = await s.page.waitFor((m: ToWebview) => m.type === 'sessionAdded' && m.session.id === answer.sessionId, 'sessionAdded');
    assert.equal(added.activate, true);
    const started = await s.page.waitFor((m: ToWebview) => m.type === 'turnStarted' && m.sessionId === answer.sessionId, 'turnStarted');
    assert.equal(started.text, 'Fix with agent: cart.py:4 — quantity is ignored');
    const asked = await s.page.waitFor((m: ToWebview) => m.type === 'permissionRequested', 'permissionRequested');
    assert.equal(asked.request.sessionId, answer.sessionId);
    assert.equal(asked.request.toolCall.kind, 'edit');
    const allow = asked.request.options.find((o: { kind: string }) => o.kind === 'allow_once');
    assert.ok(allow);
    s.page.receive({ type: 'permission', requestId: asked.requestId, optionId: allow.optionId });

    const ended = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded' && m.sessionId === answer.sessionId, 'turnEnded');
    assert.deepEqual(ended.result, { stopReason: 'end_turn' });
    assert.equal(doc.getText(), CART.replace('result += item.price', 'result += item.price * item.quantity'));
    assert.equal(readFileSync(uri.fsPath, 'utf8'), CART, 'the edit went to the buffer, not the disk');
    const session = s.api.controller.session(answer.sessionId);
    assert.ok(session);
    assert.equal(s.api.controller.active?.id, answer.sessionId);
    assert.equal(session.running, false);
    const agentText = session.items.filter((i) => i.kind === 'agent').map((i) => (i as { text: string }).text).join('');
    assert.match(agentText, /Reading the cart\.[\s\S]*Quantities are counted now\./);
    const tools = session.items.filter((i) => i.kind === 'tool') as { toolKind: string; status: string }[];
    assert.deepEqual(tools.filter((t) => t.toolKind !== 'think').map((t) => [t.toolKind, t.status]), [['read', 'completed'], ['edit', 'completed']]);
    assert.equal(await s.scripted.stop(), 0, `scripted model: ${s.scripted.stderr()}`);
  });
});

/** The message with the temporary directory replaced by a stable sample path. */
function scrub(message: unknown, dir: string): unknown {
  const fileUrl = Uri.file(dir).toString();
  return JSON.parse(JSON.stringify(message).split(fileUrl).join('file:///home/dev/shop').split(dir).join('/home/dev/shop'));
}

describe('window reload', () => {
  it('a window reload reopens the tabs with their history: the workspace memento keeps the ids, the new server replays them', async () => {
    const s = await launch([{ response: { content: [text('Hello there.')] } }]);
    s.page.receive({ type: 'prompt', text: 'Hi', mentions: [], includeSelection: false });
    const started = await s.page.waitFor((m: ToWebview) => m.type === 'turnStarted', 'turnStarted');
    await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    // The reload: the extension host and its server go away; the workspace state stays.
    await s.api.client.stop();
    for (const d of s.context.subscriptions.reverse()) d.dispose();
    s.context.subscriptions.length = 0;
    const api = activate(s.context as Parameters<typeof activate>[0]);
    const page = makeWebviewView();
    fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
    page.receive({ type: 'ready' });
    s.api = api;
    s.page = page;
    await page.waitFor((m: ToWebview) => m.type === 'sessionActivated' && m.sessionId === started.sessionId, 'the reopened tab');
    const session = api.controller.session(started.sessionId);
    assert.ok(session, 'the tab is back');
    const texts = session.items.map((i) => JSON.stringify(i));
    assert.ok(texts.some((t) => t.includes('Hello there.')), texts.join('\n'));
    assert.ok(texts.some((t) => t.includes('"Hi"')), texts.join('\n'));
    assert.equal(session.running, false);
    await s.scripted.stop();
  });
});

describe('stopping and listing', () => {
  it('opening a session this window never showed calls lspAgent/session/load; an unknown one gets a clear error', async () => {
    const s = await launch([]);
    assert.equal(s.api.client.capabilities?.loadSession, true);
    s.page.receive({ type: 'activateSession', sessionId: 'from-another-window' });
    const notice = await s.page.waitFor((m: ToWebview) => m.type === 'notice', 'notice');
    assert.equal(notice.sessionId, 'from-another-window');
    assert.equal(notice.level, 'error');
    assert.match(notice.text, /Could not resume the session: .*no saved session with id 'from-another-window'/);
  });

  it('"Rewind to here" after a turn that edits two files and runs rm restores all three, keeps later typing, and cuts the conversation', async () => {
    const s = await launch(
      [
        {
          response: {
            content: [toolUse('toolu_read', 'Read', { file_path: '{{cwd}}/cart.py' }), toolUse('toolu_read_lib', 'Read', { file_path: '{{cwd}}/lib.py' })],
            stop_reason: 'tool_use',
          },
        },
        {
          expect: { tool_results: [{ is_error: false }, { is_error: false }] },
          response: {
            content: [
              toolUse('toolu_edit', 'Edit', { file_path: '{{cwd}}/cart.py', old_string: '        result += item.price', new_string: '        result += item.price * 2' }),
              toolUse('toolu_edit_lib', 'Edit', { file_path: '{{cwd}}/lib.py', old_string: 'X = 1', new_string: 'X = 2' }),
              toolUse('toolu_write', 'Write', { file_path: '{{cwd}}/extra.py', content: 'EXTRA = 1\n' }),
              toolUse('toolu_rm', 'Bash', { command: 'rm gone.txt' }),
            ],
            stop_reason: 'tool_use',
          },
        },
        { expect: { tool_results: [{ is_error: false }, { is_error: false }, { is_error: false }, { is_error: false }] }, response: { content: [text('Doubled.')] } },
      ],
      { 'lib.py': 'X = 1\n', 'gone.txt': 'bye\n' },
    );
    s.page.receive({ type: 'prompt', text: 'Double the prices', mentions: [], includeSelection: false });
    const started = await s.page.waitFor((m: ToWebview) => m.type === 'turnStarted', 'turnStarted');
    for (let i = 0; i < 4; i += 1) {
      const asked = await s.page.waitFor((m: ToWebview) => m.type === 'permissionRequested' && !s.page.posted.some((o) => o.type === 'permissionResolved' && o.requestId === m.requestId), 'permissionRequested');
      s.page.receive({ type: 'permission', requestId: asked.requestId, optionId: 'allow_once' });
      await s.page.waitFor((m: ToWebview) => m.type === 'permissionResolved' && m.requestId === asked.requestId, 'permissionResolved');
    }
    const ended = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    const doc = fake.documents.find((d) => d.uri.fsPath === join(s.dir, 'cart.py'));
    assert.match(doc?.getText() ?? '', /item\.price \* 2/);
    assert.ok(existsSync(join(s.dir, 'extra.py')));
    assert.equal(readFileSync(join(s.dir, 'lib.py'), 'utf8'), 'X = 2\n');
    assert.equal(existsSync(join(s.dir, 'gone.txt')), false);
    // The prompt result names the prompt's server id, so the panel offers "Rewind to here" on it.
    const session = s.api.controller.active;
    assert.ok(session);
    const prompt = session.items.find((i) => i.kind === 'user');
    assert.ok(ended.result.messageId, 'the prompt result carries the id');
    assert.ok(prompt && prompt.kind === 'user' && prompt.messageId === ended.result.messageId, 'the prompt has its id');
    const { checkpoints } = await s.api.client.checkpoints(started.sessionId);
    assert.deepEqual(checkpoints.map((c) => c.messageId), [prompt.messageId], 'the same id as the server lists');
    // The user then types in the open buffer, away from the agent's change (not saved).
    assert.ok(doc);
    const typing = new WorkspaceEdit();
    typing.replace(doc.uri, new Range(8, 11, 8, 11), '"mine: " + ');
    await workspace.applyEdit(typing);
    const typed = CART.replace('    return f"{len', '    return "mine: " + f"{len');
    assert.equal(doc.getText(), typed.replace('item.price', 'item.price * 2'));

    s.page.receive({ type: 'rewind', sessionId: started.sessionId, messageId: prompt.messageId, restore: 'both' });
    const focus = await s.page.waitFor((m: ToWebview) => m.type === 'focusPrompt' && m.text === 'Double the prices', 'the prompt back in the input');
    assert.ok(focus);
    assert.equal(doc.getText(), typed, 'the open buffer is back, through the editor, with the typing kept');
    assert.equal(readFileSync(join(s.dir, 'lib.py'), 'utf8'), 'X = 1\n', 'the closed file is back');
    assert.equal(readFileSync(join(s.dir, 'gone.txt'), 'utf8'), 'bye\n', 'the removed file is back');
    assert.equal(existsSync(join(s.dir, 'extra.py')), false, 'the created file is removed');
    assert.deepEqual(session.items.filter((i) => i.kind !== 'notice'), [], 'the rewound turn left the transcript');
    const notice = s.page.posted.find((m) => m.type === 'notice' && m.text.startsWith('Rewound to before'));
    assert.ok(notice, 'the panel says what was restored');
    assert.equal(await s.scripted.stop(), 0, `scripted model: ${s.scripted.stderr()}`);
  });

  it('closing a chat tab releases the session: the server lists it only as saved', async () => {
    const s = await launch([{ response: { content: [text('Hello.')] } }]);
    s.page.receive({ type: 'prompt', text: 'Hi', mentions: [], includeSelection: false });
    const started = await s.page.waitFor((m: ToWebview) => m.type === 'turnStarted', 'turnStarted');
    await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    s.page.receive({ type: 'closeSession', sessionId: started.sessionId });
    await s.page.waitFor((m: ToWebview) => m.type === 'sessionClosed', 'sessionClosed');
    const { sessions } = await s.api.client.listSessions();
    assert.deepEqual(sessions.map((x) => [x.sessionId, x.live, x.title]), [[started.sessionId, false, 'Hi']]);
    await s.scripted.stop();
  });

  it('Stop cancels a streaming turn; the session list shows it', async () => {
    const s = await launch([
      { response: { content: [text('I will think about this for a long time. '.repeat(20))] }, stall_after_events: 6 },
    ]);
    s.page.receive({ type: 'prompt', text: 'Think hard', mentions: [], includeSelection: false });
    const started = await s.page.waitFor((m: ToWebview) => m.type === 'turnStarted', 'turnStarted');
    await s.page.waitFor((m: ToWebview) => m.type === 'sessionUpdate' && m.update.sessionUpdate === 'agent_message_chunk', 'a first chunk');
    s.page.receive({ type: 'cancel', sessionId: started.sessionId });
    const ended = await s.page.waitFor((m: ToWebview) => m.type === 'turnEnded', 'turnEnded');
    assert.equal(ended.result.stopReason, 'cancelled', JSON.stringify(ended.result));
    s.page.receive({ type: 'listSessions' });
    const list = await s.page.waitFor((m: ToWebview) => m.type === 'sessionList', 'sessionList');
    assert.deepEqual(list.sessions, [{ sessionId: started.sessionId, title: 'Think hard', cwd: s.dir, busy: false, open: true }]);
    await s.scripted.stop();
  });
});

async function waitForCall(command: string): Promise<unknown[]> {
  for (let i = 0; i < 200; i += 1) {
    const call = fake.callsOf('executeCommand').find((args) => args[0] === command);
    if (call) return call;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${command} was never executed`);
}

/**
 * The server's "Fix with agent" code action end to end (serve.ts): a bridged diagnostic, the
 * language client's code action provider, the turn the panel adopts, the edit in the buffer.
 */

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ToWebview } from '../../src/shared/messages';
import { CancellationTokenSource, CodeActionTriggerKind, commands, Diagnostic, DiagnosticSeverity, fake, Range, Uri } from '../fake-vscode/index';
import { CART, launch, resetLaunched, stopLaunched, text, toolUse } from './serve';

afterEach(stopLaunched);
beforeEach(resetLaunched);

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

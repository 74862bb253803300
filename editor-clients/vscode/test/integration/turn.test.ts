/**
 * End to end without VS Code: the extension is activated against the fake `vscode` API, its
 * real vscode-languageclient node client starts the real `lsp-agent serve`, and the model is
 * the project's scripted Messages-API server on 127.0.0.1 (serve.ts). The test plays the chat
 * webview (posting what the page would post) and checks what the extension does: a turn with a
 * permission question, Workspace Trust and memory, modes, "always allow", the diff review.
 * Code actions, and sessions (reload, rewind, close, stop) have their own suites.
 */

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ToWebview } from '../../src/shared/messages';
import type { RequestPermissionParams } from '../../src/shared/protocol';
import { fake, Uri } from '../fake-vscode/index';
import { CART, launch, resetLaunched, stopLaunched, text, toolUse, waitForCall } from './serve';

afterEach(stopLaunched);
beforeEach(resetLaunched);

/** The message with the temporary directory replaced by a stable sample path. */
function scrub(message: unknown, dir: string): unknown {
  const fileUrl = Uri.file(dir).toString();
  return JSON.parse(JSON.stringify(message).split(fileUrl).join('file:///home/dev/shop').split(dir).join('/home/dev/shop'));
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

/**
 * Sessions end to end (serve.ts): a window reload reopens the tabs with their history, opening a
 * session this window never showed, "Rewind to here", closing a tab, Stop.
 */

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { activate } from '../../src/extension';
import type { ToWebview } from '../../src/shared/messages';
import { fake, makeWebviewView, Range, workspace, WorkspaceEdit } from '../fake-vscode/index';
import { CART, launch, resetLaunched, stopLaunched, text, toolUse } from './serve';

afterEach(stopLaunched);
beforeEach(resetLaunched);

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

/**
 * The chat webview's composer in headless Chromium: prompts with @-mentions (files, the
 * selection, MCP resources), history, "Rewind to here", tabs switched with the keyboard and
 * drafts kept per chat.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertNoProblems, openPanel, startHarness, text, type Harness } from './harness';
import type { ToHost } from '../../src/shared/messages';
import { createSession } from '../../src/shared/state';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

describe('chat webview: composer and tabs', () => {
  it('"Rewind to here" on a prompt posts code, conversation or both', async () => {
    const p = await openPanel(harness);
    const session = createSession({ id: 's1' });
    session.items.push(
      { kind: 'user', id: 'u1', rev: 1, text: 'refactor things', attachments: [], messageId: 'abc123def456' },
      { kind: 'agent', id: 'a1', rev: 1, text: 'Done.' },
      { kind: 'user', id: 'u2', rev: 1, text: 'not stamped yet', attachments: [] },
    );
    await p.send({ type: 'snapshot', snapshot: { sessions: [session], activeSessionId: 's1', server: { phase: 'running' }, history: [], editedProposals: false } });
    const page = p.page;
    assert.equal(await page.locator('.msg.user .rewind').count(), 1, 'only prompts with an id offer it');
    const control = page.locator('.msg.user .rewind').first();
    await control.locator('summary').click();
    assert.deepEqual(await control.locator('button').allTextContents(), ['Code', 'Conversation', 'Both']);
    await p.screenshot('panel-rewind.png');
    await control.locator('button[data-restore="both"]').click();
    const posted = await p.waitForPost((m) => m.type === 'rewind', 'a rewind');
    assert.deepEqual(posted, { type: 'rewind', sessionId: 's1', messageId: 'abc123def456', restore: 'both' });
    assertNoProblems(p);
    await page.context().close();
  });

  it('sends prompts with @-mentions, the selection and history', async () => {
    const p = await openPanel(harness);
    const session = createSession({ id: 's1' });
    await p.send(
      { type: 'snapshot', snapshot: { sessions: [session], activeSessionId: 's1', server: { phase: 'running' }, history: ['first question', 'second question'], editedProposals: false } },
      { type: 'selection', selection: { uri: 'file:///w/src/app.py', label: 'app.py:3-7', startLine: 3, endLine: 7 } },
    );
    const page = p.page;
    assert.equal(await page.locator('.empty h2').textContent(), 'What should we work on?');
    await p.screenshot('panel-empty.png');
    const box = page.locator('textarea.prompt');
    await box.focus();
    // History: Up recalls the newest prompt, then the one before; Down comes back.
    await page.keyboard.press('ArrowUp');
    assert.equal(await box.inputValue(), 'second question');
    await page.keyboard.press('ArrowUp');
    assert.equal(await box.inputValue(), 'first question');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.equal(await box.inputValue(), '');
    // @-mention: typing asks the host for candidates; Enter picks the highlighted one.
    await page.keyboard.type('Why does @ap');
    const query = await p.waitForPost((m) => m.type === 'mentionQuery' && m.query === 'ap', 'mentionQuery "ap"');
    assert.deepEqual(query, { type: 'mentionQuery', query: 'ap' });
    await p.send({
      type: 'mentionResults',
      query: 'ap',
      items: [
        { uri: 'file:///w/src/app.py', label: 'src/app.py', description: 'src' },
        { uri: 'file:///w/tests/test_app.py', label: 'tests/test_app.py', description: 'tests' },
      ],
    });
    assert.equal(await page.locator('.mention-item').count(), 2);
    await p.screenshot('panel-mentions.png');
    await page.keyboard.press('Enter');
    assert.equal(await box.inputValue(), 'Why does @src/app.py ');
    await page.keyboard.type('crash?');
    await page.keyboard.press('Enter');
    const prompt = await p.waitForPost((m) => m.type === 'prompt', 'a prompt');
    assert.deepEqual(prompt, {
      type: 'prompt',
      sessionId: 's1',
      text: 'Why does @src/app.py crash?',
      mentions: [{ uri: 'file:///w/src/app.py', label: 'src/app.py', description: 'src' }],
      includeSelection: true,
    } satisfies ToHost);
    assert.equal(await box.inputValue(), '', 'the box is cleared after sending');
    // Mode picker and stop.
    await page.locator('.mode-select').selectOption('plan');
    assert.deepEqual((await p.posted()).find((m) => m.type === 'setMode'), { type: 'setMode', sessionId: 's1', modeId: 'plan' });
    await p.send({ type: 'turnStarted', sessionId: 's1', text: 'Why does @src/app.py crash?', attachments: [] });
    await box.focus();
    await page.keyboard.press('Escape');
    assert.deepEqual((await p.posted()).find((m) => m.type === 'cancel'), { type: 'cancel', sessionId: 's1' });
    assertNoProblems(p);
    await page.context().close();
  });

  it('completes @server: with the resources of an MCP server', async () => {
    const p = await openPanel(harness);
    const session = createSession({ id: 's1' });
    await p.send({ type: 'snapshot', snapshot: { sessions: [session], activeSessionId: 's1', server: { phase: 'running' }, history: [], editedProposals: false } });
    const page = p.page;
    const box = page.locator('textarea.prompt');
    await box.focus();
    await page.keyboard.type('Summarise @docs:');
    const query = await p.waitForPost((m) => m.type === 'mentionQuery' && m.query === 'docs:', 'mentionQuery "docs:"');
    assert.deepEqual(query, { type: 'mentionQuery', query: 'docs:' });
    await p.send({
      type: 'mentionResults',
      query: 'docs:',
      items: [
        { uri: 'file:///guide.md', label: 'docs:file:///guide.md', description: 'The user guide', kind: 'mcp' },
        { uri: 'test://notes/readme', label: 'docs:test://notes/readme', description: 'readme', kind: 'mcp' },
      ],
    });
    assert.deepEqual(await page.locator('.mention-item .mention-label').allTextContents(), ['docs:file:///guide.md', 'docs:test://notes/readme']);
    await p.screenshot('panel-mcp-resources.png');
    // Typing on narrows (a new query with the URI part); the user picks the second one.
    await page.keyboard.type('test:');
    await p.waitForPost((m) => m.type === 'mentionQuery' && m.query === 'docs:test:', 'mentionQuery "docs:test:"');
    await p.send({
      type: 'mentionResults',
      query: 'docs:test:',
      items: [{ uri: 'test://notes/readme', label: 'docs:test://notes/readme', description: 'readme', kind: 'mcp' }],
    });
    assert.equal(await page.locator('.mention-item').count(), 1);
    await page.keyboard.press('Tab');
    assert.equal(await box.inputValue(), 'Summarise @docs:test://notes/readme ');
    await page.keyboard.press('Enter');
    const prompt = await p.waitForPost((m) => m.type === 'prompt', 'a prompt');
    // The resource stays in the text (the server reads it); it is not attached as a file.
    assert.deepEqual(prompt, { type: 'prompt', sessionId: 's1', text: 'Summarise @docs:test://notes/readme', mentions: [], includeSelection: false } satisfies ToHost);
    assertNoProblems(p);
    await page.context().close();
  });

  it('switches tabs with the keyboard and keeps drafts per chat', async () => {
    const p = await openPanel(harness);
    const a = createSession({ id: 'a', title: 'Refactor parser' });
    const b = createSession({ id: 'b', title: 'Fix CI' });
    await p.send({ type: 'snapshot', snapshot: { sessions: [a, b], activeSessionId: 'a', server: { phase: 'running' }, history: [], editedProposals: false } });
    const page = p.page;
    await page.locator('textarea.prompt').fill('draft for a');
    await page.locator('.tab.active .tab-button').focus();
    await page.keyboard.press('ArrowRight');
    await p.send();
    assert.deepEqual((await p.posted()).filter((m) => m.type === 'activateSession'), [{ type: 'activateSession', sessionId: 'b' }]);
    assert.equal(await text(p, '.tab.active .tab-title'), 'Fix CI');
    assert.equal(await page.locator('textarea.prompt').inputValue(), '');
    await page.keyboard.press('ArrowLeft');
    await p.send();
    assert.equal(await page.locator('textarea.prompt').inputValue(), 'draft for a');
    // The session list shows the server's sessions, closed ones included.
    await page.locator('button[aria-label="All chats"]').click();
    await p.waitForPost((m) => m.type === 'listSessions', 'listSessions');
    await p.send({
      type: 'sessionList',
      sessions: [
        { sessionId: 'a', title: 'Refactor parser', busy: false, open: true },
        { sessionId: 'b', title: 'Fix CI', busy: true, open: true },
        { sessionId: 'c', title: 'Old investigation', busy: false, open: false },
        { sessionId: 'd', title: 'Nightly cleanup', busy: true, open: false, backgroundRun: '3f2a9c1e' },
      ],
    });
    assert.deepEqual(await page.locator('.session-row .session-title').allTextContents(), ['Refactor parser', 'Fix CI', 'Old investigation', 'Nightly cleanup']);
    // A session a background run (run -p --bg) holds says so, with the run's id.
    assert.deepEqual(await page.locator('.session-row .session-background').allTextContents(), ['background run 3f2a9c1e']);
    assert.deepEqual(await page.locator('.session-row .session-closed').allTextContents(), ['closed']);
    await p.screenshot('panel-session-list.png');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    assert.deepEqual((await p.posted()).filter((m) => m.type === 'activateSession').at(-1), { type: 'activateSession', sessionId: 'c' });
    assert.equal(await page.locator('.session-list').isHidden(), true);
    assertNoProblems(p);
    await page.context().close();
  });
});

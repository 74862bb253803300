/**
 * The chat webview in headless Chromium: renders a recorded session, streams Markdown, shows a
 * permission question whose buttons post the right answers, and drives the composer
 * (@-mentions, history, send/stop) and the server banner. Screenshots go to test-artifacts/.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ANSWER_CHUNKS, LINT_REQUEST, PERMISSION_REQUEST, PUSH_REQUEST, SESSION_ID, permissionStream, recordedStream } from '../fixtures/sessionStream';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, openPanel, startHarness, type Harness, type PanelPage } from './harness';
import type { ToHost, ToWebview } from '../../src/shared/messages';
import { createSession } from '../../src/shared/state';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

async function text(p: PanelPage, selector: string): Promise<string> {
  return (await p.page.locator(selector).first().textContent()) ?? '';
}

function assertNoProblems(p: PanelPage): void {
  assert.deepEqual(p.problems, [], 'the page logged errors or CSP violations');
}

describe('chat webview', () => {
  it('replays a turn recorded from the real server', async () => {
    // Recorded by the integration test (LSP_AGENT_RECORD): what the panel got in a real turn.
    const recorded = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'recorded-turn.json'), 'utf8')) as ToWebview[];
    const asked = recorded.findIndex((m) => m.type === 'permissionRequested');
    assert.ok(asked > 0);
    const p = await openPanel(harness);
    const page = p.page;
    await p.send(...recorded.slice(0, asked + 1));
    assert.equal(await page.locator('.tool').count(), 2);
    assert.equal(await text(p, '[data-tool-call-id="toolu_read"] .tool-title'), 'Read cart.py');
    assert.equal(await page.locator('[data-tool-call-id="toolu_edit"] .permission.pending').count(), 1);
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p.screenshot('recorded-turn-permission.png');
    await p.send(...recorded.slice(asked + 1));
    assert.equal(await page.locator('[data-tool-call-id="toolu_edit"] .status-icon.completed').count(), 1);
    assert.equal(await page.locator('[data-tool-call-id="toolu_edit"] .permission.resolved.allowed').count(), 1);
    // The bold split across two chunks ("**cou" + "nted**") renders as one <strong>.
    assert.equal(await page.locator('.msg.agent strong').last().textContent(), 'counted');
    assert.equal(await page.locator('.send').isVisible(), true);
    await p.screenshot('recorded-turn-done.png');
    assertNoProblems(p);
    await page.context().close();
  });

  it('renders a recorded session stream', async () => {
    const p = await openPanel(harness);
    await p.send(...recordedStream());
    const page = p.page;
    assert.equal(await text(p, '.tab.active .tab-title'), 'Make @src/cart.py total() respect quantities an…');
    assert.match(await text(p, '.msg.user .bubble'), /respect quantities/);
    assert.equal(await page.locator('.msg.user .chip').count(), 1);
    // Markdown: inline code, strong, heading, ordered list, fenced code with actions.
    const agent = page.locator('.msg.agent').first();
    assert.equal(await agent.locator('code.inline-code').first().textContent(), 'src/cart.py');
    assert.equal(await agent.locator('strong').first().textContent(), 'quantities');
    assert.equal(await agent.locator('h4').textContent(), 'Plan');
    assert.equal(await agent.locator('ol > li').count(), 3);
    assert.equal(await agent.locator('.codeblock .codeblock-lang').textContent(), 'python');
    assert.match((await agent.locator('.codeblock code').textContent()) ?? '', /^def total\(items, discount=Decimal\("0"\)\):/);
    // Tool cards with their status.
    assert.equal(await page.locator('[data-tool-call-id="toolu_01"] .status-icon.completed').count(), 1);
    assert.equal(await page.locator('[data-tool-call-id="toolu_03"] .status-icon.failed').count(), 1);
    assert.equal(await page.locator('[data-tool-call-id="toolu_03"] .tool-command').textContent(), '$ pytest -q tests/test_cart.py');
    // The read's output is collapsed until its header is clicked.
    const readBody = page.locator('[data-tool-call-id="toolu_01"] .tool-body');
    assert.equal(await readBody.isVisible(), false);
    await page.locator('[data-tool-call-id="toolu_01"] .tool-head').click();
    assert.equal(await readBody.isVisible(), true);
    await page.locator('[data-tool-call-id="toolu_01"] .tool-head').click();
    // Plan (collapsed while a question waits, naming the step in progress), meter, mode picker,
    // selection chip.
    assert.equal(await page.locator('.plan-head').getAttribute('aria-expanded'), 'false');
    assert.equal(await page.locator('.plan-entry').count(), 0);
    assert.equal(await text(p, '.plan-current'), 'Multiply prices by quantities');
    await p.screenshot('panel-plan-collapsed.png');
    await page.locator('.plan-head').click();
    assert.equal(await page.locator('.plan-head').getAttribute('aria-expanded'), 'true');
    assert.equal(await page.locator('.plan-entry').count(), 4);
    assert.equal(await text(p, '.plan-progress'), '1/4');
    assert.equal(await text(p, '.meter-label'), '24% context');
    assert.equal(await page.locator('.mode-select').inputValue(), 'default');
    assert.equal(await page.locator('.mode-select option').count(), 4);
    // Each mode says what it does.
    assert.equal(await page.locator('.mode-select option[value="acceptEdits"]').textContent(), 'Accept edits — Apply file edits without asking');
    assert.match(await text(p, '.chip.toggle'), /cart\.py:4-9/);
    // Running: Stop shown, Send hidden.
    assert.equal(await page.locator('.stop').isVisible(), true);
    assert.equal(await page.locator('.send').isVisible(), false);
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, 0));
    await p.screenshot('panel-session-dark.png');
    assertNoProblems(p);
    await page.context().close();
  });

  it('completes slash commands and shows a compaction with its summary', async () => {
    const p = await openPanel(harness);
    const session = createSession({
      id: SESSION_ID,
      commands: [
        { name: 'compact', description: 'Summarise the conversation', input: { hint: 'focus' } },
        { name: 'context', description: 'Show context use' },
        { name: 'cost', description: 'Tokens used' },
      ],
    });
    await p.send(
      { type: 'snapshot', snapshot: { sessions: [], server: { phase: 'running', version: '0.1.0' }, history: [], editedProposals: false } },
      { type: 'sessionAdded', session, activate: true },
    );
    const page = p.page;
    const box = page.locator('textarea.prompt');
    await box.click();
    await box.pressSequentially('/co');
    assert.deepEqual(await page.locator('.command-item .mention-label').allTextContents(), ['/compact', '/context', '/cost']);
    await box.press('ArrowDown');
    await box.press('Tab');
    assert.equal(await box.inputValue(), '/context ');
    assert.equal(await page.locator('.mention-list').isVisible(), false);
    await box.fill('');
    await box.pressSequentially('fix /co');
    assert.equal(await page.locator('.command-item:visible').count(), 0, 'only at the start of the prompt');
    await box.fill('');
    await box.pressSequentially('/compact');
    await box.press('Enter');
    const sent = await p.waitForPost((m) => m.type === 'prompt', 'a prompt');
    assert.equal(sent.type === 'prompt' ? sent.text : '', '/compact');
    await p.send({
      type: 'sessionUpdate',
      sessionId: SESSION_ID,
      update: { sessionUpdate: 'context_compacted', trigger: 'manual', tokensBefore: 182_000, tokensAfter: 31_000, promptsKept: 4, files: 7, summary: 'Goal: ship the cart fix.' },
    });
    const notice = page.locator('.notice .notice-detail');
    assert.equal(await notice.locator('summary').textContent(), 'Compacted: 182k → 31k tokens; kept 4 instructions, 7 files');
    assert.equal(await notice.locator('.notice-detail-text').isVisible(), false);
    await notice.locator('summary').click();
    assert.equal(await notice.locator('.notice-detail-text').textContent(), 'Goal: ship the cart fix.');
    assertNoProblems(p);
    await page.context().close();
  });

  it("shows /memory's list of memory files as a table", async () => {
    const p = await openPanel(harness);
    const setup = recordedStream().filter((m) => m.type === 'snapshot' || m.type === 'sessionAdded' || m.type === 'turnStarted');
    await p.send(...setup);
    // The server's answer to /memory (the listing, then which file was opened).
    const listing = [
      '**Memory files in effect** (2, about 40 tokens)',
      '',
      '| File | Scope | Tokens | Imports |',
      '| --- | --- | ---: | --- |',
      '| `CLAUDE.md` | project | 25 | `docs/guide.md` |',
      '| `docs/guide.md` | project, imported by `CLAUDE.md` | 15 |  |',
      '',
      '',
      'Opened `/home/me/shop/CLAUDE.md` in the editor.',
    ].join('\n');
    await p.send({ type: 'sessionUpdate', sessionId: SESSION_ID, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: listing } } });
    const page = p.page;
    const table = page.locator('.msg.agent table').last();
    assert.deepEqual(await table.locator('th').allTextContents(), ['File', 'Scope', 'Tokens', 'Imports']);
    assert.deepEqual(await table.locator('tbody tr td:first-child').allTextContents(), ['CLAUDE.md', 'docs/guide.md']);
    assert.match((await page.locator('.msg.agent').last().textContent()) ?? '', /Opened \/home\/me\/shop\/CLAUDE\.md in the editor\./);
    await p.screenshot('memory-listing.png');
    assertNoProblems(p);
    await page.context().close();
  });

  it('renames the tab when the model wrote a title', async () => {
    const p = await openPanel(harness);
    const setup = recordedStream().filter((m) => m.type === 'snapshot' || m.type === 'sessionAdded' || m.type === 'turnStarted');
    await p.send(...setup);
    const page = p.page;
    const first = await text(p, '.tab.active .tab-title');
    assert.notEqual(first, 'Fix the cart total');
    await p.send({ type: 'sessionUpdate', sessionId: SESSION_ID, update: { sessionUpdate: 'session_info_update', title: 'Fix the cart total' } });
    assert.equal(await text(p, '.tab.active .tab-title'), 'Fix the cart total');
    assert.equal(await page.locator('.tab.active .tab-button').getAttribute('title'), 'Fix the cart total');
    assertNoProblems(p);
    await page.context().close();
  });

  it('shows a retried model request until the answer starts', async () => {
    const p = await openPanel(harness);
    const setup = recordedStream().filter((m) => m.type === 'snapshot' || m.type === 'sessionAdded' || m.type === 'turnStarted');
    await p.send(...setup);
    const page = p.page;
    await p.send({
      type: 'sessionUpdate',
      sessionId: SESSION_ID,
      update: { sessionUpdate: 'model_retry', attempt: 2, maxRetries: 4, delayMs: 3000, error: 'overloaded_error', status: 529, message: 'The model endpoint answered HTTP 529' },
    });
    assert.equal(await text(p, '.retry-status'), 'Retrying (2/4) in 3 s — overloaded_error');
    assert.equal(await page.locator('.retry-status').getAttribute('role'), 'status');
    await p.screenshot('panel-retrying.png');
    await p.send({ type: 'sessionUpdate', sessionId: SESSION_ID, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Here.' } } });
    assert.equal(await page.locator('.retry-status').count(), 0, 'the answer clears it');
    assertNoProblems(p);
    await page.context().close();
  });

  it('streams Markdown as chunks arrive', async () => {
    const p = await openPanel(harness);
    const stream = recordedStream();
    const setup = stream.filter((m) => m.type === 'snapshot' || m.type === 'sessionAdded' || m.type === 'turnStarted');
    await p.send(...setup);
    const page = p.page;
    const seen: string[] = [];
    for (const chunk of ANSWER_CHUNKS.slice(0, 4)) {
      await p.send({ type: 'sessionUpdate', sessionId: SESSION_ID, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: chunk } } });
      seen.push((await page.locator('.msg.agent').textContent()) ?? '');
    }
    assert.ok(seen.every((s, i) => i === 0 || s.length > (seen[i - 1] ?? '').length), 'each chunk adds text');
    // The fence opened in chunk 4 is still open: an unfinished code block, with the cursor.
    assert.equal(await page.locator('.msg.agent.streaming').count(), 1);
    assert.equal(await page.locator('.codeblock.open').count(), 1);
    await p.send({ type: 'sessionUpdate', sessionId: SESSION_ID, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: ANSWER_CHUNKS[4] as string } } });
    assert.equal(await page.locator('.codeblock .codeblock-lang').textContent(), 'python', 'the language split across chunks is joined');
    await p.screenshot('panel-streaming.png');
    await p.send({ type: 'sessionUpdate', sessionId: SESSION_ID, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: ANSWER_CHUNKS[5] as string } } });
    assert.equal(await page.locator('.codeblock.open').count(), 0, 'the closing fence closes the block');
    await p.send({ type: 'turnEnded', sessionId: SESSION_ID, result: { stopReason: 'end_turn', usage: { inputTokens: 5120, outputTokens: 380 } } });
    assert.equal(await page.locator('.msg.agent.streaming').count(), 0);
    assert.equal(await page.locator('.send').isVisible(), true);
    assert.equal(await text(p, '.tokens'), '5.1k in · 380 out');
    // Copy and insert on a code block post the block's text.
    await page.locator('.codeblock [data-action="copy"]').click();
    await page.locator('.codeblock [data-action="insert"]').click();
    const posted = await p.posted();
    const code = 'def total(items, discount=Decimal("0")):\n    ...';
    assert.deepEqual(posted.find((m) => m.type === 'copy'), { type: 'copy', text: code });
    assert.deepEqual(posted.find((m) => m.type === 'insert'), { type: 'insert', text: code });
    assertNoProblems(p);
    await page.context().close();
  });

  it('shows a permission request and posts the chosen option', async () => {
    const p = await openPanel(harness);
    await p.send(...recordedStream());
    const page = p.page;
    const card = page.locator('[data-tool-call-id="toolu_02"]');
    assert.equal(await card.locator('.permission.pending').count(), 1);
    assert.equal(await card.locator('.permission-reason-text').textContent(), PERMISSION_REQUEST.reason);
    assert.equal(await card.locator('.permission-origin').textContent(), 'Asked by the default policy');
    assert.equal(await card.locator('.diff-line.add').count() > 0, true, 'the diff is shown inline');
    assert.equal(await card.locator('.diff-stat').first().textContent(), '+4 −6');
    // A long line wraps inside the card instead of being cut off.
    const wide = await card.locator('.diff-body').evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.equal(wide, 0, 'no horizontal overflow in the diff');
    assert.deepEqual(await card.locator('.permission > .permission-actions .button').allTextContents(), ['Allow', 'Reject']);
    assert.deepEqual(await card.locator('.permission-always .button').allTextContents(), ['Always allow', 'Always reject']);
    // The rule as the user knows the file; the saved rule text is the tooltip.
    assert.deepEqual(await card.locator('.permission-always code.rule').allTextContents(), ['Edit src/cart.py']);
    assert.equal(await card.locator('.permission-always code.rule').getAttribute('title'), 'Saved as Edit(//home/dev/shop/src/cart.py)');
    assert.equal(await card.locator('.diff-head [data-action="review"]').textContent(), 'Review');
    await card.scrollIntoViewIfNeeded();
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p.screenshot('panel-permission.png');
    // Review asks the host to open the diff editor.
    await card.locator('[data-action="review"]').click();
    await p.waitForPost((m) => m.type === 'review', 'review');
    // Allow posts the allow_once option of this request.
    await card.locator('button[data-option-id="allow_once"]').click();
    const answer = await p.waitForPost((m) => m.type === 'permission', 'a permission answer');
    assert.deepEqual(answer, { type: 'permission', requestId: 'perm-1', optionId: 'allow_once' });
    assert.equal(await card.locator('.permission-actions .button').first().isDisabled(), true, 'buttons disable after a click');
    await p.send({ type: 'permissionResolved', sessionId: SESSION_ID, requestId: 'perm-1', state: 'allowed', chosen: 'Allow' });
    assert.equal(await card.locator('.permission.resolved.allowed').textContent(), 'Allow');
    assertNoProblems(p);
    await page.context().close();
  });

  it('"always": shows the rule it remembers, picks the scope, posts it', async () => {
    const p = await openPanel(harness);
    await p.send(...permissionStream(LINT_REQUEST));
    const page = p.page;
    const card = page.locator('[data-tool-call-id="toolu_lint"]');
    const always = card.locator('.permission-always');
    // The "always" answers are one click away, closed at first: the card stays light.
    assert.equal(await always.isVisible(), false);
    await card.locator('.permission-more > summary').click();
    assert.equal(await always.isVisible(), true);
    assert.equal(await card.locator('.permission-reason-text').textContent(), 'npm run lint -- --fix: npm run lint is not known to be read-only');
    assert.equal(await card.locator('.permission-reason-text code').textContent(), 'npm run lint -- --fix', 'the quoted command is code');
    assert.equal(await card.locator('.permission-origin').textContent(), 'Asked by the default policy');
    assert.deepEqual(await always.locator('code.rule').allTextContents(), ['Bash(npm run lint:*)'], 'the exact rule, before answering');
    // The offered scopes, session preselected, with what each means.
    assert.deepEqual(await always.locator('.scope-option').allTextContents(), ['Session', 'Project', 'User']);
    assert.equal(await always.locator('.scope-radio:checked').getAttribute('value'), 'session');
    assert.match((await always.locator('.scope-detail').textContent()) ?? '', /this session only/);
    await always.locator('.scope-option[data-scope="project"]').click();
    assert.equal(await always.locator('.scope-radio:checked').getAttribute('value'), 'project');
    assert.equal(await always.locator('.scope-detail').textContent(), 'Saved to .claude/settings.local.json in this project.');
    assert.equal(await always.locator('button[data-kind="allow_always"]').getAttribute('title'), 'Allow now and remember Bash(npm run lint:*) in project settings');
    // The pick survives a re-render of the card (a tool-call update while the question waits).
    await p.send({ type: 'sessionUpdate', sessionId: SESSION_ID, update: { sessionUpdate: 'tool_call_update', toolCallId: 'toolu_lint', title: 'npm run lint -- --fix (Fix lint errors)' } });
    assert.equal(await card.locator('.tool-title').textContent(), 'npm run lint -- --fix (Fix lint errors)');
    assert.equal(await always.locator('.scope-radio:checked').getAttribute('value'), 'project');
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p.screenshot('panel-permission-scope.png');
    await always.locator('button[data-kind="allow_always"]').click();
    const answer = await p.waitForPost((m) => m.type === 'permission', 'a permission answer');
    assert.deepEqual(answer, { type: 'permission', requestId: 'perm-1', optionId: 'allow_always', scope: 'project' } satisfies ToHost);
    assert.equal(await always.locator('.scope-radio').first().isDisabled(), true, 'the card is disabled after the click');
    await p.send({ type: 'permissionResolved', sessionId: SESSION_ID, requestId: 'perm-1', state: 'allowed', chosen: 'Always allow', scope: 'project' });
    assert.equal(await card.locator('.permission.resolved.allowed').textContent(), 'Always allow · saved to project settings');
    assertNoProblems(p);
    await page.context().close();
  });

  it('names the rule that asked; offers no "always allow" the server left out; scopes by keyboard', async () => {
    const p = await openPanel(harness, { theme: 'light' });
    await p.send(...permissionStream(PUSH_REQUEST));
    const page = p.page;
    const card = page.locator('[data-tool-call-id="toolu_push"]');
    assert.equal(await card.locator('.permission-reason-text').textContent(), 'The rule Bash(git push:*) asks before git push origin main (project settings)');
    assert.equal(await card.locator('.permission-origin').textContent(), 'Asked by rule Bash(git push:*) from project settings');
    assert.equal(await card.locator('.permission-origin code.rule').textContent(), 'Bash(git push:*)');
    // Who asked is behind "Why?": the reason is not said twice at first sight.
    assert.equal(await card.locator('.permission-origin').isVisible(), false);
    await card.locator('.permission-why-more > summary').click();
    assert.equal(await card.locator('.permission-origin').isVisible(), true);
    assert.equal(await card.locator('.permission-more > summary').textContent(), 'Always reject…');
    await card.locator('.permission-more > summary').click();
    assert.equal(await card.locator('button[data-kind="allow_always"]').count(), 0);
    assert.deepEqual(await card.locator('.permission-always .button').allTextContents(), ['Always reject']);
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p.screenshot('panel-permission-rule-light.png');
    // Arrow keys move through the radio group, as in any native one.
    await card.locator('.scope-radio[value="session"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    assert.equal(await card.locator('.scope-radio:checked').getAttribute('value'), 'user');
    await card.locator('button[data-kind="reject_always"]').click();
    const answer = await p.waitForPost((m) => m.type === 'permission', 'a permission answer');
    assert.deepEqual(answer, { type: 'permission', requestId: 'perm-1', optionId: 'reject_always', scope: 'user' } satisfies ToHost);
    assertNoProblems(p);
    await page.context().close();
  });

  it('says before the answer that the user\'s typing made the proposal stale', async () => {
    const p = await openPanel(harness);
    await p.send(...recordedStream());
    const page = p.page;
    const card = page.locator('[data-tool-call-id="toolu_02"]');
    assert.equal(await card.locator('.proposal-note').count(), 0);
    const proposal = (status: 'rebased' | 'stale', message: string): ToWebview => ({
      type: 'sessionUpdate',
      sessionId: SESSION_ID,
      update: {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'toolu_02',
        proposal: [{ path: '/home/dev/shop/src/cart.py', status, message, version: 7, ...(status === 'stale' ? { conflicts: [{ start: 5, end: 6 }] } : {}) }],
      },
    });
    await p.send(proposal('rebased', 'You changed other lines of src/cart.py; the proposal still applies and keeps your changes.'));
    assert.match(await text(p, '[data-tool-call-id="toolu_02"] .proposal-note.rebased'), /still applies/);
    const stale = 'Stale: you changed lines 5-6 of src/cart.py, which the proposal changes too; approving it will fail. Reject it (or undo your change).';
    await p.send(proposal('stale', stale));
    assert.equal(await card.locator('.proposal-note').count(), 1);
    assert.equal(await text(p, '[data-tool-call-id="toolu_02"] .proposal-note.stale'), stale);
    assert.equal(await card.locator('.proposal-note.stale').getAttribute('role'), 'alert');
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p.screenshot('panel-permission-stale.png');
    assertNoProblems(p);
    await page.context().close();
  });

  it('an error is a short message with its details folded, Retry and Open log', async () => {
    const p = await openPanel(harness);
    await p.send(...recordedStream());
    const page = p.page;
    await p.send({ type: 'permissionResolved', sessionId: SESSION_ID, requestId: 'perm-1', state: 'cancelled' });
    const error =
      "Cannot reach the model endpoint http://127.0.0.1:18499: All connection attempts failed (ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 18499)) (after 4 retries)";
    await p.send({ type: 'turnEnded', sessionId: SESSION_ID, result: { error } });
    const notice = page.locator('.notice.error').last();
    assert.equal(await notice.locator('summary').textContent(), 'Cannot reach the model endpoint http://127.0.0.1:18499: All connection attempts failed.');
    assert.equal(await notice.locator('.notice-detail-text').isVisible(), false, 'details are folded');
    assert.equal(await notice.locator('.notice-detail-text').textContent(), error);
    assert.deepEqual(await notice.locator('.notice-actions button').allTextContents(), ['Retry', 'Open log']);
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p.screenshot('panel-error.png');
    await notice.locator('summary').click();
    assert.equal(await notice.locator('.notice-detail-text').isVisible(), true);
    await p.screenshot('panel-error-details.png');
    await notice.locator('button[data-action="showLog"]').click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'runAction', 'open log'), { type: 'runAction', id: 'showLog' });
    await notice.locator('button[data-action="retry"]').click();
    const retry = await p.waitForPost((m) => m.type === 'prompt', 'the retried prompt');
    assert.deepEqual(retry, {
      type: 'prompt',
      sessionId: SESSION_ID,
      text: 'Make @src/cart.py total() respect quantities and support a discount',
      mentions: [{ uri: 'file:///home/dev/shop/src/cart.py', label: 'src/cart.py' }],
      includeSelection: false,
    } satisfies ToHost);
    assertNoProblems(p);
    await page.context().close();
  });

  it('a question with one-off answers only has no "always" section', async () => {
    const p = await openPanel(harness);
    await p.send(...permissionStream({ ...LINT_REQUEST, options: LINT_REQUEST.options.filter((o) => o.kind.endsWith('_once')) }));
    const card = p.page.locator('[data-tool-call-id="toolu_lint"]');
    assert.deepEqual(await card.locator('.permission-actions .button').allTextContents(), ['Allow', 'Reject']);
    assert.equal(await card.locator('.permission-always').count(), 0);
    assertNoProblems(p);
    await p.page.context().close();
  });

  it('rejects with feedback from the keyboard', async () => {
    const p = await openPanel(harness, { theme: 'light' });
    await p.send(...recordedStream());
    const page = p.page;
    const card = page.locator('[data-tool-call-id="toolu_02"]');
    await card.locator('[data-action="feedback"]').focus();
    await page.keyboard.press('Enter');
    await page.keyboard.type('Keep the old signature; add total_with_discount instead');
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await p.screenshot('panel-feedback-light.png');
    await page.keyboard.press('Enter');
    const answer = await p.waitForPost((m) => m.type === 'permission', 'a rejection');
    assert.deepEqual(answer, {
      type: 'permission',
      requestId: 'perm-1',
      optionId: 'reject_once',
      feedback: 'Keep the old signature; add total_with_discount instead',
    });
    await p.send({ type: 'permissionResolved', sessionId: SESSION_ID, requestId: 'perm-1', state: 'rejected', chosen: 'Reject', feedback: 'Keep the old signature; add total_with_discount instead' });
    assert.match(await card.locator('.permission.resolved').textContent() ?? '', /Reject“Keep the old signature/);
    assertNoProblems(p);
    await page.context().close();
  });

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

  it('shows an MCP server form, sends what was typed, and shows the problems of a wrong answer', async () => {
    const p = await openPanel(harness);
    const session = createSession({ id: 's1' });
    await p.send({ type: 'snapshot', snapshot: { sessions: [session], activeSessionId: 's1', server: { phase: 'running' }, history: [], editedProposals: false } });
    const page = p.page;
    const requestedSchema = {
      type: 'object',
      required: ['name', 'age'],
      properties: {
        name: { type: 'string', title: 'Name', description: 'Your name', minLength: 2 },
        age: { type: 'integer', title: 'Age', minimum: 0, maximum: 150 },
        email: { type: 'string', title: 'Email', format: 'email' },
        colour: { type: 'string', title: 'Colour', enum: ['red', 'green', 'blue'], enumNames: ['Red', 'Green', 'Blue'], default: 'green' },
        subscribe: { type: 'boolean', title: 'Subscribe', default: false },
      },
    };
    await p.send({ type: 'mcpForm', form: { formId: 'form-1', server: 'ed', message: 'Create your profile', requestedSchema } });
    const card = page.locator('.mcp-form[data-form-id="form-1"]');
    await card.waitFor();
    assert.deepEqual(await card.locator('label').allTextContents(), ['Name *', 'Age *', 'Email', 'Colour', 'Subscribe']);
    assert.equal(await card.locator('input[name="email"]').getAttribute('type'), 'email');
    assert.equal(await card.locator('select[name="colour"]').inputValue(), 'green');
    await card.locator('input[name="name"]').fill('Ada');
    await card.locator('input[name="age"]').fill('36');
    await card.locator('select[name="colour"]').selectOption('blue');
    await card.locator('input[name="subscribe"]').check();
    await p.screenshot('panel-mcp-form.png');
    await card.getByRole('button', { name: 'Submit' }).click();
    const answered = await p.waitForPost((m) => m.type === 'mcpFormAnswer', 'the form answer');
    // The empty optional email is left out; the integer is sent as a number.
    assert.deepEqual(answered, {
      type: 'mcpFormAnswer',
      formId: 'form-1',
      action: 'accept',
      content: { name: 'Ada', age: 36, colour: 'blue', subscribe: true },
    } satisfies ToHost);
    await p.send({ type: 'mcpFormClosed', formId: 'form-1' });
    assert.equal(await card.count(), 0, 'the answered card goes away');

    // Asked again with the problems of a wrong answer; the user declines.
    await p.send({
      type: 'mcpForm',
      form: { formId: 'form-2', server: 'ed', message: 'Create your profile', requestedSchema, problems: ['name: at least 2 characters'] },
    });
    const again = page.locator('.mcp-form[data-form-id="form-2"]');
    await again.waitFor();
    assert.deepEqual(await again.locator('.mcp-form-problems li').allTextContents(), ['name: at least 2 characters']);
    await p.screenshot('panel-mcp-form-problems.png');
    await again.getByRole('button', { name: 'Decline' }).click();
    const declined = await p.waitForPost((m) => m.type === 'mcpFormAnswer' && m.formId === 'form-2', 'the decline');
    assert.deepEqual(declined, { type: 'mcpFormAnswer', formId: 'form-2', action: 'decline' } satisfies ToHost);
    assertNoProblems(p);
    await page.context().close();
  });

  it('explains a missing server and offers actions', async () => {
    const p = await openPanel(harness);
    const status: ToWebview = {
      type: 'serverStatus',
      status: {
        phase: 'missing',
        message: 'The lsp-agent server was not found on PATH. Install it from a clone of lsp-agent with "pipx install ./lsp-agent" (or "uv tool install ./lsp-agent"), or point the setting "lspAgent.server.path" at the executable.',
        actions: [
          { id: 'configureServer', label: 'Configure server path' },
          { id: 'openInstallGuide', label: 'Installation guide' },
          { id: 'showLog', label: 'Show log' },
        ],
      },
    };
    await p.send(status);
    const page = p.page;
    assert.equal(await page.locator('.banner.error strong').textContent(), 'lsp-agent server not found');
    await p.screenshot('panel-server-missing.png');
    await page.locator('.banner-actions button', { hasText: 'Configure server path' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'runAction', 'runAction'), { type: 'runAction', id: 'configureServer' });
    assertNoProblems(p);
    await page.context().close();
  });

  it('lists the MCP servers and approves, rejects or reconnects one', async () => {
    const p = await openPanel(harness);
    const page = p.page;
    assert.equal(await page.locator('.mcp').isVisible(), false, 'hidden without servers');
    const server = (name: string, state: string, extra: Record<string, unknown> = {}) => ({
      name,
      scope: 'project',
      transport: 'stdio',
      state,
      error: null,
      tools: 0,
      description: `npx -y ${name}-server`,
      ...extra,
    });
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12, scope: 'user' }),
        server('tracker', 'needs_approval', { error: 'a project server (.mcp.json) runs only after you approve it' }),
        server('db', 'failed', { error: 'command not found: pg-mcp\nstderr:\nboom' }),
      ],
    });
    assert.equal(await page.locator('.mcp').isVisible(), true);
    // Open by itself while a server needs attention.
    assert.equal(await text(p, '.mcp-summary'), '1/3 ready · 1 awaiting approval · 1 failed');
    assert.equal(await text(p, '[data-mcp-server="github"] .mcp-tools'), '12 tools');
    assert.match(await text(p, '[data-mcp-server="tracker"] .mcp-command'), /npx -y tracker-server/);
    assert.match(await text(p, '[data-mcp-server="db"] .mcp-error'), /command not found: pg-mcp/);
    assert.match(await text(p, '[data-mcp-server="tracker"] .mcp-reason'), /runs only after you approve it/);
    await p.screenshot('panel-mcp-servers.png');
    await page.locator('[data-mcp-server="tracker"] button', { hasText: 'Approve' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction', 'mcpAction'), { type: 'mcpAction', action: 'approve', name: 'tracker' });
    await page.locator('[data-mcp-server="db"] button', { hasText: 'Reconnect' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'reconnect', 'reconnect'), {
      type: 'mcpAction',
      action: 'reconnect',
      name: 'db',
    });
    // An HTTP server that asks for an OAuth login: a Log in button.
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12, scope: 'user' }),
        server('linear', 'needs_login', { transport: 'http', description: 'http https://mcp.example.com/mcp', error: 'the server asks for an OAuth login' }),
      ],
    });
    assert.equal(await text(p, '.mcp-summary'), '1/2 ready · 1 awaiting login');
    assert.match(await text(p, '[data-mcp-server="linear"] .mcp-state'), /needs login/);
    await p.screenshot('panel-mcp-login.png');
    await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log in' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'login', 'login'), {
      type: 'mcpAction',
      action: 'login',
      name: 'linear',
    });
    // Logged in: a Log out button (and no Log in).
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12, scope: 'user' }),
        server('linear', 'ready', { transport: 'http', tools: 3, loggedIn: true }),
      ],
    });
    await page.locator('.mcp-toggle').click(); // all ready: folded until opened
    await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log out' }).waitFor();
    assert.equal(await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log in' }).count(), 0);
    assert.equal(await page.locator('[data-mcp-server="github"] button', { hasText: 'Log out' }).count(), 0);
    await p.screenshot('panel-mcp-logout.png');
    await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log out' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'logout', 'logout'), {
      type: 'mcpAction',
      action: 'logout',
      name: 'linear',
    });
    await page.locator('.mcp-toggle').click(); // folded again
    // All ready: the section folds to its summary line.
    await p.send({ type: 'mcpServers', servers: [server('github', 'ready', { tools: 12 })] });
    assert.equal(await text(p, '.mcp-summary'), '1/1 ready');
    assert.equal(await page.locator('.mcp-list').count(), 0);
    await page.locator('.mcp-toggle').click();
    await page.locator('.mcp-list li').first().waitFor(); // rendered on the next frame
    assert.equal(await page.locator('.mcp-list li').count(), 1);
    assertNoProblems(p);
    await page.context().close();
  });

  it('turns an MCP server of any scope off and on', async () => {
    const p = await openPanel(harness);
    const page = p.page;
    const server = (name: string, state: string, extra: Record<string, unknown> = {}) => ({
      name,
      scope: 'user',
      transport: 'stdio',
      state,
      error: null,
      tools: 0,
      description: `npx -y ${name}-server`,
      ...extra,
    });
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12 }),
        server('db', 'disabled', { scope: 'lsp', error: 'turned off for this project (disabledMcpServers in ~/.claude.json)' }),
        server('tracker', 'disabled', { scope: 'project', error: 'rejected by the user' }),
        server('blocked', 'denied', { error: 'denied by the managed deniedMcpServers list' }),
      ],
    });
    assert.equal(await text(p, '.mcp-summary'), '1/4 ready · 2 off');
    await page.locator('.mcp-toggle').click();
    await page.locator('.mcp-list li').first().waitFor();
    // Why a server is off is information, not a fault: the muted style, not the error red.
    assert.match(await text(p, '[data-mcp-server="db"] .mcp-reason'), /disabledMcpServers/);
    assert.equal(await page.locator('.mcp-list .mcp-error').count(), 0, 'no server here failed');
    const colour = (selector: string): Promise<string> =>
      page.locator(selector).first().evaluate((el) => getComputedStyle(el).color);
    assert.equal(await colour('[data-mcp-server="db"] .mcp-reason'), await colour('[data-mcp-server="db"] .mcp-scope'));
    assert.equal(await page.locator('[data-mcp-server="db"] .codicon-circle-slash').count(), 1);
    assert.equal(await page.locator('[data-mcp-server="blocked"] button').count(), 0, 'managed deny: nothing to toggle');
    await p.screenshot('panel-mcp-disabled.png');
    await page.locator('[data-mcp-server="github"] button', { hasText: 'Disable' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'disable', 'disable'), {
      type: 'mcpAction',
      action: 'disable',
      name: 'github',
    });
    await page.locator('[data-mcp-server="db"] button', { hasText: 'Enable' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'enable', 'enable'), {
      type: 'mcpAction',
      action: 'enable',
      name: 'db',
    });
    // A rejected project server comes back by approval, not by a switch.
    assert.equal(await page.locator('[data-mcp-server="tracker"] button', { hasText: 'Enable' }).count(), 0);
    await page.locator('[data-mcp-server="tracker"] button', { hasText: 'Approve' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'approve', 'approve'), {
      type: 'mcpAction',
      action: 'approve',
      name: 'tracker',
    });
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

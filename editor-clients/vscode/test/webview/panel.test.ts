/**
 * The chat webview in headless Chromium: renders a recorded session (a turn replayed from the
 * real server, slash commands, /memory, titles, retries), streams Markdown, shows errors and the
 * server banner. Screenshots go to test-artifacts/. Permission questions, the composer and the
 * MCP servers have their own suites (permission, composer, mcp .test.ts).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ANSWER_CHUNKS, SESSION_ID, recordedStream } from '../fixtures/sessionStream';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, assertNoProblems, openPanel, startHarness, text, type Harness } from './harness';
import type { ToHost, ToWebview } from '../../src/shared/messages';
import { createSession } from '../../src/shared/state';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

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
});

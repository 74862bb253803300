/**
 * The chat webview's permission questions in headless Chromium: the buttons post the right
 * answers, "always" shows the rule it keeps and its scope, the rule that asked is named, a stale
 * proposal is said before the answer, feedback is typed from the keyboard.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LINT_REQUEST, PERMISSION_REQUEST, PUSH_REQUEST, SESSION_ID, permissionStream, recordedStream } from '../fixtures/sessionStream';
import { assertNoProblems, openPanel, startHarness, text, type Harness } from './harness';
import type { ToHost, ToWebview } from '../../src/shared/messages';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

describe('chat webview: permission questions', () => {
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
});

/**
 * The chat webview in headless Chromium replaying what the panel received from the real server
 * run with `--offline` (recorded by test/integration/offline.test.ts with
 * LSP_AGENT_RECORD_OFFLINE): the trial model's answer about the file, its two-hunk edit
 * approved, its polite answer to a rejected command. Screenshot: test-artifacts/offline-trial.png.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ToWebview } from '../../src/shared/messages';
import { ROOT, openPanel, startHarness, type Harness } from './harness';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

describe('chat webview with the offline trial model', () => {
  it('shows the answer, the two-hunk edit and the polite refusal', async () => {
    const recorded = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'recorded-offline.json'), 'utf8')) as ToWebview[];
    const p = await openPanel(harness, { height: 1400 });
    const page = p.page;
    const asked = recorded.findIndex((m) => m.type === 'permissionRequested');
    assert.ok(asked > 0);
    await p.send(...recorded.slice(0, asked + 1));
    // The edit's approval card shows its diff with two hunks.
    const card = page.locator('[data-tool-call-id="toolu_trial_003"]');
    assert.equal(await card.locator('.permission.pending').count(), 1);
    assert.equal(await card.locator('.hunk').count(), 2);
    await p.send(...recorded.slice(asked + 1));
    const agent = (await page.locator('.msg.agent').allTextContents()).join('\n');
    assert.match(agent, /calc\.py has 13 lines\. It defines add, sub, mul\./);
    assert.match(agent, /Done: the edit of calc\.py was applied/);
    assert.match(agent, /OK, I won't\. The Bash call did not run/);
    assert.match(agent, /offline trial model/);
    assert.equal(await page.locator('[data-tool-call-id="toolu_trial_003"] .permission.resolved.allowed').count(), 1);
    assert.equal(await page.locator('[data-tool-call-id="toolu_trial_004"] .permission.resolved').count(), 1);
    await page.locator('.transcript').evaluate((el) => el.scrollTo(0, 0));
    await p.screenshot('offline-trial.png');
    assert.deepEqual(p.problems, [], 'the page logged errors or CSP violations');
    await page.context().close();
  });
});

/**
 * A rewind whose hunks overlap the user's later typing asks through the ordinary permission
 * card (no tool call of the model stands behind it): headless Chromium shows the diff and one
 * button per answer, and a click posts that answer's id.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SESSION_ID, permissionStream } from '../fixtures/sessionStream';
import { openPanel, startHarness, type Harness } from './harness';
import type { RequestPermissionParams } from '../../src/shared/protocol';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

const APP = '/home/dev/shop/src/cart.py';
const APP_URI = `file://${APP}`;
const NOW = 'one\nTWO, and mine\nthree\n';
const REQUEST: RequestPermissionParams = {
  sessionId: SESSION_ID,
  toolCall: {
    sessionUpdate: 'tool_call',
    toolCallId: 'rewind_conflict_0123456789ab',
    title: 'Rewind: conflicts in src/cart.py',
    kind: 'edit',
    status: 'pending',
    content: [{ type: 'diff', path: APP, uri: APP_URI, oldText: NOW, newText: 'one\ntwo\nthree\n' }],
    rawInput: { file_path: APP, regions: 1 },
  },
  options: [
    { optionId: 'checkpoint', name: "Restore the checkpoint's lines", kind: 'allow_once' },
    { optionId: 'mine', name: 'Keep my lines', kind: 'allow_once' },
    { optionId: 'markers', name: 'Keep both with conflict markers', kind: 'reject_once' },
  ],
  reason: 'You changed 1 region(s) of src/cart.py since the checkpoint that the rewind also reverts.',
  suggestedRules: [],
  scopes: [],
};

describe('rewind conflict review', () => {
  it('shows the diff and posts the answer picked', async () => {
    const p = await openPanel(harness);
    // The server sends no tool_call update for this question: only the permission request.
    const stream = permissionStream(REQUEST).filter((m) => m.type !== 'sessionUpdate');
    await p.send(...stream);
    const card = p.page.locator('[data-tool-call-id="rewind_conflict_0123456789ab"]');
    assert.equal(await card.locator('.permission.pending').count(), 1);
    assert.equal(await card.locator('.diff-line.add').count() > 0, true, 'the diff is shown');
    assert.deepEqual(await card.locator('.permission > .permission-actions .button').allTextContents(), [
      "Restore the checkpoint's lines",
      'Keep my lines',
      'Keep both with conflict markers',
    ]);
    await card.locator('button[data-option-id="mine"]').click();
    const answer = await p.waitForPost((m) => m.type === 'permission', 'a permission answer');
    assert.deepEqual(answer, { type: 'permission', requestId: 'perm-1', optionId: 'mine' });
    assert.deepEqual(p.problems, [], 'the page logged errors or CSP violations');
    await p.page.context().close();
  });
});

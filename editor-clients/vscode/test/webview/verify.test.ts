/**
 * The verdict of the server's verification of an edit (docs/verification.md): a `think` tool
 * call `verify_…` whose title is the one-line verdict and which has no content (the text the
 * model gets never reaches the panel). The end-of-turn re-check of an unknown verdict updates
 * the same tool call, so the panel shows one line, once.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SESSION_ID } from '../fixtures/sessionStream';
import { openPanel, startHarness, type Harness } from './harness';
import type { ToWebview } from '../../src/shared/messages';
import type { SessionUpdate } from '../../src/shared/protocol';
import { createSession, DEFAULT_MODES } from '../../src/shared/state';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

function update(u: SessionUpdate): ToWebview {
  return { type: 'sessionUpdate', sessionId: SESSION_ID, update: u };
}

const VERIFY_ID = 'verify_1a2b3c4d_0';

/** What the server sends for a check whose editor source was late, then its re-check. */
function verifyStream(): ToWebview[] {
  const session = createSession({ id: SESSION_ID, cwd: '/home/dev/shop', modeId: 'default', availableModes: DEFAULT_MODES });
  return [
    { type: 'snapshot', snapshot: { sessions: [], server: { phase: 'running', version: '0.1.0' }, history: [], editedProposals: true } },
    { type: 'sessionAdded', session, activate: true },
    { type: 'turnStarted', sessionId: SESSION_ID, text: 'fix average', attachments: [] },
    update({ sessionUpdate: 'tool_call', toolCallId: VERIFY_ID, title: 'Checking diagnostics of calc.py', kind: 'think', status: 'in_progress' }),
    update({
      sessionUpdate: 'tool_call_update',
      toolCallId: VERIFY_ID,
      title: 'Diagnostics: unknown for calc.py (editor did not report)',
      status: 'completed',
      rawOutput: { verification: { newErrors: 0, complete: false, elapsedMs: 3000, files: [] } },
    }),
    update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Fixed the average.' } }),
    update({ sessionUpdate: 'tool_call_update', toolCallId: VERIFY_ID, title: 'Re-checking diagnostics of calc.py', status: 'in_progress' }),
    update({
      sessionUpdate: 'tool_call_update',
      toolCallId: VERIFY_ID,
      title: 'Diagnostics: no new problems in calc.py',
      status: 'completed',
      rawOutput: { verification: { newErrors: 0, complete: true, elapsedMs: 40, files: [] } },
    }),
  ];
}

describe('verification verdict', () => {
  it('is one line, shown once, updated by the re-check', async () => {
    const p = await openPanel(harness);
    await p.send(...verifyStream());
    const page = p.page;
    const card = page.locator(`[data-tool-call-id="${VERIFY_ID}"]`);
    assert.equal(await card.count(), 1, 'one card for the check and its re-check');
    assert.equal(await card.locator('.tool-title').textContent(), 'Diagnostics: no new problems in calc.py');
    assert.equal(await card.locator('.tool-body').count(), 0, 'nothing to expand');
    assert.equal(await card.locator('.status-icon.completed').count(), 1);
    const all = (await page.locator('.transcript').textContent()) ?? '';
    assert.equal(all.split('Diagnostics:').length - 1, 1, all);
    assert.ok(!all.includes('diagnostics-after-edit'), all);
    await p.screenshot('panel-verification-verdict.png');
    assert.deepEqual(p.problems, []);
    await page.context().close();
  });
});

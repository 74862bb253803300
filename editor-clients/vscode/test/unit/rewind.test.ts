import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyRewind, stampPrompts } from '../../src/rewind';
import { createSession, type UserItem } from '../../src/shared/state';

const user = (id: string, text: string): UserItem => ({ kind: 'user', id, rev: 1, text, attachments: [] });
const checkpoint = (messageId: string, prompt: string) => ({ messageId, prompt, created: 1, files: [], complete: true });

describe('rewind in the panel', () => {
  it('stamps prompts with their server ids, skipping slash commands', () => {
    const session = createSession({ id: 's' });
    session.items.push(user('u1', 'first\nmore'), user('u2', '/cost'), { kind: 'agent', id: 'a', rev: 1, text: 'ok' }, user('u3', 'second'));
    assert.equal(stampPrompts(session, [checkpoint('m1', 'first\nmore'), checkpoint('m3', 'second')]), true);
    const ids = session.items.filter((i): i is UserItem => i.kind === 'user').map((i) => i.messageId);
    assert.deepEqual(ids, ['m1', undefined, 'm3']);
    assert.equal(stampPrompts(session, [checkpoint('m1', 'first\nmore'), checkpoint('m3', 'second')]), false, 'idempotent');
  });

  it('cuts the transcript at the prompt when the conversation was rewound, and says what happened', () => {
    const session = createSession({ id: 's' });
    const first = user('u1', 'one');
    first.messageId = 'm1';
    const second = user('u2', 'two');
    second.messageId = 'm2';
    session.items.push(first, { kind: 'agent', id: 'a1', rev: 1, text: 'A' }, second, { kind: 'agent', id: 'a2', rev: 1, text: 'B' });
    const text = applyRewind(session, 'm2', {
      messageId: 'm2',
      prompt: 'two',
      restored: ['/w/a.py'],
      removed: ['/w/new.py'],
      conflicts: [{ path: '/w/b.py', uri: 'file:///w/b.py', regions: 1, reason: 'overlap' }],
      conversation: true,
    });
    assert.deepEqual(session.items.map((i) => i.id), ['u1', 'a1']);
    assert.equal(text, 'Rewound to before “two”: 1 file(s) restored; 1 removed; conflicts to resolve in b.py; the conversation is back to before it.');
    applyRewind(session, 'm1', { messageId: 'm1', prompt: 'one', conversation: false });
    assert.deepEqual(session.items.map((i) => i.id), ['u1', 'a1'], 'code only: the transcript stays');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyRewind } from '../../src/rewind';
import { applyUpdate, createSession, endTurn, startTurn, type UserItem } from '../../src/shared/state';

const user = (id: string, text: string): UserItem => ({ kind: 'user', id, rev: 1, text, attachments: [] });

describe('rewind in the panel', () => {
  it('gives each prompt its server id: from the prompt result, and from the replay', () => {
    const session = createSession({ id: 's' });
    startTurn(session, 'first', []);
    endTurn(session, { stopReason: 'end_turn', messageId: 'm1' });
    startTurn(session, '/cost', []);
    endTurn(session, { stopReason: 'end_turn' });
    const ids = session.items.filter((i): i is UserItem => i.kind === 'user').map((i) => i.messageId);
    assert.deepEqual(ids, ['m1', undefined], 'a slash command has no id');

    const loaded = createSession({ id: 't' });
    applyUpdate(loaded, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'old prompt' }, messageId: 'm0' });
    const [item] = loaded.items;
    assert.ok(item?.kind === 'user' && item.messageId === 'm0');
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

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { isChoice, pickChoice } from '../../src/permissions/choice';
import type { RequestPermissionParams } from '../../src/shared/protocol';
import { fake } from '../fake-vscode/index';

const target: RequestPermissionParams = {
  sessionId: 's',
  toolCall: { sessionUpdate: 'tool_call', toolCallId: 'memory_target_0123456789ab', title: 'Add to memory: run make check' },
  options: [
    { optionId: 'project', name: 'Project memory (/p/CLAUDE.md)', kind: 'allow_once' },
    { optionId: 'local', name: 'Project memory (local) (/p/CLAUDE.local.md)', kind: 'allow_once' },
    { optionId: 'user', name: 'User memory (~/.claude/CLAUDE.md)', kind: 'allow_once' },
    { optionId: 'cancel', name: 'Cancel', kind: 'reject_once' },
  ],
  reason: 'Add this note to a memory file',
};

describe('memory-file choices', () => {
  beforeEach(() => fake.reset());

  it('only the memory questions are choices; tool calls keep the approval card', () => {
    assert.equal(isChoice(target), true);
    assert.equal(isChoice({ ...target, toolCall: { ...target.toolCall, toolCallId: 'memory_open_aa' } }), true);
    assert.equal(isChoice({ ...target, toolCall: { ...target.toolCall, toolCallId: 'toolu_01' } }), false);
  });

  it('shows a quick pick of the option names and answers with the picked id', async () => {
    fake.answers.push({ label: 'Project memory (local) (/p/CLAUDE.local.md)', optionId: 'local' });
    assert.deepEqual(await pickChoice(target), { outcome: { outcome: 'selected', optionId: 'local' } });
    const [items, options] = fake.callsOf('showQuickPick')[0] as [{ label: string }[], { title: string }];
    assert.deepEqual(items.map((i) => i.label), target.options.map((o) => o.name));
    assert.equal(options.title, 'lsp-agent: Add to memory: run make check');
  });

  it('dismissing the quick pick cancels', async () => {
    fake.answers.push(undefined);
    assert.deepEqual(await pickChoice(target), { outcome: { outcome: 'cancelled' } });
  });
});

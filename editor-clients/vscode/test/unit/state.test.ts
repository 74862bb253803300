import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addPermission,
  applyUpdate,
  compactionLine,
  createSession,
  endTurn,
  formatTokens,
  matchingCommands,
  pendingPermissions,
  resolvePermission,
  startTurn,
  titleFromPrompt,
  type ToolItem,
  splitError,
} from '../../src/shared/state';

const chunk = (text: string, messageId?: string) =>
  ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text }, ...(messageId ? { messageId } : {}) }) as const;

describe('session reducer', () => {
  it('joins streamed chunks into one message and bumps its revision', () => {
    const s = createSession({ id: 's' });
    startTurn(s, 'hi', []);
    applyUpdate(s, chunk('Hel'));
    applyUpdate(s, chunk('lo'));
    const agent = s.items[1];
    assert.ok(agent && agent.kind === 'agent');
    assert.equal(agent.text, 'Hello');
    assert.equal(agent.rev, 2);
    assert.equal(s.items.length, 2);
  });

  it('starts a new message when the message id changes or a tool call came between', () => {
    const s = createSession({ id: 's' });
    applyUpdate(s, chunk('a', 'm1'));
    applyUpdate(s, chunk('b', 'm2'));
    applyUpdate(s, { sessionUpdate: 'tool_call', toolCallId: 't', title: 'Read x', kind: 'read', status: 'pending' });
    applyUpdate(s, chunk('c'));
    assert.deepEqual(s.items.map((i) => i.kind), ['agent', 'agent', 'tool', 'agent']);
  });

  it('merges tool call updates by id, keeping unchanged fields', () => {
    const s = createSession({ id: 's' });
    applyUpdate(s, { sessionUpdate: 'tool_call', toolCallId: 't', title: 'Run tests', kind: 'execute', status: 'pending', rawInput: { command: 'pytest' } });
    applyUpdate(s, { sessionUpdate: 'tool_call_update', toolCallId: 't', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'ok' } }] });
    const tool = s.items[0] as ToolItem;
    assert.equal(tool.title, 'Run tests');
    assert.equal(tool.status, 'completed');
    assert.equal(tool.content.length, 1);
    assert.deepEqual(tool.rawInput, { command: 'pytest' });
  });

  it('tracks plan, usage and mode', () => {
    const s = createSession({ id: 's' });
    applyUpdate(s, { sessionUpdate: 'plan', entries: [{ content: 'x', status: 'pending' }] });
    applyUpdate(s, { sessionUpdate: 'usage_update', used: 10, size: 100 });
    applyUpdate(s, { sessionUpdate: 'current_mode_update', currentModeId: 'plan' });
    assert.deepEqual(s.plan, [{ content: 'x', status: 'pending' }]);
    assert.deepEqual(s.context, { used: 10, size: 100 });
    assert.equal(s.modeId, 'plan');
    assert.equal(applyUpdate(s, { sessionUpdate: 'something_new' } as never), false, 'unknown updates are ignored');
  });

  it('keeps advertised commands and shows a compaction as one expandable notice', () => {
    const s = createSession({ id: 's', commands: [{ name: 'compact', description: 'Compact', input: { hint: 'focus' } }] });
    assert.deepEqual(matchingCommands(s, 'co').map((c) => c.name), ['compact']);
    applyUpdate(s, {
      sessionUpdate: 'available_commands_update',
      availableCommands: [
        { name: 'compact', description: 'Compact', input: { hint: 'focus' } },
        { name: 'context', description: 'Context' },
        { name: 'clear', description: 'Clear' },
      ],
    });
    assert.deepEqual(matchingCommands(s, 'co').map((c) => c.name), ['compact', 'context']);
    assert.deepEqual(matchingCommands(s, 'x'), []);
    assert.equal(
      applyUpdate(s, {
        sessionUpdate: 'context_compacted',
        trigger: 'auto',
        tokensBefore: 182_000,
        tokensAfter: 31_000,
        promptsKept: 4,
        files: 7,
        summary: 'Goal: ship.',
      }),
      true,
    );
    const notice = s.items[s.items.length - 1];
    assert.equal(notice?.kind, 'notice');
    assert.equal(notice?.kind === 'notice' ? notice.text : '', 'Compacted: 182k → 31k tokens; kept 4 instructions, 7 files');
    assert.equal(notice?.kind === 'notice' ? notice.detail : '', 'Goal: ship.');
    assert.equal(compactionLine({ tokensBefore: 900, tokensAfter: 10, promptsKept: 1, files: 1 }), 'Compacted: 900 → 10 tokens; kept 1 instruction, 1 file');
  });

  it('ignores the echoed prompt during a turn and replays user chunks otherwise', () => {
    const s = createSession({ id: 's' });
    startTurn(s, 'question', []);
    applyUpdate(s, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'question' } });
    assert.equal(s.items.length, 1);
    endTurn(s, { stopReason: 'end_turn' });
    const replay = createSession({ id: 'r' });
    applyUpdate(replay, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'old ' } });
    applyUpdate(replay, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'prompt' } });
    assert.equal(replay.items.length, 1);
    assert.equal(replay.title, 'old');
    assert.equal(replay.items[0]?.kind === 'user' && replay.items[0].text, 'old prompt');
  });

  it('attaches permission questions to tool cards and resolves them', () => {
    const s = createSession({ id: 's' });
    const options = [{ optionId: 'allow_once', name: 'Allow', kind: 'allow_once' as const }];
    addPermission(s, 'perm-1', { sessionId: 's', toolCall: { sessionUpdate: 'tool_call', toolCallId: 't', title: 'Edit a.py', kind: 'edit' }, options, reason: 'asks before edits' });
    assert.equal(pendingPermissions(s).length, 1);
    // An older server sends no rule, source, suggestions or scopes: "always" is for the session.
    assert.deepEqual((s.items[0] as ToolItem).permission, {
      requestId: 'perm-1',
      reason: 'asks before edits',
      options,
      suggestedRules: [],
      ruleLabels: [],
      scopes: ['session'],
      state: 'pending',
    });
    resolvePermission(s, 'perm-1', { state: 'allowed', chosen: 'Allow' });
    assert.equal(pendingPermissions(s).length, 0);
    assert.equal((s.items[0] as ToolItem).permission?.chosen, 'Allow');
  });

  it('keeps who asked, the suggested rules and the offered scopes; records the chosen scope', () => {
    const s = createSession({ id: 's' });
    const options = [
      { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' as const },
      { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' as const },
    ];
    addPermission(s, 'perm-2', {
      sessionId: 's',
      toolCall: { sessionUpdate: 'tool_call', toolCallId: 'b', title: 'git push origin main', kind: 'execute' },
      options,
      reason: 'the rule Bash(git push:*) asks before `git push origin main` (project settings)',
      rule: 'Bash(git push:*)',
      source: 'project',
      suggestedRules: ['Bash(git push:*)', '', 'Edit(//home/dev/shop/a.py)'],
      suggestedRuleLabels: ['Bash(git push:*)', 'x', 'Edit a.py'],
      scopes: ['project', 'session', 'galaxy' as never, 'project'],
    });
    const perm = (s.items[0] as ToolItem).permission;
    assert.equal(perm?.rule, 'Bash(git push:*)');
    assert.equal(perm?.source, 'project');
    assert.deepEqual(perm?.suggestedRules, ['Bash(git push:*)', 'Edit(//home/dev/shop/a.py)'], 'empty rules are dropped');
    assert.deepEqual(perm?.ruleLabels, ['Bash(git push:*)', 'Edit a.py'], 'each label stays with its rule');
    assert.deepEqual(perm?.scopes, ['project', 'session'], 'unknown and repeated scopes are dropped');
    resolvePermission(s, 'perm-2', { state: 'allowed', chosen: 'Always allow', scope: 'project' });
    assert.equal((s.items[0] as ToolItem).permission?.scope, 'project');
  });

  it('ends a turn: adds usage, notices for unusual stops, closes what was left open', () => {
    const s = createSession({ id: 's' });
    startTurn(s, 'go', []);
    applyUpdate(s, { sessionUpdate: 'tool_call', toolCallId: 't', title: 'Bash', status: 'in_progress' });
    addPermission(s, 'p', { sessionId: 's', toolCall: { sessionUpdate: 'tool_call', toolCallId: 'u', title: 'Edit' }, options: [] });
    endTurn(s, { stopReason: 'cancelled', usage: { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 5 } });
    assert.equal(s.running, false);
    assert.deepEqual(s.tokens, { input: 100, output: 20, cacheRead: 5, cacheCreation: 0 });
    assert.equal((s.items[1] as ToolItem).status, 'failed');
    assert.equal((s.items[2] as ToolItem).permission?.state, 'cancelled');
    assert.deepEqual(s.items.at(-1), { kind: 'notice', id: 'notice-2', rev: 1, level: 'info', text: 'Stopped.' });
    endTurn(s, { error: 'Model error: overloaded' });
    assert.equal(s.items.at(-1)?.kind === 'notice' && s.items.at(-1)?.rev, 1);
  });

  it('takes the title the model wrote from session_info_update', () => {
    const s = createSession({ id: 's' });
    startTurn(s, 'please fix the flaky parser test in tests/test_parse.py', []);
    assert.equal(s.title, 'please fix the flaky parser test in tests/test_…');
    assert.equal(applyUpdate(s, { sessionUpdate: 'session_info_update', title: 'Fix flaky parser test' }), true);
    assert.equal(s.title, 'Fix flaky parser test');
    assert.equal(applyUpdate(s, { sessionUpdate: 'session_info_update' }), false);
    assert.equal(s.title, 'Fix flaky parser test');
  });

  it('titles chats and formats token counts', () => {
    assert.equal(titleFromPrompt('  fix\nthe bug  '), 'fix');
    assert.equal(titleFromPrompt(''), 'New chat');
    assert.equal(titleFromPrompt('x'.repeat(60)).length, 48);
    assert.deepEqual([0, 999, 1000, 9_999, 12_345, 999_999, 2_500_000].map(formatTokens), ['0', '999', '1.0k', '10k', '12k', '1.0M', '2.5M']);
  });
});

describe('splitError', () => {
  it('keeps the first clause and folds the exception chain and retry count', () => {
    const full = "Cannot reach the model endpoint http://127.0.0.1:18499: All connection attempts failed (ConnectionRefusedError: [Errno 111] Connect call failed) (after 4 retries)";
    assert.deepEqual(splitError(full), { text: 'Cannot reach the model endpoint http://127.0.0.1:18499: All connection attempts failed.', detail: full });
  });
  it('leaves a short actionable message whole', () => {
    const full = 'No credentials for the model endpoint https://api.anthropic.com: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN';
    assert.deepEqual(splitError(full), { text: `${full}.` });
  });
});

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PermissionAnswerError, PermissionBroker, optionOfKind, type PermissionResolution } from '../../src/permissions/broker';
import type { RequestPermissionParams } from '../../src/shared/protocol';
import { CancellationTokenSource } from '../fake-vscode/index';

const params: RequestPermissionParams = {
  sessionId: 's',
  toolCall: { sessionUpdate: 'tool_call', toolCallId: 't', title: 'Bash: rm -rf build' },
  options: [
    { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' },
    { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  ],
  reason: 'Bash asks',
};

describe('PermissionBroker', () => {
  it('resolves with the chosen option, feedback and edited text', async () => {
    const broker = new PermissionBroker();
    const resolutions: PermissionResolution[] = [];
    broker.onDidResolve((r) => resolutions.push(r));
    const seen: string[] = [];
    broker.onDidRequest((p) => seen.push(p.requestId));
    const answer = broker.request(params);
    assert.deepEqual(seen, ['perm-1']);
    assert.equal(broker.pending().length, 1);
    broker.answer('perm-1', 'allow_once', { feedback: '  also clean dist  ', editedText: { 'file:///a': 'x' } });
    assert.deepEqual(await answer, { outcome: { outcome: 'selected', optionId: 'allow_once', feedback: 'also clean dist', editedText: { 'file:///a': 'x' } } });
    assert.deepEqual(resolutions, [{ requestId: 'perm-1', sessionId: 's', state: 'allowed', chosen: 'Allow', feedback: 'also clean dist', edited: true }]);
    assert.equal(broker.pending().length, 0);
    assert.throws(() => broker.answer('perm-1', 'allow_once'), PermissionAnswerError);
  });

  it('rejects unknown options and answers cancelled when the server cancels', async () => {
    const broker = new PermissionBroker();
    const cts = new CancellationTokenSource();
    const answer = broker.request(params, cts.token as never);
    assert.throws(() => broker.answer('perm-1', 'nope'), /has no option "nope"/);
    cts.cancel();
    assert.deepEqual(await answer, { outcome: { outcome: 'cancelled' } });
  });

  it('cancels every open question of a session', async () => {
    const broker = new PermissionBroker();
    const a = broker.request(params);
    const b = broker.request({ ...params, sessionId: 'other' });
    broker.cancelSession('s');
    assert.deepEqual(await a, { outcome: { outcome: 'cancelled' } });
    assert.equal(broker.pending().length, 1);
    broker.dispose();
    assert.deepEqual(await b, { outcome: { outcome: 'cancelled' } });
  });

  it('sends the scope with "always" answers only, defaulting to the session', async () => {
    const always: RequestPermissionParams = {
      ...params,
      options: [
        { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' },
        { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' },
        { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' },
      ],
      suggestedRules: ['Bash(rm -rf build:*)'],
      scopes: ['session', 'project'],
    };
    const broker = new PermissionBroker();
    const resolutions: PermissionResolution[] = [];
    broker.onDidResolve((r) => resolutions.push(r));

    const project = broker.request(always);
    broker.answer('perm-1', 'allow_always', { scope: 'project' });
    assert.deepEqual(await project, { outcome: { outcome: 'selected', optionId: 'allow_always', scope: 'project' } });
    assert.equal(resolutions.at(-1)?.scope, 'project');

    const byDefault = broker.request(always);
    broker.answer('perm-2', 'reject_always');
    assert.deepEqual(await byDefault, { outcome: { outcome: 'selected', optionId: 'reject_always', scope: 'session' } });

    const once = broker.request(always);
    broker.answer('perm-3', 'allow_once', { scope: 'project' });
    assert.deepEqual(await once, { outcome: { outcome: 'selected', optionId: 'allow_once' } }, 'a one-off answer carries no scope');
    assert.equal(resolutions.at(-1)?.scope, undefined);

    const notOffered = broker.request(always);
    assert.throws(() => broker.answer('perm-4', 'allow_always', { scope: 'user' }), (e: unknown) => e instanceof PermissionAnswerError && /offered: session, project/.test(e.message));
    assert.equal(broker.pending().length, 1, 'a refused answer leaves the question open');
    broker.answer('perm-4', 'allow_always', { scope: 'session' });
    assert.deepEqual(await notOffered, { outcome: { outcome: 'selected', optionId: 'allow_always', scope: 'session' } });
  });

  it('finds options by kind', () => {
    assert.equal(optionOfKind(params.options, 'reject_once')?.optionId, 'reject_once');
    assert.equal(optionOfKind([{ optionId: 'ok', name: 'OK', kind: 'allow_always' }], 'allow_once'), undefined);
  });
});

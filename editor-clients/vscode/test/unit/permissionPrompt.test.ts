import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  answerScope,
  decisionOrigin,
  defaultScope,
  describeOrigin,
  offeredScopes,
  PermissionAnswerError,
  resolvedLabel,
  scopeChoice,
  sourceName,
  splitOptions,
} from '../../src/shared/permissionPrompt';
import type { PermissionOption } from '../../src/shared/protocol';

const ALL: PermissionOption[] = [
  { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' },
  { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' },
];

describe('permission prompt: who asked', () => {
  it('names the rule and its settings layer', () => {
    const origin = decisionOrigin({ rule: 'Bash(git push:*)', source: 'project' });
    assert.deepEqual(origin, { rule: 'Bash(git push:*)', from: 'project settings' });
    assert.equal(describeOrigin(origin ?? {}), 'Asked by rule Bash(git push:*) from project settings');
    assert.equal(describeOrigin(origin ?? {}, false), 'asked by rule Bash(git push:*) from project settings');
  });

  it('names the policy when no rule asked, and nothing when the server said nothing', () => {
    assert.equal(describeOrigin(decisionOrigin({ source: 'sandbox' }) ?? {}), 'Asked by the sandbox');
    assert.equal(describeOrigin(decisionOrigin({ source: 'default' }) ?? {}), 'Asked by the default policy');
    assert.equal(describeOrigin(decisionOrigin({ rule: 'Edit(//p/a.py)' }) ?? {}), 'Asked by rule Edit(//p/a.py)');
    assert.equal(decisionOrigin({}), undefined);
    assert.equal(decisionOrigin({ rule: '  ', source: null }), undefined);
  });

  it('has a readable name for every documented source and passes unknown ones through', () => {
    const names = ['managed', 'cli', 'flagSettings', 'lsp', 'local', 'project', 'user', 'session', 'mode', 'sandbox', 'hook', 'default'].map(sourceName);
    assert.deepEqual(names, [
      'managed settings',
      'command-line flags',
      'the --settings file',
      'editor settings',
      'local project settings',
      'project settings',
      'user settings',
      'an earlier answer in this session',
      'the permission mode',
      'the sandbox',
      'a hook',
      'the default policy',
    ]);
    assert.equal(sourceName('policyServer'), 'policyServer');
  });
});

describe('permission prompt: once and always answers', () => {
  it('splits the offered options, allow before reject', () => {
    const { once, always } = splitOptions(ALL);
    assert.deepEqual(once.map((o) => o.optionId), ['allow_once', 'reject_once']);
    assert.deepEqual(always.map((o) => o.optionId), ['allow_always', 'reject_always']);
  });

  it('offers no "always" answer the server left out', () => {
    const withoutAllowAlways = ALL.filter((o) => o.kind !== 'allow_always');
    assert.deepEqual(splitOptions(withoutAllowAlways).always.map((o) => o.kind), ['reject_always']);
    const onceOnly = ALL.filter((o) => o.kind.endsWith('_once'));
    assert.deepEqual(splitOptions(onceOnly).always, []);
  });
});

describe('permission prompt: scopes', () => {
  it('keeps the offered scopes in order; session when none is offered', () => {
    assert.deepEqual(offeredScopes(['session', 'project', 'user']), ['session', 'project', 'user']);
    assert.deepEqual(offeredScopes(['user', 'bogus', 'user', 3]), ['user']);
    assert.deepEqual(offeredScopes(undefined), ['session']);
    assert.deepEqual(offeredScopes([]), ['session']);
  });

  it('preselects the session, else the first offered scope', () => {
    assert.equal(defaultScope(['project', 'session']), 'session');
    assert.equal(defaultScope(['user', 'project']), 'user');
  });

  it('says where each scope keeps the rule', () => {
    assert.match(scopeChoice('session').detail, /this session only/);
    assert.match(scopeChoice('project').detail, /\.claude\/settings\.local\.json/);
    assert.match(scopeChoice('user').detail, /~\/\.claude\/settings\.json/);
    assert.deepEqual((['session', 'project', 'user'] as const).map((s) => scopeChoice(s).label), ['Session', 'Project', 'User']);
  });

  it('answers carry a scope only for "always", and only an offered one', () => {
    const [, allowOnce, , allowAlways] = ALL as [PermissionOption, PermissionOption, PermissionOption, PermissionOption];
    const scopes = offeredScopes(['session', 'project', 'user']);
    assert.equal(answerScope(allowOnce, scopes, 'project'), undefined);
    assert.equal(answerScope(allowAlways, scopes), 'session');
    assert.equal(answerScope(allowAlways, scopes, 'project'), 'project');
    assert.throws(() => answerScope(allowAlways, ['session'], 'user'), PermissionAnswerError);
  });

  it('labels an answered question with where the rule went', () => {
    assert.equal(resolvedLabel('Always allow', 'project'), 'Always allow · saved to project settings');
    assert.equal(resolvedLabel('Always reject', 'user'), 'Always reject · saved to user settings');
    assert.equal(resolvedLabel('Always allow', 'session'), 'Always allow · for this session');
    assert.equal(resolvedLabel('Allow', undefined), 'Allow');
  });
});

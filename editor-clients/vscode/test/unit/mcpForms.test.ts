import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { McpForms } from '../../src/mcpForms';
import type { ToWebview } from '../../src/shared/messages';

const schema = { type: 'object', properties: { name: { type: 'string' } } };

function token(): { token: vscode.CancellationToken; cancel(): void } {
  let listener: (() => void) | undefined;
  const t = {
    isCancellationRequested: false,
    onCancellationRequested: (fn: () => void) => {
      listener = fn;
      return { dispose: () => (listener = undefined) };
    },
  };
  return {
    token: t as unknown as vscode.CancellationToken,
    cancel: () => {
      t.isCancellationRequested = true;
      listener?.();
    },
  };
}

describe('McpForms', () => {
  it('shows a form, resolves it once with the answer, and closes its card', async () => {
    const posted: ToWebview[] = [];
    const forms = new McpForms((m) => posted.push(m));
    const answer = forms.ask({ server: 'ed', message: 'Who?', requestedSchema: schema, problems: ['name: required'] });
    assert.deepEqual(posted[0], {
      type: 'mcpForm',
      form: { formId: 'form-1', server: 'ed', message: 'Who?', requestedSchema: schema, problems: ['name: required'] },
    });
    forms.answer('form-1', 'accept', { name: 'Ada' });
    forms.answer('form-1', 'decline'); // a second answer is ignored
    assert.deepEqual(await answer, { action: 'accept', content: { name: 'Ada' } });
    assert.deepEqual(posted.slice(1), [{ type: 'mcpFormClosed', formId: 'form-1' }]);
    assert.equal(forms.size, 0);
  });

  it('answers cancel when the server withdraws the request, and replays pending forms', async () => {
    const posted: ToWebview[] = [];
    const forms = new McpForms((m) => posted.push(m));
    const t = token();
    const withdrawn = forms.ask({ server: 'ed', message: 'One', requestedSchema: schema }, t.token);
    const open = forms.ask({ server: 'ed', message: 'Two', requestedSchema: schema, problems: [] });
    t.cancel();
    assert.deepEqual(await withdrawn, { action: 'cancel' });
    posted.length = 0;
    forms.replay();
    assert.deepEqual(posted, [{ type: 'mcpForm', form: { formId: 'form-2', server: 'ed', message: 'Two', requestedSchema: schema } }]);
    forms.answer('form-2', 'decline', { ignored: true });
    assert.deepEqual(await open, { action: 'decline' });
  });
});

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentSecurityPolicy, makeNonce, renderHtml } from '../../src/panel/html';
import { isToHost } from '../../src/shared/messages';
import { createSession } from '../../src/shared/state';
import { describeStatus } from '../../src/statusBar';

describe('webview HTML', () => {
  it('allows scripts only with the nonce and nothing remote', () => {
    const nonce = makeNonce();
    assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/);
    assert.notEqual(makeNonce(), nonce);
    const html = renderHtml({ cspSource: 'https://x.vscode-cdn.net', nonce, scriptUri: 'https://x.vscode-cdn.net/w.js', styleUri: 'https://x.vscode-cdn.net/w.css', codiconUri: 'https://x.vscode-cdn.net/c.css' });
    const csp = contentSecurityPolicy('https://x.vscode-cdn.net', nonce);
    assert.ok(html.includes(`content="${csp}"`));
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, new RegExp(`script-src 'nonce-${nonce.replace(/[+/]/g, '\\$&')}'`));
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.equal((html.match(/<script /g) ?? []).length, 1);
    assert.ok(html.includes(`<script nonce="${nonce}" src="https://x.vscode-cdn.net/w.js">`));
    assert.doesNotMatch(html, /style="/, 'no inline styles');
  });
});

describe('isToHost', () => {
  it('accepts well-formed messages and rejects the rest', () => {
    assert.equal(isToHost({ type: 'ready' }), true);
    assert.equal(isToHost({ type: 'permission', requestId: 'p', optionId: 'o', feedback: 'f' }), true);
    assert.equal(isToHost({ type: 'prompt', text: 'x', mentions: [], includeSelection: false }), true);
    assert.equal(isToHost({ type: 'permission', requestId: 'p' }), false);
    assert.equal(isToHost({ type: 'permission', requestId: 'p', optionId: 'allow_always', scope: 'project' }), true);
    assert.equal(isToHost({ type: 'permission', requestId: 'p', optionId: 'allow_always', scope: 'everywhere' }), false);
    assert.equal(isToHost({ type: 'prompt', text: 1, mentions: [], includeSelection: false }), false);
    assert.equal(isToHost({ type: 'eval', code: 'x' }), false);
    assert.equal(isToHost(null), false);
    assert.equal(isToHost('ready'), false);
    assert.equal(isToHost({ type: 'mcpAction', action: 'approve', name: 'github' }), true);
    assert.equal(isToHost({ type: 'mcpAction', action: 'reconnect', name: 'github' }), true);
    assert.equal(isToHost({ type: 'mcpAction', action: 'disable', name: 'github' }), true);
    assert.equal(isToHost({ type: 'mcpAction', action: 'enable', name: 'github' }), true);
    assert.equal(isToHost({ type: 'mcpAction', action: 'run', name: 'github' }), false);
    assert.equal(isToHost({ type: 'mcpAction', action: 'approve' }), false);
  });
});

describe('status bar', () => {
  it('shows mode, running state, tokens, approvals and server problems', () => {
    const s = createSession({ id: 's', modeId: 'acceptEdits' });
    s.tokens.input = 12_000;
    s.tokens.output = 345;
    assert.equal(describeStatus({ phase: 'running' }, s, 0).text, '$(hubot) lsp-agent · Accept edits · 12k tok');
    s.running = true;
    assert.match(describeStatus({ phase: 'running' }, s, 0).text, /^\$\(loading~spin\)/);
    const waiting = describeStatus({ phase: 'running' }, s, 2);
    assert.equal(waiting.text, '$(bell-dot) lsp-agent: 2 approvals');
    assert.equal(waiting.warning, true);
    const missing = describeStatus({ phase: 'missing', message: 'not found' }, undefined, 0);
    assert.deepEqual([missing.text, missing.tooltip, missing.error], ['$(error) lsp-agent', 'not found', true]);
  });
});

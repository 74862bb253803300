/**
 * The chat webview's MCP servers in headless Chromium: the servers' section (approve, reject,
 * reconnect, on/off for any scope) and the form cards of a server's elicitation.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertNoProblems, openPanel, startHarness, text, type Harness } from './harness';
import type { ToHost } from '../../src/shared/messages';
import { createSession } from '../../src/shared/state';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});

after(async () => {
  await harness?.close();
});

describe('chat webview: MCP servers', () => {
  it('shows an MCP server form, sends what was typed, and shows the problems of a wrong answer', async () => {
    const p = await openPanel(harness);
    const session = createSession({ id: 's1' });
    await p.send({ type: 'snapshot', snapshot: { sessions: [session], activeSessionId: 's1', server: { phase: 'running' }, history: [], editedProposals: false } });
    const page = p.page;
    const requestedSchema = {
      type: 'object',
      required: ['name', 'age'],
      properties: {
        name: { type: 'string', title: 'Name', description: 'Your name', minLength: 2 },
        age: { type: 'integer', title: 'Age', minimum: 0, maximum: 150 },
        email: { type: 'string', title: 'Email', format: 'email' },
        colour: { type: 'string', title: 'Colour', enum: ['red', 'green', 'blue'], enumNames: ['Red', 'Green', 'Blue'], default: 'green' },
        subscribe: { type: 'boolean', title: 'Subscribe', default: false },
      },
    };
    await p.send({ type: 'mcpForm', form: { formId: 'form-1', server: 'ed', message: 'Create your profile', requestedSchema } });
    const card = page.locator('.mcp-form[data-form-id="form-1"]');
    await card.waitFor();
    assert.deepEqual(await card.locator('label').allTextContents(), ['Name *', 'Age *', 'Email', 'Colour', 'Subscribe']);
    assert.equal(await card.locator('input[name="email"]').getAttribute('type'), 'email');
    assert.equal(await card.locator('select[name="colour"]').inputValue(), 'green');
    await card.locator('input[name="name"]').fill('Ada');
    await card.locator('input[name="age"]').fill('36');
    await card.locator('select[name="colour"]').selectOption('blue');
    await card.locator('input[name="subscribe"]').check();
    await p.screenshot('panel-mcp-form.png');
    await card.getByRole('button', { name: 'Submit' }).click();
    const answered = await p.waitForPost((m) => m.type === 'mcpFormAnswer', 'the form answer');
    // The empty optional email is left out; the integer is sent as a number.
    assert.deepEqual(answered, {
      type: 'mcpFormAnswer',
      formId: 'form-1',
      action: 'accept',
      content: { name: 'Ada', age: 36, colour: 'blue', subscribe: true },
    } satisfies ToHost);
    await p.send({ type: 'mcpFormClosed', formId: 'form-1' });
    assert.equal(await card.count(), 0, 'the answered card goes away');

    // Asked again with the problems of a wrong answer; the user declines.
    await p.send({
      type: 'mcpForm',
      form: { formId: 'form-2', server: 'ed', message: 'Create your profile', requestedSchema, problems: ['name: at least 2 characters'] },
    });
    const again = page.locator('.mcp-form[data-form-id="form-2"]');
    await again.waitFor();
    assert.deepEqual(await again.locator('.mcp-form-problems li').allTextContents(), ['name: at least 2 characters']);
    await p.screenshot('panel-mcp-form-problems.png');
    await again.getByRole('button', { name: 'Decline' }).click();
    const declined = await p.waitForPost((m) => m.type === 'mcpFormAnswer' && m.formId === 'form-2', 'the decline');
    assert.deepEqual(declined, { type: 'mcpFormAnswer', formId: 'form-2', action: 'decline' } satisfies ToHost);
    assertNoProblems(p);
    await page.context().close();
  });

  it('lists the MCP servers and approves, rejects or reconnects one', async () => {
    const p = await openPanel(harness);
    const page = p.page;
    assert.equal(await page.locator('.mcp').isVisible(), false, 'hidden without servers');
    const server = (name: string, state: string, extra: Record<string, unknown> = {}) => ({
      name,
      scope: 'project',
      transport: 'stdio',
      state,
      error: null,
      tools: 0,
      description: `npx -y ${name}-server`,
      ...extra,
    });
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12, scope: 'user' }),
        server('tracker', 'needs_approval', { error: 'a project server (.mcp.json) runs only after you approve it' }),
        server('db', 'failed', { error: 'command not found: pg-mcp\nstderr:\nboom' }),
      ],
    });
    assert.equal(await page.locator('.mcp').isVisible(), true);
    // Open by itself while a server needs attention.
    assert.equal(await text(p, '.mcp-summary'), '1/3 ready · 1 awaiting approval · 1 failed');
    assert.equal(await text(p, '[data-mcp-server="github"] .mcp-tools'), '12 tools');
    assert.match(await text(p, '[data-mcp-server="tracker"] .mcp-command'), /npx -y tracker-server/);
    assert.match(await text(p, '[data-mcp-server="db"] .mcp-error'), /command not found: pg-mcp/);
    assert.match(await text(p, '[data-mcp-server="tracker"] .mcp-reason'), /runs only after you approve it/);
    await p.screenshot('panel-mcp-servers.png');
    await page.locator('[data-mcp-server="tracker"] button', { hasText: 'Approve' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction', 'mcpAction'), { type: 'mcpAction', action: 'approve', name: 'tracker' });
    await page.locator('[data-mcp-server="db"] button', { hasText: 'Reconnect' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'reconnect', 'reconnect'), {
      type: 'mcpAction',
      action: 'reconnect',
      name: 'db',
    });
    // An HTTP server that asks for an OAuth login: a Log in button.
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12, scope: 'user' }),
        server('linear', 'needs_login', { transport: 'http', description: 'http https://mcp.example.com/mcp', error: 'the server asks for an OAuth login' }),
      ],
    });
    assert.equal(await text(p, '.mcp-summary'), '1/2 ready · 1 awaiting login');
    assert.match(await text(p, '[data-mcp-server="linear"] .mcp-state'), /needs login/);
    await p.screenshot('panel-mcp-login.png');
    await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log in' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'login', 'login'), {
      type: 'mcpAction',
      action: 'login',
      name: 'linear',
    });
    // Logged in: a Log out button (and no Log in).
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12, scope: 'user' }),
        server('linear', 'ready', { transport: 'http', tools: 3, loggedIn: true }),
      ],
    });
    await page.locator('.mcp-toggle').click(); // all ready: folded until opened
    await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log out' }).waitFor();
    assert.equal(await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log in' }).count(), 0);
    assert.equal(await page.locator('[data-mcp-server="github"] button', { hasText: 'Log out' }).count(), 0);
    await p.screenshot('panel-mcp-logout.png');
    await page.locator('[data-mcp-server="linear"] button', { hasText: 'Log out' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'logout', 'logout'), {
      type: 'mcpAction',
      action: 'logout',
      name: 'linear',
    });
    await page.locator('.mcp-toggle').click(); // folded again
    // All ready: the section folds to its summary line.
    await p.send({ type: 'mcpServers', servers: [server('github', 'ready', { tools: 12 })] });
    assert.equal(await text(p, '.mcp-summary'), '1/1 ready');
    assert.equal(await page.locator('.mcp-list').count(), 0);
    await page.locator('.mcp-toggle').click();
    await page.locator('.mcp-list li').first().waitFor(); // rendered on the next frame
    assert.equal(await page.locator('.mcp-list li').count(), 1);
    assertNoProblems(p);
    await page.context().close();
  });

  it('turns an MCP server of any scope off and on', async () => {
    const p = await openPanel(harness);
    const page = p.page;
    const server = (name: string, state: string, extra: Record<string, unknown> = {}) => ({
      name,
      scope: 'user',
      transport: 'stdio',
      state,
      error: null,
      tools: 0,
      description: `npx -y ${name}-server`,
      ...extra,
    });
    await p.send({
      type: 'mcpServers',
      servers: [
        server('github', 'ready', { tools: 12 }),
        server('db', 'disabled', { scope: 'lsp', error: 'turned off for this project (disabledMcpServers in ~/.claude.json)' }),
        server('tracker', 'disabled', { scope: 'project', error: 'rejected by the user' }),
        server('blocked', 'denied', { error: 'denied by the managed deniedMcpServers list' }),
      ],
    });
    assert.equal(await text(p, '.mcp-summary'), '1/4 ready · 2 off');
    await page.locator('.mcp-toggle').click();
    await page.locator('.mcp-list li').first().waitFor();
    // Why a server is off is information, not a fault: the muted style, not the error red.
    assert.match(await text(p, '[data-mcp-server="db"] .mcp-reason'), /disabledMcpServers/);
    assert.equal(await page.locator('.mcp-list .mcp-error').count(), 0, 'no server here failed');
    const colour = (selector: string): Promise<string> =>
      page.locator(selector).first().evaluate((el) => getComputedStyle(el).color);
    assert.equal(await colour('[data-mcp-server="db"] .mcp-reason'), await colour('[data-mcp-server="db"] .mcp-scope'));
    assert.equal(await page.locator('[data-mcp-server="db"] .codicon-circle-slash').count(), 1);
    assert.equal(await page.locator('[data-mcp-server="blocked"] button').count(), 0, 'managed deny: nothing to toggle');
    await p.screenshot('panel-mcp-disabled.png');
    await page.locator('[data-mcp-server="github"] button', { hasText: 'Disable' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'disable', 'disable'), {
      type: 'mcpAction',
      action: 'disable',
      name: 'github',
    });
    await page.locator('[data-mcp-server="db"] button', { hasText: 'Enable' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'enable', 'enable'), {
      type: 'mcpAction',
      action: 'enable',
      name: 'db',
    });
    // A rejected project server comes back by approval, not by a switch.
    assert.equal(await page.locator('[data-mcp-server="tracker"] button', { hasText: 'Enable' }).count(), 0);
    await page.locator('[data-mcp-server="tracker"] button', { hasText: 'Approve' }).click();
    assert.deepEqual(await p.waitForPost((m) => m.type === 'mcpAction' && m.action === 'approve', 'approve'), {
      type: 'mcpAction',
      action: 'approve',
      name: 'tracker',
    });
    assertNoProblems(p);
    await page.context().close();
  });
});

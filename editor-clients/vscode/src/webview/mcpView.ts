/** The MCP servers section (state, approval, on/off, login) and the MCP servers' form cards. */

import type { McpFormRequest } from '../shared/messages';
import type { McpAction } from '../shared/protocol';
import { clear, h, icon } from './dom';
import { renderMcpForm } from './mcpForm';
import { post, scheduleRender, state } from './panelState';

export const mcpBox = h('section', { class: 'mcp', hidden: true, 'aria-label': 'MCP servers' });
export const formsBox = h('div', { class: 'mcp-forms' });

const MCP_ICONS: Record<string, string> = {
  ready: 'pass',
  starting: 'loading',
  failed: 'error',
  invalid: 'error',
  needs_approval: 'shield',
  needs_login: 'key',
  disabled: 'circle-slash',
};

/** The MCP servers section: hidden without servers; open by itself while one needs attention. */
export function renderMcp(): void {
  const servers = state.mcpServers;
  clear(mcpBox);
  mcpBox.hidden = servers.length === 0;
  if (servers.length === 0) return;
  const waiting = servers.filter((s) => s.state === 'needs_approval').length;
  const login = servers.filter((s) => s.state === 'needs_login').length;
  const failed = servers.filter((s) => s.state === 'failed' || s.state === 'invalid').length;
  const ready = servers.filter((s) => s.state === 'ready').length;
  const open = state.mcpOpen || waiting > 0 || login > 0 || failed > 0;
  const parts = [`${ready}/${servers.length} ready`];
  if (waiting > 0) parts.push(`${waiting} awaiting approval`);
  if (login > 0) parts.push(`${login} awaiting login`);
  if (failed > 0) parts.push(`${failed} failed`);
  const off = servers.filter((s) => s.state === 'disabled').length;
  if (off > 0) parts.push(`${off} off`);
  const toggle = h(
    'button',
    { class: 'mcp-toggle', 'aria-expanded': String(open), onclick: () => { state.mcpOpen = !open; scheduleRender(); } },
    icon(open ? 'chevron-down' : 'chevron-right'),
    h('strong', {}, 'MCP servers'),
    h('span', { class: 'mcp-summary' }, parts.join(' · ')),
  );
  mcpBox.append(toggle);
  if (!open) return;
  const list = h('ul', { class: 'mcp-list' });
  for (const server of servers) {
    const act = (action: McpAction, label: string, primary = false): HTMLElement =>
      h('button', { class: `button ${primary ? 'primary' : 'secondary'}`, onclick: () => post({ type: 'mcpAction', action, name: server.name }) }, label);
    const buttons: HTMLElement[] = [];
    if (server.state === 'needs_approval') buttons.push(act('approve', 'Approve', true), act('reject', 'Reject'));
    if (server.state === 'failed') buttons.push(act('reconnect', 'Reconnect'));
    if (server.state === 'needs_login') buttons.push(act('login', 'Log in', true));
    if (server.loggedIn === true) buttons.push(act('logout', 'Log out'));
    // On/off for this project, any scope (kept in the user's ~/.claude.json, docs/mcp.md).
    if (server.state === 'disabled') {
      buttons.push(server.error?.startsWith('rejected') ? act('approve', 'Approve') : act('enable', 'Enable'));
    } else if (server.state !== 'denied') {
      buttons.push(act('disable', 'Disable'));
    }
    const iconName = MCP_ICONS[server.state] ?? 'circle-outline';
    list.append(
      h(
        'li',
        { class: `mcp-server ${server.state}`, 'data-mcp-server': server.name },
        h(
          'div',
          { class: 'mcp-row' },
          icon(iconName, server.state === 'starting' ? 'codicon-modifier-spin' : undefined),
          h('span', { class: 'mcp-name' }, server.name),
          h('span', { class: 'mcp-state' }, server.state.replace('_', ' ')),
          server.state === 'ready' ? h('span', { class: 'mcp-tools' }, `${server.tools} tool${server.tools === 1 ? '' : 's'}`) : null,
          h('span', { class: 'mcp-scope', title: server.description }, server.scope),
          h('span', { class: 'spacer' }),
          ...buttons,
        ),
        // Red only for a fault; why a server is off, waiting or denied is information.
        server.state !== 'ready' && server.error
          ? h('p', { class: server.state === 'failed' || server.state === 'invalid' ? 'mcp-error' : 'mcp-reason' }, server.error)
          : null,
        server.state === 'needs_approval' ? h('p', { class: 'mcp-command' }, h('code', {}, server.description)) : null,
      ),
    );
  }
  mcpBox.append(list);
}

/** Show an MCP server's form: a form asked again (with problems) replaces its card; a new one joins the list. */
export function showMcpForm(form: McpFormRequest): void {
  formsBox.querySelector(`[data-form-id="${CSS.escape(form.formId)}"]`)?.remove();
  formsBox.append(renderMcpForm(form, post));
  formsBox.querySelector<HTMLElement>(`[data-form-id="${CSS.escape(form.formId)}"] input, [data-form-id="${CSS.escape(form.formId)}"] select`)?.focus();
}

/** Take an answered (or withdrawn) form's card away. */
export function closeMcpForm(formId: string): void {
  formsBox.querySelector(`[data-form-id="${CSS.escape(formId)}"]`)?.remove();
}

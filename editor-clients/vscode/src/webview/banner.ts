/** The banner over the chat: the server's state (starting, missing, failed) and its actions, and notices of no chat. */

import type { HostAction } from '../shared/messages';
import { clear, h, icon } from './dom';
import { post, state } from './panelState';

export const banner = h('div', { class: 'banner', hidden: true });

const ACTION_ICONS: Record<HostAction['id'], string> = {
  configureServer: 'gear',
  showLog: 'output',
  restartServer: 'debug-restart',
  openInstallGuide: 'book',
  trustWorkspace: 'workspace-trusted',
};

export function renderBanner(): void {
  const s = state.server;
  clear(banner);
  const problem = s.phase === 'missing' || s.phase === 'incompatible' || s.phase === 'failed';
  const busy = s.phase === 'starting' || s.phase === 'restarting';
  banner.hidden = !(problem || busy || state.globalNotices.length > 0);
  banner.className = `banner ${problem ? 'error' : 'info'}`;
  banner.setAttribute('role', problem ? 'alert' : 'status');
  if (problem || busy) {
    const title =
      s.phase === 'missing' ? 'lsp-agent server not found' : s.phase === 'incompatible' ? 'Incompatible lsp-agent server' : s.phase === 'failed' ? 'lsp-agent server stopped' : s.phase === 'restarting' ? 'Restarting lsp-agent…' : 'Starting lsp-agent…';
    banner.append(
      h(
        'div',
        { class: 'banner-main' },
        problem ? icon('error') : icon('loading', 'codicon-modifier-spin'),
        h('div', {}, h('strong', {}, title), s.message && problem ? h('p', {}, s.message) : null),
      ),
    );
    if (s.actions && s.actions.length > 0) {
      banner.append(
        h(
          'div',
          { class: 'banner-actions' },
          ...s.actions.map((a) => h('button', { class: 'button secondary', onclick: () => post({ type: 'runAction', id: a.id }) }, icon(ACTION_ICONS[a.id]), a.label)),
        ),
      );
    }
  }
  for (const n of state.globalNotices) {
    banner.append(h('div', { class: `notice ${n.level}` }, icon(n.level === 'error' ? 'error' : 'info'), h('span', {}, n.text)));
  }
}

/** The panel's top bar: a tab per open chat, the list of all chats, and "New chat". */

import type { SessionSummary } from '../shared/messages';
import { clear, h, icon } from './dom';
import { post, scheduleRender, state } from './panelState';
import { loadDraft, saveDraft } from './prompt';

const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Chats' });
const newChatButton = h('button', { class: 'icon-button', title: 'New chat', 'aria-label': 'New chat', onclick: () => post({ type: 'newSession' }) }, icon('add'));
const sessionsButton = h(
  'button',
  { class: 'icon-button', title: 'All chats', 'aria-label': 'All chats', 'aria-haspopup': 'true', 'aria-expanded': 'false', onclick: () => toggleSessionList() },
  icon('history'),
);
const sessionList = h('div', { class: 'session-list', role: 'menu', 'aria-label': 'All chats', hidden: true });
export const header = h('header', { class: 'topbar' }, tabs, sessionsButton, newChatButton, sessionList);

export function renderTabs(): void {
  clear(tabs);
  for (const id of state.order) {
    const s = state.sessions.get(id);
    if (!s) continue;
    const selected = id === state.activeId;
    const tab = h(
      'div',
      { class: `tab${selected ? ' active' : ''}`, role: 'presentation' },
      h(
        'button',
        {
          class: 'tab-button',
          role: 'tab',
          'aria-selected': String(selected),
          tabindex: selected ? 0 : -1,
          title: s.title,
          'data-session-id': id,
          onclick: () => activate(id),
          onkeydown: (ev: KeyboardEvent) => onTabKey(ev, id),
        },
        s.running ? icon('loading', 'codicon-modifier-spin') : null,
        h('span', { class: 'tab-title' }, s.title),
      ),
      h(
        'button',
        { class: 'icon-button tab-close', title: 'Close chat', 'aria-label': `Close ${s.title}`, onclick: () => post({ type: 'closeSession', sessionId: id }) },
        icon('close'),
      ),
    );
    tabs.append(tab);
  }
}

function onTabKey(ev: KeyboardEvent, id: string): void {
  const i = state.order.indexOf(id);
  let next: string | undefined;
  if (ev.key === 'ArrowRight') next = state.order[(i + 1) % state.order.length];
  else if (ev.key === 'ArrowLeft') next = state.order[(i - 1 + state.order.length) % state.order.length];
  else if (ev.key === 'Home') next = state.order[0];
  else if (ev.key === 'End') next = state.order[state.order.length - 1];
  if (next) {
    ev.preventDefault();
    activate(next);
    requestAnimationFrame(() => (tabs.querySelector(`[data-session-id="${CSS.escape(next)}"]`) as HTMLElement | null)?.focus());
  }
}

function activate(id: string): void {
  if (id === state.activeId) return;
  saveDraft();
  state.activeId = id;
  post({ type: 'activateSession', sessionId: id });
  loadDraft();
  scheduleRender();
}

function toggleSessionList(open = sessionList.hidden): void {
  sessionList.hidden = !open;
  sessionsButton.setAttribute('aria-expanded', String(open));
  if (open) {
    clear(sessionList);
    sessionList.append(h('div', { class: 'session-list-empty muted' }, icon('loading', 'codicon-modifier-spin'), 'Loading chats…'));
    post({ type: 'listSessions' });
  }
}

export function renderSessionList(rows: SessionSummary[]): void {
  if (sessionList.hidden) return;
  clear(sessionList);
  if (rows.length === 0) {
    sessionList.append(h('div', { class: 'session-list-empty muted' }, 'No chats yet.'));
    return;
  }
  for (const row of rows) {
    sessionList.append(
      h(
        'button',
        {
          class: `session-row${row.sessionId === state.activeId ? ' active' : ''}`,
          role: 'menuitem',
          'data-session-id': row.sessionId,
          title: row.cwd ?? '',
          onclick: () => {
            toggleSessionList(false);
            if (state.sessions.has(row.sessionId)) activate(row.sessionId);
            else post({ type: 'activateSession', sessionId: row.sessionId });
          },
        },
        icon(row.busy ? 'loading' : row.open ? 'comment-discussion' : 'comment', row.busy ? 'codicon-modifier-spin' : ''),
        h('span', { class: 'session-title' }, row.title),
        row.backgroundRun
          ? h('span', { class: 'muted session-background', title: `Started with run -p --bg; follow it with: lsp-agent attach ${row.backgroundRun}` }, `background run ${row.backgroundRun}`)
          : row.open ? null : h('span', { class: 'muted session-closed' }, 'closed'),
      ),
    );
  }
  (sessionList.querySelector('button') as HTMLButtonElement | null)?.focus();
}

sessionList.addEventListener('keydown', (ev) => {
  const rows = [...sessionList.querySelectorAll('button')] as HTMLButtonElement[];
  const i = rows.indexOf(document.activeElement as HTMLButtonElement);
  if (ev.key === 'Escape') {
    ev.preventDefault();
    toggleSessionList(false);
    sessionsButton.focus();
  } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    ev.preventDefault();
    const next = rows[(i + (ev.key === 'ArrowDown' ? 1 : rows.length - 1)) % rows.length];
    next?.focus();
  }
});

document.addEventListener('mousedown', (ev) => {
  if (!sessionList.hidden && !sessionList.contains(ev.target as Node) && !sessionsButton.contains(ev.target as Node)) toggleSessionList(false);
});

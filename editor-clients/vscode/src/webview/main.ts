/**
 * The chat panel page. Mirrors the host's state by applying the shared reducer to the host's
 * messages, renders it (re-rendering only items whose revision changed), and sends user
 * actions back with `postMessage`.
 */

import type { HostAction, MentionCandidate, PanelSnapshot, SelectionInfo, ServerStatus, SessionSummary, ToHost, ToWebview } from '../shared/messages';
import type { AvailableCommand, McpAction, McpServerInfo, PlanEntry, RuleScope } from '../shared/protocol';
import {
  addNotice,
  addPermission,
  applyUpdate,
  endTurn,
  formatTokens,
  resolvePermission,
  retryLine,
  startTurn,
  type SessionState,
  matchingCommands,
} from '../shared/state';
import { clear, h, icon } from './dom';
import { renderItem, type TranscriptActions } from './transcript';
import { renderMcpForm } from './mcpForm';

interface VsCodeApi {
  postMessage(message: ToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

interface PersistedUi {
  drafts: Record<string, string>;
  includeSelection: boolean;
}

const vscode = acquireVsCodeApi();
const NEW_DRAFT = '__new__';

const state = {
  sessions: new Map<string, SessionState>(),
  order: [] as string[],
  activeId: undefined as string | undefined,
  server: { phase: 'starting' } as ServerStatus,
  history: [] as string[],
  selection: undefined as SelectionInfo | undefined,
  editedProposals: false,
  ui: { drafts: {}, includeSelection: true, ...((vscode.getState() as Partial<PersistedUi> | undefined) ?? {}) } as PersistedUi,
  expanded: new Map<string, boolean>(),
  /** The scope picked for the "always" answers of each open permission question. */
  scopes: new Map<string, RuleScope>(),
  /** Mentions picked from the popup for the draft being written. */
  mentions: [] as MentionCandidate[],
  historyIndex: -1,
  historyDraft: '',
  globalNotices: [] as { level: string; text: string }[],
  mcpServers: [] as McpServerInfo[],
  mcpOpen: false,
};

function post(message: ToHost): void {
  vscode.postMessage(message);
}

function persist(): void {
  vscode.setState(state.ui);
}

const active = (): SessionState | undefined => (state.activeId ? state.sessions.get(state.activeId) : undefined);

// ---- layout -------------------------------------------------------------------------------------

const app = document.getElementById('app') as HTMLElement;
const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Chats' });
const newChatButton = h('button', { class: 'icon-button', title: 'New chat', 'aria-label': 'New chat', onclick: () => post({ type: 'newSession' }) }, icon('add'));
const sessionsButton = h(
  'button',
  { class: 'icon-button', title: 'All chats', 'aria-label': 'All chats', 'aria-haspopup': 'true', 'aria-expanded': 'false', onclick: () => toggleSessionList() },
  icon('history'),
);
const sessionList = h('div', { class: 'session-list', role: 'menu', 'aria-label': 'All chats', hidden: true });
const header = h('header', { class: 'topbar' }, tabs, sessionsButton, newChatButton, sessionList);
const banner = h('div', { class: 'banner', hidden: true });
const mcpBox = h('section', { class: 'mcp', hidden: true, 'aria-label': 'MCP servers' });
const transcript = h('main', { class: 'transcript', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
const planBox = h('section', { class: 'plan', hidden: true, 'aria-label': 'Plan' });
const attachmentsRow = h('div', { class: 'attachments composer-attachments' });
const promptBox = h('textarea', {
  class: 'prompt',
  rows: 1,
  placeholder: 'Ask lsp-agent…  (@ to mention a file or server:resource, / for commands)',
  'aria-label': 'Message lsp-agent',
  'aria-autocomplete': 'list',
  'aria-controls': 'mention-list',
});
const mentionList = h('ul', { class: 'mention-list', id: 'mention-list', role: 'listbox', hidden: true, 'aria-label': 'Files' });
const modeSelect = h('select', { class: 'mode-select', 'aria-label': 'Permission mode', title: 'Permission mode' });
const meter = h('div', { class: 'meter', role: 'meter', 'aria-label': 'Context used', 'aria-valuemin': 0, 'aria-valuemax': 100 });
const meterFill = h('div', { class: 'meter-fill' });
meter.append(meterFill);
const meterLabel = h('span', { class: 'meter-label' });
const tokensLabel = h('span', { class: 'tokens', title: 'Tokens this chat' });
const sendButton = h('button', { class: 'button primary send', title: 'Send (Enter)', 'aria-label': 'Send' }, icon('send'));
const stopButton = h('button', { class: 'button stop', title: 'Stop (Escape)', 'aria-label': 'Stop', hidden: true }, icon('debug-stop'), 'Stop');
const composer = h(
  'footer',
  { class: 'composer' },
  attachmentsRow,
  h('div', { class: 'input-wrap' }, promptBox, mentionList),
  h(
    'div',
    { class: 'composer-bar' },
    h('span', { class: 'mode-wrap' }, icon('shield'), modeSelect),
    h('span', { class: 'usage', title: 'Context window' }, meter, meterLabel),
    tokensLabel,
    h('span', { class: 'spacer' }),
    stopButton,
    sendButton,
  ),
);
const formsBox = h('div', { class: 'mcp-forms' });
clear(app);
app.append(header, banner, mcpBox, transcript, planBox, formsBox, composer);
app.removeAttribute('aria-busy');

// ---- rendering ----------------------------------------------------------------------------------

const rendered = new Map<string, { el: HTMLElement; rev: number; streaming: boolean }>();
let renderedSession: string | undefined;
let frame = 0;

function scheduleRender(): void {
  if (frame !== 0) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
  });
}

const actions: TranscriptActions = {
  copy: (text) => post({ type: 'copy', text }),
  insert: (text) => post({ type: 'insert', text }),
  openLink: (href) => post({ type: 'openLink', href }),
  answer: (requestId, optionId, extra = {}) =>
    post({ type: 'permission', requestId, optionId, ...(extra.feedback ? { feedback: extra.feedback } : {}), ...(extra.scope ? { scope: extra.scope } : {}) }),
  review: (requestId) => post({ type: 'review', requestId }),
  openLocation: (uri, line) => post({ type: 'openLocation', uri, ...(line !== undefined ? { line } : {}) }),
  setExpanded: (id, expanded) => state.expanded.set(id, expanded),
  isExpanded: (id) => state.expanded.get(id),
  setScope: (requestId, scope) => state.scopes.set(requestId, scope),
  scopeOf: (requestId) => state.scopes.get(requestId),
  noticeAction: (action) => {
    if (action === 'showLog') {
      post({ type: 'runAction', id: 'showLog' });
      return;
    }
    retryLastPrompt();
  },
  rewind: (messageId, restore) => {
    const id = state.activeId;
    if (id) post({ type: 'rewind', sessionId: id, messageId, restore });
  },
};

/** Send the active session's last prompt again (its text and the files it mentioned). */
function retryLastPrompt(): void {
  const session = active();
  if (!session || session.running) return;
  const last = [...session.items].reverse().find((i) => i.kind === 'user');
  if (!last || last.kind !== 'user') return;
  post({
    type: 'prompt',
    sessionId: session.id,
    text: last.text,
    mentions: last.attachments.map((a) => ({ uri: a.uri, label: a.label })),
    includeSelection: false,
  });
}

function render(): void {
  renderTabs();
  renderBanner();
  renderMcp();
  renderTranscript();
  renderPlan();
  renderComposer();
}

function renderTabs(): void {
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

const ACTION_ICONS: Record<HostAction['id'], string> = {
  configureServer: 'gear',
  showLog: 'output',
  restartServer: 'debug-restart',
  openInstallGuide: 'book',
  trustWorkspace: 'workspace-trusted',
};

function renderBanner(): void {
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
function renderMcp(): void {
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

function emptyState(): HTMLElement {
  const suggestion = (text: string, iconName: string): HTMLElement =>
    h(
      'button',
      {
        class: 'suggestion',
        onclick: () => {
          promptBox.value = text;
          autosize();
          promptBox.focus();
        },
      },
      icon(iconName),
      text,
    );
  return h(
    'div',
    { class: 'empty' },
    h('div', { class: 'empty-logo', 'aria-hidden': 'true' }, icon('hubot')),
    h('h2', {}, 'What should we work on?'),
    h('p', { class: 'muted' }, 'lsp-agent reads, edits and runs code in this workspace. It asks before it changes anything, and checks its edits against your diagnostics.'),
    h(
      'div',
      { class: 'suggestions' },
      suggestion('Explain how this project is structured', 'book'),
      suggestion('Find and fix the failing tests', 'beaker'),
      suggestion('Review my uncommitted changes', 'git-compare'),
    ),
    h('p', { class: 'hint muted' }, h('kbd', {}, '@'), ' mention files · ', h('kbd', {}, 'Enter'), ' send · ', h('kbd', {}, 'Shift+Enter'), ' new line'),
  );
}

function renderTranscript(): void {
  const session = active();
  const sessionKey = session?.id ?? '';
  const wasAtBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
  if (renderedSession !== sessionKey) {
    clear(transcript);
    rendered.clear();
    renderedSession = sessionKey;
  }
  if (!session || session.items.length === 0) {
    if (!transcript.querySelector('.empty')) {
      clear(transcript);
      rendered.clear();
      transcript.append(emptyState());
    }
    return;
  }
  transcript.querySelector('.empty')?.remove();
  const lastIndex = session.items.length - 1;
  let previous: Element | null = null;
  const seen = new Set<string>();
  session.items.forEach((item, index) => {
    const streaming = session.running && index === lastIndex && (item.kind === 'agent' || item.kind === 'thought');
    seen.add(item.id);
    let entry = rendered.get(item.id);
    if (!entry || entry.rev !== item.rev || entry.streaming !== streaming) {
      const el = renderItem(item, streaming, actions);
      if (entry) entry.el.replaceWith(el);
      entry = { el, rev: item.rev, streaming };
      rendered.set(item.id, entry);
    }
    const expectedNext: Element | null = previous ? previous.nextElementSibling : transcript.firstElementChild;
    if (expectedNext !== entry.el) {
      if (previous) previous.after(entry.el);
      else transcript.prepend(entry.el);
    }
    previous = entry.el;
  });
  for (const [id, entry] of rendered) {
    if (!seen.has(id)) {
      entry.el.remove();
      rendered.delete(id);
    }
  }
  const typing = transcript.querySelector('.typing');
  const waitingForUser = session.items.some((i) => i.kind === 'tool' && i.permission?.state === 'pending');
  const needTyping = session.running && !waitingForUser && !session.retry && session.items[lastIndex]?.kind !== 'agent';
  if (needTyping && !typing) {
    transcript.append(h('div', { class: 'typing', 'aria-label': 'Working' }, h('span'), h('span'), h('span')));
  } else if (typing && (!needTyping || typing !== transcript.lastElementChild)) {
    typing.remove();
    if (needTyping) transcript.append(typing);
  }
  // A retried model request: one status line under the transcript, gone with the next update.
  transcript.querySelector('.retry-status')?.remove();
  if (session.running && session.retry) {
    transcript.append(
      h('div', { class: 'retry-status', role: 'status' }, icon('sync', 'codicon-modifier-spin'), h('span', {}, retryLine(session.retry))),
    );
  }
  if (wasAtBottom) transcript.scrollTop = transcript.scrollHeight;
}

const PLAN_ICONS: Record<NonNullable<PlanEntry['status']>, string> = {
  pending: 'circle-large-outline',
  in_progress: 'loading',
  completed: 'pass-filled',
};

/** The user's choice for the plan dock (undefined: not chosen, follow the panel's needs). */
let planChoice: boolean | undefined;

/** Whether the plan dock is open: as the user left it, else open unless a question waits for an
 * answer (the approval card needs the room). */
function planIsOpen(): boolean {
  if (planChoice !== undefined) return planChoice;
  const session = active();
  return !(session?.items.some((i) => i.kind === 'tool' && i.permission?.state === 'pending') ?? false);
}

function renderPlan(): void {
  const session = active();
  const entries = session?.plan ?? [];
  planBox.hidden = entries.length === 0;
  clear(planBox);
  if (entries.length === 0) return;
  const done = entries.filter((e) => e.status === 'completed').length;
  const planOpen = planIsOpen();
  const current = entries.find((e) => e.status === 'in_progress');
  planBox.classList.toggle('collapsed', !planOpen);
  const toggle = h(
    'button',
    {
      class: 'plan-head',
      'aria-expanded': String(planOpen),
      title: planOpen ? 'Collapse the plan' : 'Show the plan',
      onclick: () => {
        planChoice = !planOpen;
        renderPlan();
      },
    },
    icon(planOpen ? 'chevron-down' : 'chevron-right'),
    icon('checklist'),
    h('span', {}, 'Plan'),
    h('span', { class: 'plan-progress' }, `${done}/${entries.length}`),
    // Collapsed, the dock still says what is being done now.
    !planOpen && current ? h('span', { class: 'plan-current', title: current.content }, current.content) : null,
  );
  planBox.append(toggle);
  if (planOpen) {
    planBox.append(
      h(
        'ol',
        { class: 'plan-list' },
        ...entries.map((e) =>
          h(
            'li',
            { class: `plan-entry ${e.status ?? 'pending'} priority-${e.priority ?? 'medium'}` },
            icon(PLAN_ICONS[e.status ?? 'pending'], e.status === 'in_progress' ? 'codicon-modifier-spin' : ''),
            h('span', {}, e.content),
          ),
        ),
      ),
    );
  }
}

function renderComposer(): void {
  const session = active();
  const running = session?.running ?? false;
  stopButton.hidden = !running;
  sendButton.hidden = running;
  // Modes
  const modes = session?.availableModes ?? [];
  clear(modeSelect);
  for (const m of modes) {
    // Each mode says what it does ("Accept edits — Apply file edits without asking").
    const opt = h('option', { value: m.id, title: m.description ?? '' }, m.description ? `${m.name} — ${m.description}` : m.name);
    modeSelect.append(opt);
  }
  modeSelect.disabled = !session;
  if (session) modeSelect.value = session.modeId;
  if (!session) modeSelect.append(h('option', {}, 'Default — Ask before edits and commands'));
  const current = modes.find((m) => m.id === session?.modeId);
  modeSelect.title = current?.description ? `Permission mode: ${current.name} — ${current.description}` : 'Permission mode';
  // Context meter
  const ctx = session?.context;
  const pct = ctx && ctx.size > 0 ? Math.min(100, Math.round((ctx.used / ctx.size) * 100)) : 0;
  meterFill.style.width = `${pct}%`;
  meter.className = `meter${pct >= 90 ? ' high' : pct >= 70 ? ' mid' : ''}`;
  meter.setAttribute('aria-valuenow', String(pct));
  meter.title = ctx ? `${formatTokens(ctx.used)} of ${formatTokens(ctx.size)} tokens in context` : 'Context window';
  meterLabel.textContent = ctx ? `${pct}% context` : '';
  meter.hidden = !ctx;
  const t = session?.tokens;
  tokensLabel.textContent = t && t.input + t.output > 0 ? `${formatTokens(t.input)} in · ${formatTokens(t.output)} out` : '';
  tokensLabel.title = t ? `Input ${t.input} · output ${t.output} · cache read ${t.cacheRead} · cache write ${t.cacheCreation} tokens` : '';
  renderAttachments();
}

function renderAttachments(): void {
  clear(attachmentsRow);
  if (state.selection) {
    const on = state.ui.includeSelection;
    attachmentsRow.append(
      h(
        'button',
        {
          class: `chip toggle${on ? ' on' : ''}`,
          'aria-pressed': String(on),
          title: on ? 'The selection is sent with your message (click to leave it out)' : 'Click to send the selection with your message',
          onclick: () => {
            state.ui.includeSelection = !state.ui.includeSelection;
            persist();
            renderAttachments();
          },
        },
        icon(on ? 'pass-filled' : 'circle-large-outline'),
        icon('selection'),
        state.selection.label,
      ),
    );
  }
  for (const m of state.mentions) {
    if (!promptBox.value.includes(`@${m.label}`)) continue;
    attachmentsRow.append(
      h(
        'span',
        { class: 'chip', title: m.uri },
        icon('file'),
        m.label,
        h(
          'button',
          {
            class: 'chip-remove',
            'aria-label': `Remove ${m.label}`,
            onclick: () => {
              promptBox.value = promptBox.value.replace(`@${m.label}`, '').replace(/ {2,}/g, ' ');
              state.mentions = state.mentions.filter((x) => x !== m);
              renderAttachments();
            },
          },
          icon('close'),
        ),
      ),
    );
  }
  attachmentsRow.hidden = attachmentsRow.childElementCount === 0;
}

// ---- composer behaviour -------------------------------------------------------------------------

function autosize(): void {
  promptBox.style.height = 'auto';
  promptBox.style.height = `${Math.min(promptBox.scrollHeight, 240)}px`;
}

function draftKey(): string {
  return state.activeId ?? NEW_DRAFT;
}

function saveDraft(): void {
  state.ui.drafts[draftKey()] = promptBox.value;
  persist();
}

function dropDraft(key: string): void {
  state.ui.drafts = Object.fromEntries(Object.entries(state.ui.drafts).filter(([k]) => k !== key));
}

function loadDraft(): void {
  promptBox.value = state.ui.drafts[draftKey()] ?? '';
  autosize();
}

function send(): void {
  const text = promptBox.value.trim();
  const session = active();
  if (text.length === 0 || session?.running) return;
  post({
    type: 'prompt',
    ...(session ? { sessionId: session.id } : {}),
    text,
    mentions: state.mentions.filter((m) => text.includes(`@${m.label}`)),
    includeSelection: state.selection !== undefined && state.ui.includeSelection,
  });
  promptBox.value = '';
  state.mentions = [];
  state.historyIndex = -1;
  dropDraft(draftKey());
  persist();
  autosize();
  renderAttachments();
}

sendButton.addEventListener('click', send);
stopButton.addEventListener('click', () => {
  const s = active();
  if (s) post({ type: 'cancel', sessionId: s.id });
});
modeSelect.addEventListener('change', () => {
  const s = active();
  if (s) post({ type: 'setMode', sessionId: s.id, modeId: modeSelect.value });
});

// Slash-command popup: "/" at the start of the prompt lists the session's commands (it shares
// the mentions list element; `commandMatches` is non-empty while it shows commands).
let commandMatches: AvailableCommand[] = [];

function currentCommand(): string | undefined {
  const before = promptBox.value.slice(0, promptBox.selectionStart);
  const m = /^\/([\w.:-]*)$/.exec(before);
  return m ? (m[1] as string) : undefined;
}

/** Show the commands matching what is typed; false (and nothing shown) when none match. */
function showCommands(): boolean {
  const query = currentCommand();
  const matches = query === undefined ? [] : matchingCommands(active(), query);
  if (matches.length === 0) {
    if (commandMatches.length > 0) closeMentions();
    return false;
  }
  if (matches.map((c) => c.name).join() !== commandMatches.map((c) => c.name).join()) mentionIndex = 0;
  commandMatches = matches;
  clear(mentionList);
  mentionIndex = Math.min(mentionIndex, matches.length - 1);
  matches.forEach((c, i) => {
    const id = `mention-${i}`;
    mentionList.append(
      h(
        'li',
        {
          id,
          class: `mention-item command-item${i === mentionIndex ? ' selected' : ''}`,
          role: 'option',
          'aria-selected': String(i === mentionIndex),
          onmousedown: (ev: MouseEvent) => {
            ev.preventDefault();
            pickCommand(c);
          },
        },
        h('span', { class: 'mention-label' }, `/${c.name}`),
        h('span', { class: 'mention-description muted' }, c.input?.hint ? `${c.description} — ${c.input.hint}` : c.description),
      ),
    );
    if (i === mentionIndex) promptBox.setAttribute('aria-activedescendant', id);
  });
  mentionList.hidden = false;
  promptBox.setAttribute('aria-expanded', 'true');
  return true;
}

function pickCommand(c: AvailableCommand): void {
  const rest = promptBox.value.slice(promptBox.selectionStart).replace(/^\S*/, '');
  promptBox.value = `/${c.name} ${rest.trimStart()}`;
  const caret = c.name.length + 2;
  promptBox.setSelectionRange(caret, caret);
  closeMentions();
  autosize();
  promptBox.focus();
}

// Mentions popup
let mentionStart = -1;
let mentionItems: MentionCandidate[] = [];
let mentionIndex = 0;
let lastQuery = '';

function currentMention(): { start: number; query: string } | undefined {
  const caret = promptBox.selectionStart;
  const before = promptBox.value.slice(0, caret);
  // Paths, or `server:uri` of an MCP resource (any URI characters after the colon).
  const m = /(^|\s)@([\w.-]*(?::[^\s@]*)?|[\w./-]*)$/.exec(before);
  if (!m) return undefined;
  return { start: caret - (m[2] as string).length - 1, query: m[2] as string };
}

function closeMentions(): void {
  mentionList.hidden = true;
  mentionStart = -1;
  commandMatches = [];
  promptBox.removeAttribute('aria-activedescendant');
  promptBox.setAttribute('aria-expanded', 'false');
}

function renderMentions(): void {
  clear(mentionList);
  const items: { label: string; description?: string; value: MentionCandidate | 'selection' }[] = [];
  if (state.selection && 'selection'.startsWith(lastQuery.toLowerCase())) {
    items.push({ label: 'selection', description: state.selection.label, value: 'selection' });
  }
  for (const m of mentionItems) items.push({ label: m.label, ...(m.description ? { description: m.description } : {}), value: m });
  if (items.length === 0) {
    const what = lastQuery.includes(':') ? 'resources' : 'files';
    mentionList.append(h('li', { class: 'mention-empty muted', role: 'option', 'aria-disabled': 'true' }, lastQuery ? `No ${what} match “${lastQuery}”` : 'Type to search files'));
  }
  mentionIndex = Math.min(mentionIndex, Math.max(0, items.length - 1));
  items.forEach((item, i) => {
    const id = `mention-${i}`;
    const li = h(
      'li',
      {
        id,
        class: `mention-item${i === mentionIndex ? ' selected' : ''}`,
        role: 'option',
        'aria-selected': String(i === mentionIndex),
        onmousedown: (ev: MouseEvent) => {
          ev.preventDefault();
          pickMention(item.value);
        },
      },
      icon(item.value === 'selection' ? 'selection' : item.value.kind === 'mcp' ? 'plug' : 'file'),
      h('span', { class: 'mention-label' }, item.value === 'selection' ? '@selection' : item.value.kind === 'mcp' ? item.label : baseName(item.label)),
      item.description ? h('span', { class: 'mention-description muted' }, item.description) : null,
    );
    mentionList.append(li);
    if (i === mentionIndex) promptBox.setAttribute('aria-activedescendant', id);
  });
  mentionList.hidden = false;
  promptBox.setAttribute('aria-expanded', 'true');
}

function baseName(p: string): string {
  return p.split('/').pop() ?? p;
}

function mentionCount(): number {
  return mentionList.querySelectorAll('.mention-item').length;
}

function pickMention(value: MentionCandidate | 'selection'): void {
  if (mentionStart < 0) return;
  const caret = promptBox.selectionStart;
  if (value === 'selection') {
    state.ui.includeSelection = true;
    persist();
    promptBox.setRangeText('', mentionStart, caret, 'end');
  } else {
    const insert = `@${value.label} `;
    promptBox.setRangeText(insert, mentionStart, caret, 'end');
    // An MCP resource stays in the text: the server reads `@server:uri` itself.
    if (value.kind !== 'mcp' && !state.mentions.some((m) => m.uri === value.uri)) state.mentions.push(value);
  }
  closeMentions();
  autosize();
  renderAttachments();
  promptBox.focus();
}

function selectedMentionValue(): MentionCandidate | 'selection' | undefined {
  const withSelection = state.selection && 'selection'.startsWith(lastQuery.toLowerCase());
  if (withSelection && mentionIndex === 0) return 'selection';
  return mentionItems[mentionIndex - (withSelection ? 1 : 0)];
}

promptBox.addEventListener('input', () => {
  autosize();
  state.historyIndex = -1;
  if (showCommands()) return;
  const m = currentMention();
  if (m) {
    mentionStart = m.start;
    if (m.query !== lastQuery || mentionList.hidden) {
      lastQuery = m.query;
      mentionIndex = 0;
      post({ type: 'mentionQuery', query: m.query });
      renderMentions();
    }
  } else if (!mentionList.hidden) {
    closeMentions();
  }
  renderAttachments();
});

promptBox.addEventListener('blur', () => {
  saveDraft();
  setTimeout(closeMentions, 100);
});

promptBox.addEventListener('keydown', (ev) => {
  if (!mentionList.hidden && commandMatches.length > 0) {
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      const n = commandMatches.length;
      mentionIndex = (mentionIndex + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n;
      showCommands();
      return;
    }
    const chosen = commandMatches[mentionIndex];
    // Enter on a fully typed name sends it; otherwise Enter and Tab complete.
    if (chosen && (ev.key === 'Tab' || (ev.key === 'Enter' && !ev.shiftKey && currentCommand() !== chosen.name))) {
      ev.preventDefault();
      pickCommand(chosen);
      return;
    }
  }
  if (!mentionList.hidden && mentionCount() > 0) {
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      const n = mentionCount();
      mentionIndex = (mentionIndex + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n;
      renderMentions();
      return;
    }
    if (ev.key === 'Enter' || ev.key === 'Tab') {
      const value = selectedMentionValue();
      if (value) {
        ev.preventDefault();
        pickMention(value);
        return;
      }
    }
  }
  if (ev.key === 'Escape') {
    if (!mentionList.hidden) {
      ev.preventDefault();
      closeMentions();
      return;
    }
    const s = active();
    if (s?.running) {
      ev.preventDefault();
      post({ type: 'cancel', sessionId: s.id });
    }
    return;
  }
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    send();
    return;
  }
  // Prompt history: Up on the first line, Down on the last.
  if (ev.key === 'ArrowUp' && !promptBox.value.slice(0, promptBox.selectionStart).includes('\n') && state.history.length > 0) {
    if (state.historyIndex === -1) state.historyDraft = promptBox.value;
    if (state.historyIndex < state.history.length - 1) {
      ev.preventDefault();
      state.historyIndex += 1;
      promptBox.value = state.history[state.history.length - 1 - state.historyIndex] ?? '';
      autosize();
    }
    return;
  }
  if (ev.key === 'ArrowDown' && state.historyIndex >= 0 && !promptBox.value.slice(promptBox.selectionEnd).includes('\n')) {
    ev.preventDefault();
    state.historyIndex -= 1;
    promptBox.value = state.historyIndex === -1 ? state.historyDraft : (state.history[state.history.length - 1 - state.historyIndex] ?? '');
    autosize();
  }
});

// ---- session list -------------------------------------------------------------------------------

function toggleSessionList(open = sessionList.hidden): void {
  sessionList.hidden = !open;
  sessionsButton.setAttribute('aria-expanded', String(open));
  if (open) {
    clear(sessionList);
    sessionList.append(h('div', { class: 'session-list-empty muted' }, icon('loading', 'codicon-modifier-spin'), 'Loading chats…'));
    post({ type: 'listSessions' });
  }
}

function renderSessionList(rows: SessionSummary[]): void {
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

// ---- messages from the host ---------------------------------------------------------------------

function addSession(session: SessionState, activateIt: boolean): void {
  if (!state.sessions.has(session.id)) state.order.push(session.id);
  state.sessions.set(session.id, session);
  if (activateIt || !state.activeId) {
    if (!state.activeId) {
      // Carry a draft typed before the first chat existed.
      const draft = state.ui.drafts[NEW_DRAFT];
      if (draft) state.ui.drafts[session.id] = draft;
      dropDraft(NEW_DRAFT);
    } else {
      saveDraft();
    }
    state.activeId = session.id;
    loadDraft();
  }
}

function applySnapshot(snapshot: PanelSnapshot): void {
  state.sessions.clear();
  state.order = [];
  for (const s of snapshot.sessions) {
    state.sessions.set(s.id, s);
    state.order.push(s.id);
  }
  state.activeId = snapshot.activeSessionId ?? state.order[0];
  state.server = snapshot.server;
  state.history = snapshot.history;
  state.selection = snapshot.selection;
  state.editedProposals = snapshot.editedProposals;
  state.mcpServers = snapshot.mcpServers ?? [];
  renderedSession = undefined;
  loadDraft();
}

function handle(message: ToWebview): void {
  switch (message.type) {
    case 'snapshot':
      applySnapshot(message.snapshot);
      break;
    case 'sessionAdded':
      addSession(message.session, message.activate);
      break;
    case 'sessionActivated':
      if (message.sessionId !== state.activeId && state.sessions.has(message.sessionId)) {
        saveDraft();
        state.activeId = message.sessionId;
        loadDraft();
      }
      break;
    case 'sessionClosed':
      state.sessions.delete(message.sessionId);
      state.order = state.order.filter((id) => id !== message.sessionId);
      dropDraft(message.sessionId);
      if (state.activeId === message.sessionId) state.activeId = state.order[state.order.length - 1];
      loadDraft();
      break;
    case 'sessionUpdate': {
      const s = state.sessions.get(message.sessionId);
      if (s) applyUpdate(s, message.update);
      break;
    }
    case 'turnStarted': {
      const s = state.sessions.get(message.sessionId);
      if (s) startTurn(s, message.text, message.attachments);
      break;
    }
    case 'turnEnded': {
      const s = state.sessions.get(message.sessionId);
      if (s) endTurn(s, message.result);
      break;
    }
    case 'permissionRequested': {
      const r = message.request;
      const s = state.sessions.get(r.sessionId);
      if (s) addPermission(s, message.requestId, r);
      break;
    }
    case 'permissionResolved': {
      const s = state.sessions.get(message.sessionId);
      if (s) {
        resolvePermission(s, message.requestId, {
          state: message.state,
          ...(message.chosen ? { chosen: message.chosen } : {}),
          ...(message.feedback ? { feedback: message.feedback } : {}),
          ...(message.edited ? { edited: true } : {}),
          ...(message.scope ? { scope: message.scope } : {}),
        });
      }
      state.scopes.delete(message.requestId);
      break;
    }
    case 'serverStatus':
      state.server = message.status;
      break;
    case 'history':
      state.history = message.history;
      break;
    case 'selection':
      state.selection = message.selection;
      break;
    case 'mentionResults':
      if (message.query === lastQuery && mentionStart >= 0) {
        mentionItems = message.items;
        renderMentions();
      }
      return;
    case 'notice': {
      const s = message.sessionId ? state.sessions.get(message.sessionId) : undefined;
      if (s) addNotice(s, message.level, message.text);
      else state.globalNotices = [...state.globalNotices.slice(-2), { level: message.level, text: message.text }];
      break;
    }
    case 'sessionList':
      renderSessionList(message.sessions);
      return;
    case 'mcpServers':
      state.mcpServers = message.servers;
      break;
    case 'mcpForm':
      // A form asked again (with problems) replaces its card; a new one joins the list.
      formsBox.querySelector(`[data-form-id="${CSS.escape(message.form.formId)}"]`)?.remove();
      formsBox.append(renderMcpForm(message.form, post));
      formsBox.querySelector<HTMLElement>(`[data-form-id="${CSS.escape(message.form.formId)}"] input, [data-form-id="${CSS.escape(message.form.formId)}"] select`)?.focus();
      return;
    case 'mcpFormClosed':
      formsBox.querySelector(`[data-form-id="${CSS.escape(message.formId)}"]`)?.remove();
      return;
    case 'focusPrompt':
      if (message.text !== undefined) {
        promptBox.value = message.text;
        autosize();
      }
      promptBox.focus();
      break;
  }
  scheduleRender();
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const data = event.data as unknown;
  if (typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string') {
    handle(data as ToWebview);
  }
});

loadDraft();
render();
post({ type: 'ready' });

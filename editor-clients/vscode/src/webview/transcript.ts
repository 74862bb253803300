/** Renderers for the items of a chat: messages, thoughts, tool-call cards, permission questions. */

import { diffStat, unifiedDiff } from '../shared/diff';
import type { RewindRestore } from '../shared/messages';
import { decisionOrigin, defaultScope, describeOrigin, resolvedLabel, scopeChoice, splitOptions } from '../shared/permissionPrompt';
import type { DiffItem, PermissionOption, RuleScope, ToolCallContent, ToolCallLocation, ToolKind } from '../shared/protocol';
import type { ChatItem, NoticeAction, NoticeItem, PermissionInfo, ThoughtItem, ToolItem, UserItem } from '../shared/state';
import { h, icon, type Child } from './dom';
import { renderMarkdown, type CodeActions } from './markdownView';

export interface TranscriptActions extends CodeActions {
  /** Answer a permission question; `scope` goes with "always" answers only. */
  answer(requestId: string, optionId: string, extra?: { feedback?: string; scope?: RuleScope }): void;
  review(requestId: string): void;
  openLocation(uri: string, line?: number): void;
  /** Remember a card's expanded state across re-renders. */
  setExpanded(id: string, expanded: boolean): void;
  isExpanded(id: string): boolean | undefined;
  /** Remember the scope picked for a question's "always" answers across re-renders. */
  setScope(requestId: string, scope: RuleScope): void;
  scopeOf(requestId: string): RuleScope | undefined;
  /** Act on a notice's button: send the last prompt again, or open the server log. */
  noticeAction(action: NoticeAction): void;
  /** "Rewind to here" on a prompt: go back to before it (code, conversation or both). */
  rewind(messageId: string, restore: RewindRestore): void;
}

const KIND_ICONS: Record<ToolKind, string> = {
  read: 'file',
  edit: 'edit',
  delete: 'trash',
  move: 'arrow-swap',
  search: 'search',
  execute: 'terminal',
  think: 'lightbulb',
  fetch: 'globe',
  switch_mode: 'arrow-swap',
  other: 'tools',
};

const STATUS_LABEL: Record<ToolItem['status'], string> = {
  pending: 'Pending',
  in_progress: 'Running',
  completed: 'Done',
  failed: 'Failed',
};

function statusIcon(status: ToolItem['status'], waiting: boolean): HTMLElement {
  if (waiting) return icon('question', 'status-icon waiting');
  switch (status) {
    case 'pending':
      return icon('circle-large-outline', 'status-icon pending');
    case 'in_progress':
      return icon('loading', 'status-icon running codicon-modifier-spin');
    case 'completed':
      return icon('pass-filled', 'status-icon completed');
    case 'failed':
      return icon('error', 'status-icon failed');
  }
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

function locationLinks(locations: readonly ToolCallLocation[], actions: TranscriptActions): Child {
  if (locations.length === 0) return null;
  return h(
    'div',
    { class: 'tool-locations' },
    ...locations.slice(0, 6).map((loc) =>
      h(
        'button',
        {
          class: 'link-button location',
          title: `${loc.path}${loc.line ? `:${loc.line}` : ''}`,
          onclick: () => actions.openLocation(loc.uri ?? loc.path, loc.line),
        },
        icon('go-to-file'),
        `${baseName(loc.path)}${loc.line ? `:${loc.line}` : ''}`,
      ),
    ),
    locations.length > 6 ? h('span', { class: 'muted' }, `+${locations.length - 6} more`) : null,
  );
}

const MAX_DIFF_LINES = 400;

/** A diff card; `onReview` adds a "Review" button (open the native diff editor) to its header. */
export function renderDiff(diff: DiffItem, onReview?: () => void): HTMLElement {
  const text = diff.unifiedDiff ?? unifiedDiff(diff.path, diff.oldText, diff.newText);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const body = lines
    .filter((l) => !l.startsWith('--- ') && !l.startsWith('+++ '))
    .slice(0, MAX_DIFF_LINES)
    .map((line) => {
      const cls = line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
      return h('div', { class: `diff-line ${cls}` }, line.length > 0 ? line : ' ');
    });
  const stat = diffStat(diff.oldText, diff.newText);
  return h(
    'div',
    { class: 'diff' },
    h(
      'div',
      { class: 'diff-head' },
      icon(diff.oldText === undefined ? 'new-file' : 'diff'),
      h('span', { class: 'diff-path', title: diff.path }, baseName(diff.path)),
      h('span', { class: 'diff-stat' }, h('span', { class: 'added' }, `+${stat.added}`), ' ', h('span', { class: 'removed' }, `−${stat.removed}`)),
      onReview
        ? h(
            'button',
            { class: 'button secondary small', 'data-action': 'review', title: 'Open in a diff editor to accept or reject each change, or edit the proposal', onclick: onReview },
            icon('diff-single'),
            'Review',
          )
        : null,
    ),
    h('div', { class: 'diff-body', role: 'region', 'aria-label': `Changes to ${baseName(diff.path)}` }, ...body),
    lines.length > MAX_DIFF_LINES ? h('div', { class: 'muted diff-more' }, `${lines.length - MAX_DIFF_LINES} more lines — use Review to see all`) : null,
  );
}

function contentView(content: readonly ToolCallContent[], onReview?: () => void): Child[] {
  return content.map((c): Child => {
    if (c.type === 'diff') return renderDiff(c, onReview);
    const inner = c.content as { type: string; text?: unknown };
    if (inner.type === 'text' && typeof inner.text === 'string') {
      return inner.text.length > 0 ? h('pre', { class: 'tool-output' }, inner.text) : null;
    }
    return h('pre', { class: 'tool-output muted' }, JSON.stringify(inner, null, 2));
  });
}

function commandLine(item: ToolItem): Child {
  const cmd = item.rawInput?.command;
  if (item.toolKind !== 'execute' || typeof cmd !== 'string') return null;
  return h('pre', { class: 'tool-command' }, h('span', { class: 'prompt-sign', 'aria-hidden': 'true' }, '$ '), cmd);
}

interface AnswerExtra {
  feedback?: string;
  scope?: RuleScope;
}

function disableCard(ev: MouseEvent): void {
  const card = (ev.currentTarget as HTMLElement).closest('.permission');
  card?.querySelectorAll('button, input, textarea').forEach((b) => ((b as HTMLButtonElement).disabled = true));
}

function optionButton(option: PermissionOption, onAnswer: () => void, primary: boolean): HTMLButtonElement {
  const isAllow = option.kind.startsWith('allow');
  return h(
    'button',
    {
      class: `button ${primary ? 'primary' : 'secondary'}${isAllow ? ' allow' : ' reject'}`,
      'data-option-id': option.optionId,
      'data-kind': option.kind,
      onclick: (ev: MouseEvent) => {
        disableCard(ev);
        onAnswer();
      },
    },
    option.name,
  );
}

/**
 * The server's reason as text nodes: its first letter capitalised and `backtick` spans (the
 * commands and rules it quotes) as inline code. Never parsed as HTML.
 */
function reasonView(reason: string): HTMLElement {
  const text = reason.charAt(0).toUpperCase() + reason.slice(1);
  const parts = text.split('`');
  // An odd number of backticks leaves the last one unpaired: keep it as text.
  const paired = parts.length % 2 === 1 ? parts : [...parts.slice(0, -2), `${parts.at(-2) ?? ''}\`${parts.at(-1) ?? ''}`];
  return h('span', { class: 'permission-reason-text' }, ...paired.map((part, i) => (i % 2 === 1 ? h('code', { class: 'rule' }, part) : part)));
}

/**
 * The reason's first sentence (for the one line the card shows) and the rest (behind "Why?").
 * A sentence never ends inside a `quoted` command.
 */
export function splitReason(reason: string): { first: string; rest: string } {
  let ticks = 0;
  for (let i = 0; i < reason.length; i += 1) {
    const c = reason[i];
    if (c === '`') ticks += 1;
    if ((c === '.' || c === '!' || c === '?') && ticks % 2 === 0 && /\s/.test(reason[i + 1] ?? '') && i + 1 < reason.length) {
      return { first: reason.slice(0, i + 1), rest: reason.slice(i + 1).trim() };
    }
  }
  return { first: reason, rest: '' };
}

const PROPOSAL_ICONS: Record<string, string> = { stale: 'warning', rebased: 'git-merge' };

/** What the server said about the proposal since the user typed: stale or still applying. */
function proposalLines(item: ToolItem): Child {
  const notes = Object.values(item.proposal ?? {}).filter((s) => s.status !== 'current');
  if (notes.length === 0) return null;
  return h(
    'div',
    { class: 'proposal-notes' },
    ...notes.map((s) =>
      h('div', { class: `proposal-note ${s.status}`, role: s.status === 'stale' ? 'alert' : 'status' }, icon(PROPOSAL_ICONS[s.status] ?? 'info'), h('span', {}, s.message)),
    ),
  );
}

/** "Asked by rule `Bash(git push:*)` from project settings", when the server said. */
function originLine(perm: PermissionInfo): Child {
  const origin = decisionOrigin(perm);
  if (!origin) return null;
  const text = describeOrigin(origin);
  if (!origin.rule) return h('div', { class: 'permission-origin', title: text }, text);
  return h(
    'div',
    { class: 'permission-origin', title: text },
    'Asked by rule ',
    h('code', { class: 'rule' }, origin.rule),
    origin.from ? ` from ${origin.from}` : '',
  );
}

/**
 * The "always" answers: the rules they remember, where to keep them (a radio group of the
 * offered scopes, session first by default) and their buttons. The picked scope survives
 * re-renders of the card (`actions.scopeOf`).
 */
function alwaysSection(perm: PermissionInfo, always: PermissionOption[], actions: TranscriptActions): HTMLElement {
  const scopes = perm.scopes;
  let current = actions.scopeOf(perm.requestId) ?? defaultScope(scopes);
  if (current !== undefined && !scopes.includes(current)) current = defaultScope(scopes);
  const rules = perm.suggestedRules;
  const detail = h('div', { class: 'scope-detail' }, current ? scopeChoice(current).detail : '');
  const buttons = always.map((o) =>
    optionButton(o, () => actions.answer(perm.requestId, o.optionId, current ? { scope: current } : {}), false),
  );
  const describe = (): void => {
    detail.textContent = current ? scopeChoice(current).detail : '';
    for (const [i, b] of buttons.entries()) {
      const o = always[i] as PermissionOption;
      const what = rules.length > 0 ? perm.ruleLabels.join(', ') : 'this answer';
      const where = current === 'project' ? 'project settings' : current === 'user' ? 'user settings' : 'this session';
      b.title = `${o.kind === 'allow_always' ? 'Allow' : 'Reject'} now and remember ${what} in ${where}`;
    }
  };
  const group = `scope-${cssId(perm.requestId)}`;
  const picker =
    scopes.length > 1
      ? h(
          'div',
          { class: 'scope-picker', role: 'radiogroup', 'aria-label': 'Remember in' },
          ...scopes.map((scope) => {
            const input = h('input', { type: 'radio', name: group, value: scope, class: 'scope-radio', checked: scope === current });
            input.addEventListener('change', () => {
              if (!input.checked) return;
              current = scope;
              actions.setScope(perm.requestId, scope);
              describe();
            });
            return h('label', { class: 'scope-option', 'data-scope': scope, title: scopeChoice(scope).detail }, input, h('span', {}, scopeChoice(scope).label));
          }),
        )
      : h('span', { class: 'scope-single' }, current ? scopeChoice(current).label : '');
  describe();
  return h(
    'div',
    { class: 'permission-always', role: 'group', 'aria-label': 'Always answers' },
    h('span', { class: 'always-label' }, rules.length > 1 ? 'Rules to remember' : 'Rule to remember'),
    h(
      'div',
      { class: 'always-rules' },
      // The label the user knows ("Edit src/cart.py"); the saved rule text is its tooltip.
      ...(rules.length > 0
        ? rules.map((r, i) => h('code', { class: 'rule', title: `Saved as ${r}` }, perm.ruleLabels[i] ?? r))
        : [h('span', { class: 'muted' }, 'none suggested by the server')]),
    ),
    h('span', { class: 'always-label' }, 'Remember in'),
    h('div', { class: 'always-scope' }, picker, detail),
    h('div', { class: 'permission-actions' }, ...buttons),
  );
}

function permissionView(item: ToolItem, perm: PermissionInfo, actions: TranscriptActions): HTMLElement {
  if (perm.state !== 'pending') {
    const iconName = perm.state === 'allowed' ? 'check' : perm.state === 'rejected' ? 'close' : 'circle-slash';
    const label =
      perm.state === 'cancelled'
        ? 'Question withdrawn'
        : `${resolvedLabel(perm.chosen ?? (perm.state === 'allowed' ? 'Allowed' : 'Rejected'), perm.scope)}${perm.edited ? ' (with your edits)' : ''}`;
    return h(
      'div',
      { class: `permission resolved ${perm.state}` },
      icon(iconName),
      h('span', {}, label),
      perm.feedback ? h('span', { class: 'feedback-quote', title: 'Your feedback' }, `“${perm.feedback}”`) : null,
    );
  }
  const { once, always } = splitOptions(perm.options);
  const allowOnce = once.find((o) => o.kind === 'allow_once');
  const rejectOnce = once.find((o) => o.kind === 'reject_once');
  const answer = (optionId: string, extra: AnswerExtra = {}): void => actions.answer(perm.requestId, optionId, extra);
  const feedbackBox = h('textarea', {
    class: 'feedback',
    rows: 2,
    placeholder: 'Tell the agent what to do instead…',
    'aria-label': 'Feedback for the agent',
  });
  const sendFeedback = (): void => {
    if (!rejectOnce) return;
    const text = feedbackBox.value.trim();
    answer(rejectOnce.optionId, text ? { feedback: text } : {});
  };
  const feedbackRow = h(
    'div',
    { class: 'feedback-row', hidden: true },
    feedbackBox,
    h('button', { class: 'button secondary reject', onclick: sendFeedback }, 'Send feedback & reject'),
  );
  feedbackBox.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && rejectOnce) {
      ev.preventDefault();
      sendFeedback();
    }
  });
  // One line of reason; the rest of it and who asked are behind "Why?" (the diff comes first).
  const { first, rest } = splitReason(perm.reason || 'The agent needs your permission to continue.');
  const origin = originLine(perm);
  const why =
    rest || origin
      ? h('details', { class: 'permission-why-more' }, h('summary', {}, 'Why?'), rest ? h('div', { class: 'permission-why-rest' }, reasonView(rest)) : null, origin)
      : null;
  const moreKey = `always:${perm.requestId}`;
  const more =
    always.length > 0
      ? h('details', { class: 'permission-more' }, h('summary', {}, always.some((o) => o.kind === 'allow_always') ? 'Always allow or reject…' : 'Always reject…'), alwaysSection(perm, always, actions))
      : null;
  if (more) {
    (more as HTMLDetailsElement).open = actions.isExpanded(moreKey) ?? false;
    more.addEventListener('toggle', () => actions.setExpanded(moreKey, (more as HTMLDetailsElement).open));
  }
  return h(
    'div',
    { class: 'permission pending', role: 'group', 'aria-label': `Permission needed: ${item.title}` },
    proposalLines(item),
    h(
      'div',
      { class: 'permission-reason' },
      icon('shield'),
      h('div', { class: 'permission-why' }, reasonView(first), why),
    ),
    h(
      'div',
      { class: 'permission-actions' },
      ...once.map((o) => optionButton(o, () => answer(o.optionId), o === allowOnce)),
      rejectOnce
        ? h(
            'button',
            {
              class: 'icon-button',
              title: 'Reject with feedback',
              'aria-label': 'Reject with feedback',
              'data-action': 'feedback',
              onclick: () => {
                feedbackRow.hidden = !feedbackRow.hidden;
                if (!feedbackRow.hidden) feedbackBox.focus();
              },
            },
            icon('comment'),
          )
        : null,
    ),
    feedbackRow,
    more,
  );
}

function toolCard(item: ToolItem, actions: TranscriptActions): HTMLElement {
  const waiting = item.permission?.state === 'pending';
  const remembered = actions.isExpanded(item.id);
  const expanded = remembered ?? (waiting || item.status === 'failed');
  const diffs = item.content.filter((c): c is DiffItem => c.type === 'diff');
  const stat = diffs.length > 0 ? diffs.map((d) => diffStat(d.oldText, d.newText)).reduce((a, b) => ({ added: a.added + b.added, removed: a.removed + b.removed })) : undefined;
  const requestId = waiting ? item.permission?.requestId : undefined;
  const onReview = requestId ? () => actions.review(requestId) : undefined;
  const bodyChildren = [commandLine(item), ...contentView(item.content, onReview)].filter(Boolean);
  const bodyId = `tool-body-${cssId(item.id)}`;
  const head = h(
    'button',
    {
      class: 'tool-head',
      'aria-expanded': String(expanded),
      'aria-controls': bodyId,
      onclick: () => {
        const open = head.getAttribute('aria-expanded') !== 'true';
        head.setAttribute('aria-expanded', String(open));
        body.hidden = !open;
        actions.setExpanded(item.id, open);
      },
    },
    icon(bodyChildren.length > 0 ? 'chevron-right' : 'blank', 'chevron'),
    icon(KIND_ICONS[item.toolKind] ?? 'tools', 'kind-icon'),
    h('span', { class: 'tool-title', title: item.title }, item.title),
    stat ? h('span', { class: 'diff-stat' }, h('span', { class: 'added' }, `+${stat.added}`), ' ', h('span', { class: 'removed' }, `−${stat.removed}`)) : null,
    h('span', { class: 'tool-status', title: waiting ? 'Waiting for your answer' : STATUS_LABEL[item.status] }, statusIcon(item.status, waiting), h('span', { class: 'sr-only' }, waiting ? 'Waiting for you' : STATUS_LABEL[item.status])),
  );
  const body = h('div', { class: 'tool-body', id: bodyId }, ...bodyChildren);
  body.hidden = !expanded;
  return h(
    'div',
    { class: `tool status-${item.status}${waiting ? ' waiting' : ''}`, 'data-tool-call-id': item.id },
    head,
    locationLinks(item.locations, actions),
    bodyChildren.length > 0 ? body : null,
    item.permission ? permissionView(item, item.permission, actions) : null,
  );
}

function cssId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}

const REWIND_LABELS: Record<RewindRestore, string> = { code: 'Code', conversation: 'Conversation', both: 'Both' };

/** "Rewind to here": the three choices behind a disclosure, so a stray click changes nothing. */
function rewindControl(messageId: string, actions: TranscriptActions): HTMLElement {
  return h(
    'details',
    { class: 'rewind' },
    h('summary', { title: 'Go back to before this prompt' }, icon('discard'), 'Rewind to here'),
    ...(['code', 'conversation', 'both'] as const).map((restore) =>
      h('button', { class: 'button secondary', 'data-restore': restore, onclick: () => actions.rewind(messageId, restore) }, REWIND_LABELS[restore]),
    ),
  );
}

function userMessage(item: UserItem, actions: TranscriptActions): HTMLElement {
  return h(
    'div',
    { class: 'msg user' },
    h('div', { class: 'bubble' }, item.text),
    item.attachments.length > 0
      ? h('div', { class: 'attachments' }, ...item.attachments.map((a) => h('span', { class: 'chip', title: a.uri }, icon('file'), a.label)))
      : null,
    item.messageId ? rewindControl(item.messageId, actions) : null,
  );
}

function thought(item: ThoughtItem, streaming: boolean, actions: TranscriptActions): HTMLElement {
  const details = h(
    'details',
    { class: 'thought' },
    h('summary', {}, icon('lightbulb'), streaming ? 'Thinking…' : 'Thought'),
    h('div', { class: 'thought-body' }, item.text),
  );
  details.open = actions.isExpanded(item.id) ?? false;
  details.addEventListener('toggle', () => actions.setExpanded(item.id, details.open));
  return details;
}

const NOTICE_ACTIONS: Record<NoticeAction, { label: string; icon: string; title: string }> = {
  retry: { label: 'Retry', icon: 'refresh', title: 'Send the last prompt again' },
  showLog: { label: 'Open log', icon: 'output', title: 'Show the lsp-agent server log' },
};

function notice(item: NoticeItem, actions: TranscriptActions): HTMLElement {
  const name = item.level === 'error' ? 'error' : item.level === 'warning' ? 'warning' : 'info';
  const body = item.detail
    ? h('details', { class: 'notice-detail' }, h('summary', {}, item.text), h('pre', { class: 'notice-detail-text' }, item.detail))
    : h('span', {}, item.text);
  const buttons =
    item.actions && item.actions.length > 0
      ? h(
          'div',
          { class: 'notice-actions' },
          ...item.actions.map((a) =>
            h('button', { class: 'button secondary small', 'data-action': a, title: NOTICE_ACTIONS[a].title, onclick: () => actions.noticeAction(a) }, icon(NOTICE_ACTIONS[a].icon), NOTICE_ACTIONS[a].label),
          ),
        )
      : null;
  return h('div', { class: `notice ${item.level}`, role: item.level === 'error' ? 'alert' : 'status' }, icon(name), h('div', { class: 'notice-main' }, body, buttons));
}

/** One transcript item as a fresh element; `streaming` marks the last item of a running turn. */
export function renderItem(item: ChatItem, streaming: boolean, actions: TranscriptActions): HTMLElement {
  let el: HTMLElement;
  switch (item.kind) {
    case 'user':
      el = userMessage(item, actions);
      break;
    case 'agent':
      el = h('div', { class: `msg agent${streaming ? ' streaming' : ''}` }, renderMarkdown(item.text, actions));
      break;
    case 'thought':
      el = thought(item, streaming, actions);
      break;
    case 'tool':
      el = toolCard(item, actions);
      break;
    case 'notice':
      el = notice(item, actions);
      break;
  }
  el.dataset.itemId = item.id;
  return el;
}

/**
 * The conversation of the active chat: its items rendered by transcript.ts (re-rendering only
 * items whose revision changed), the typing and retry lines, and the empty state.
 */

import { retryLine } from '../shared/state';
import { clear, h, icon } from './dom';
import { active, post, state } from './panelState';
import { autosize, promptBox } from './prompt';
import { renderItem, type TranscriptActions } from './transcript';

export const transcript = h('main', { class: 'transcript', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });

const rendered = new Map<string, { el: HTMLElement; rev: number; streaming: boolean }>();
let renderedSession: string | undefined;

/** Rebuild the whole transcript at the next render (a new snapshot from the host). */
export function invalidateTranscript(): void {
  renderedSession = undefined;
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

export function renderTranscript(): void {
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

/**
 * The composer at the bottom of the panel: the prompt with its popup and attachments, the
 * permission mode, context and token meters, Send and Stop, and the prompt's keys (send,
 * cancel, history).
 */

import { formatTokens } from '../shared/state';
import { attachmentsRow, renderAttachments } from './attachments';
import { clear, h, icon } from './dom';
import { active, persist, post, state } from './panelState';
import { closeMentions, followPrompt, mentionList, popupKey, popupOpen } from './popup';
import { autosize, dropDraft, draftKey, promptBox, saveDraft } from './prompt';

const modeSelect = h('select', { class: 'mode-select', 'aria-label': 'Permission mode', title: 'Permission mode' });
const meter = h('div', { class: 'meter', role: 'meter', 'aria-label': 'Context used', 'aria-valuemin': 0, 'aria-valuemax': 100 });
const meterFill = h('div', { class: 'meter-fill' });
meter.append(meterFill);
const meterLabel = h('span', { class: 'meter-label' });
const tokensLabel = h('span', { class: 'tokens', title: 'Tokens this chat' });
const sendButton = h('button', { class: 'button primary send', title: 'Send (Enter)', 'aria-label': 'Send' }, icon('send'));
const stopButton = h('button', { class: 'button stop', title: 'Stop (Escape)', 'aria-label': 'Stop', hidden: true }, icon('debug-stop'), 'Stop');
export const composer = h(
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

export function renderComposer(): void {
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

promptBox.addEventListener('input', () => {
  autosize();
  state.historyIndex = -1;
  if (followPrompt()) return;
  renderAttachments();
});

promptBox.addEventListener('blur', () => {
  saveDraft();
  setTimeout(closeMentions, 100);
});

promptBox.addEventListener('keydown', (ev) => {
  if (popupKey(ev)) return;
  if (ev.key === 'Escape') {
    if (popupOpen()) {
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

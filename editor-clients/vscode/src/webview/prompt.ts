/** The prompt box of the composer, its height, and the drafts kept per chat across reloads. */

import { h } from './dom';
import { NEW_DRAFT, persist, state } from './panelState';

export const promptBox = h('textarea', {
  class: 'prompt',
  rows: 1,
  placeholder: 'Ask lsp-agent…  (@ to mention a file or server:resource, / for commands)',
  'aria-label': 'Message lsp-agent',
  'aria-autocomplete': 'list',
  'aria-controls': 'mention-list',
});

export function autosize(): void {
  promptBox.style.height = 'auto';
  promptBox.style.height = `${Math.min(promptBox.scrollHeight, 240)}px`;
}

export function draftKey(): string {
  return state.activeId ?? NEW_DRAFT;
}

export function saveDraft(): void {
  state.ui.drafts[draftKey()] = promptBox.value;
  persist();
}

export function dropDraft(key: string): void {
  state.ui.drafts = Object.fromEntries(Object.entries(state.ui.drafts).filter(([k]) => k !== key));
}

export function loadDraft(): void {
  promptBox.value = state.ui.drafts[draftKey()] ?? '';
  autosize();
}

/**
 * The prompt's popup list: the session's slash commands ("/" at the start of the prompt) and
 * the mentions (`@` files, the selection, `server:uri` resources of MCP servers).
 */

import type { MentionCandidate } from '../shared/messages';
import type { AvailableCommand } from '../shared/protocol';
import { matchingCommands } from '../shared/state';
import { renderAttachments } from './attachments';
import { clear, h, icon } from './dom';
import { active, persist, post, state } from './panelState';
import { autosize, promptBox } from './prompt';

export const mentionList = h('ul', { class: 'mention-list', id: 'mention-list', role: 'listbox', hidden: true, 'aria-label': 'Files' });

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

export function closeMentions(): void {
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

/**
 * Follow what is typed at the caret: show the matching commands, else the mentions popup (the
 * host is asked for the files or resources matching the query). True when commands show.
 */
export function followPrompt(): boolean {
  if (showCommands()) return true;
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
  return false;
}

/** Whether the popup list shows (commands, mentions or its empty line). */
export function popupOpen(): boolean {
  return !mentionList.hidden;
}

/** The popup's keys (arrows move, Enter and Tab pick); true when the key was the popup's. */
export function popupKey(ev: KeyboardEvent): boolean {
  if (!mentionList.hidden && commandMatches.length > 0) {
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      const n = commandMatches.length;
      mentionIndex = (mentionIndex + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n;
      showCommands();
      return true;
    }
    const chosen = commandMatches[mentionIndex];
    // Enter on a fully typed name sends it; otherwise Enter and Tab complete.
    if (chosen && (ev.key === 'Tab' || (ev.key === 'Enter' && !ev.shiftKey && currentCommand() !== chosen.name))) {
      ev.preventDefault();
      pickCommand(chosen);
      return true;
    }
  }
  if (!mentionList.hidden && mentionCount() > 0) {
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      const n = mentionCount();
      mentionIndex = (mentionIndex + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n;
      renderMentions();
      return true;
    }
    if (ev.key === 'Enter' || ev.key === 'Tab') {
      const value = selectedMentionValue();
      if (value) {
        ev.preventDefault();
        pickMention(value);
        return true;
      }
    }
  }
  return false;
}

/** The host's answer to a mention query: shown if it answers what is typed now. */
export function showMentionResults(query: string, items: MentionCandidate[]): void {
  if (query === lastQuery && mentionStart >= 0) {
    mentionItems = items;
    renderMentions();
  }
}

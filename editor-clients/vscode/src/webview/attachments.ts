/** The composer's attachment chips: the editor selection (on/off) and the files mentioned. */

import { clear, h, icon } from './dom';
import { persist, state } from './panelState';
import { promptBox } from './prompt';

export const attachmentsRow = h('div', { class: 'attachments composer-attachments' });

export function renderAttachments(): void {
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

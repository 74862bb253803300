/** The plan dock under the conversation: the agent's plan entries and their progress. */

import type { PlanEntry } from '../shared/protocol';
import { clear, h, icon } from './dom';
import { active } from './panelState';

export const planBox = h('section', { class: 'plan', hidden: true, 'aria-label': 'Plan' });

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

export function renderPlan(): void {
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

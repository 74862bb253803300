/**
 * The form card of an MCP server's elicitation (`lspAgent/mcp/elicit`, docs/protocol.md §15.6):
 * one input per field of the flat schema MCP allows (text with its format, numbers, yes/no,
 * choices), required fields marked, the problems of the last answer listed. Submit sends the
 * typed values (empty optional fields left out; the server checks the rest), Decline and the
 * close button send `decline` / `cancel`.
 */

import type { McpFormRequest, ToHost } from '../shared/messages';
import { h, icon } from './dom';

interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  format?: string;
  enum?: string[];
  enumNames?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

const INPUT_TYPES: Record<string, string> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

function control(name: string, field: FieldSchema, id: string): HTMLElement {
  if (field.type === 'boolean') {
    return h('input', { type: 'checkbox', id, name, checked: field.default === true, 'data-kind': 'boolean' });
  }
  if (Array.isArray(field.enum)) {
    const select = h('select', { id, name, 'data-kind': 'enum' }, h('option', { value: '' }, '—'));
    field.enum.forEach((value, i) => {
      select.append(h('option', { value, selected: field.default === value }, field.enumNames?.[i] ?? value));
    });
    return select;
  }
  const numeric = field.type === 'number' || field.type === 'integer';
  return h('input', {
    type: numeric ? 'number' : (INPUT_TYPES[field.format ?? ''] ?? 'text'),
    id,
    name,
    'data-kind': field.type ?? 'string',
    value: field.default !== undefined && field.default !== null ? String(field.default) : undefined,
    step: field.type === 'integer' ? 1 : numeric ? 'any' : undefined,
    min: field.minimum,
    max: field.maximum,
    minlength: field.minLength,
    maxlength: field.maxLength,
  });
}

/** The values typed in `form`'s inputs, as the content of an `accept` answer. */
export function formContent(form: HTMLElement): Record<string, string | number | boolean> {
  const content: Record<string, string | number | boolean> = {};
  for (const el of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('[data-kind]')) {
    const kind = el.getAttribute('data-kind');
    if (kind === 'boolean') {
      content[el.name] = (el as HTMLInputElement).checked;
    } else if (el.value !== '') {
      const n = Number(el.value);
      // A value that is not a number is sent as typed: the server names the problem.
      content[el.name] = (kind === 'number' || kind === 'integer') && !Number.isNaN(n) ? n : el.value;
    }
  }
  return content;
}

/** The card of one pending form; `post` sends the answer. */
export function renderMcpForm(request: McpFormRequest, post: (message: ToHost) => void): HTMLElement {
  const schema = request.requestedSchema as { properties?: Record<string, FieldSchema>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const answer = (action: 'accept' | 'decline' | 'cancel', content?: Record<string, string | number | boolean>): void =>
    post({ type: 'mcpFormAnswer', formId: request.formId, action, ...(content ? { content } : {}) });
  const form = h('form', { class: 'mcp-form-fields' });
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const id = `mcp-form-${request.formId}-${name}`;
    const input = control(name, field, id);
    if (required.has(name)) input.setAttribute('aria-required', 'true');
    form.append(
      h(
        'div',
        { class: `mcp-form-field ${field.type === 'boolean' ? 'boolean' : ''}` },
        h('label', { for: id }, field.title ?? name, required.has(name) ? h('span', { class: 'required', title: 'required' }, ' *') : null),
        input,
        field.description ? h('span', { class: 'muted mcp-form-hint' }, field.description) : null,
      ),
    );
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    answer('accept', formContent(form));
  });
  const problems = request.problems ?? [];
  return h(
    'section',
    { class: 'mcp-form card', 'data-form-id': request.formId, 'aria-label': `Form from MCP server ${request.server}` },
    h(
      'header',
      { class: 'mcp-form-head' },
      icon('plug'),
      h('strong', {}, request.server),
      h('span', { class: 'muted' }, ' asks'),
      h('span', { class: 'spacer' }),
      h('button', { class: 'icon-button', type: 'button', title: 'Close (cancel)', 'aria-label': 'Close', onclick: () => answer('cancel') }, icon('close')),
    ),
    h('p', { class: 'mcp-form-message' }, request.message),
    problems.length > 0 ? h('ul', { class: 'mcp-form-problems', role: 'alert' }, ...problems.map((p) => h('li', {}, p))) : null,
    form,
    h(
      'div',
      { class: 'mcp-form-actions' },
      h('button', { class: 'button primary', type: 'button', onclick: () => answer('accept', formContent(form)) }, 'Submit'),
      h('button', { class: 'button secondary', type: 'button', onclick: () => answer('decline') }, 'Decline'),
    ),
  );
}

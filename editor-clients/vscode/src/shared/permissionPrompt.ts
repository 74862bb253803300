/**
 * What a permission prompt shows and sends, independent of the DOM: who asked (rule and
 * source), which answers are "always" answers, where those may be kept (scopes) and what they
 * save (the suggested rules). Shared by the extension host (broker, notifications) and the
 * chat webview; docs/protocol.md §5.1 is the contract.
 */

import { RULE_SCOPES, type PermissionOption, type PermissionOptionKind, type RuleScope } from './protocol';

/** Readable names of the `source` values (docs/protocol.md §5.1). */
const SOURCE_NAMES: Record<string, string> = {
  managed: 'managed settings',
  cli: 'command-line flags',
  flagSettings: 'the --settings file',
  lsp: 'editor settings',
  local: 'local project settings',
  project: 'project settings',
  user: 'user settings',
  session: 'an earlier answer in this session',
  mode: 'the permission mode',
  sandbox: 'the sandbox',
  hook: 'a hook',
  default: 'the default policy',
};

/** The readable name of a decision source; an unknown source is shown as sent. */
export function sourceName(source: string): string {
  return SOURCE_NAMES[source] ?? source;
}

/**
 * Who asked, as parts for display: `{ rule: 'Bash(git push:*)', from: 'project settings' }`
 * reads "Asked by rule Bash(git push:*) from project settings"; without a rule
 * `{ from: 'the sandbox' }` reads "Asked by the sandbox". Undefined when the server named
 * neither.
 */
export interface DecisionOrigin {
  rule?: string;
  from?: string;
}

export function decisionOrigin(params: { rule?: string | null; source?: string | null }): DecisionOrigin | undefined {
  const rule = typeof params.rule === 'string' && params.rule.trim() !== '' ? params.rule.trim() : undefined;
  const source = typeof params.source === 'string' && params.source.trim() !== '' ? params.source.trim() : undefined;
  if (!rule && !source) return undefined;
  return { ...(rule ? { rule } : {}), ...(source ? { from: sourceName(source) } : {}) };
}

/**
 * The origin as words: "Asked by rule Bash(git push:*) from project settings" ("asked by …"
 * with `capital` false, to go inside a sentence).
 */
export function describeOrigin(origin: DecisionOrigin, capital = true): string {
  const asked = capital ? 'Asked by' : 'asked by';
  if (origin.rule) return `${asked} rule ${origin.rule}${origin.from ? ` from ${origin.from}` : ''}`;
  return `${asked} ${origin.from ?? 'the server'}`;
}

export function isAlwaysKind(kind: PermissionOptionKind): boolean {
  return kind === 'allow_always' || kind === 'reject_always';
}

const KIND_ORDER: readonly PermissionOptionKind[] = ['allow_once', 'allow_always', 'reject_once', 'reject_always'];

/** The options split into one-off answers and "always" answers, each in allow-then-reject order. */
export function splitOptions(options: readonly PermissionOption[]): { once: PermissionOption[]; always: PermissionOption[] } {
  const sorted = [...options].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
  return { once: sorted.filter((o) => !isAlwaysKind(o.kind)), always: sorted.filter((o) => isAlwaysKind(o.kind)) };
}

export interface ScopeChoice {
  scope: RuleScope;
  /** Short label for a picker ("Session"). */
  label: string;
  /** What choosing it means ("Saved to .claude/settings.local.json in this project"). */
  detail: string;
}

const SCOPE_CHOICES: Record<RuleScope, ScopeChoice> = {
  session: { scope: 'session', label: 'Session', detail: 'Kept for this session only; nothing is saved.' },
  project: { scope: 'project', label: 'Project', detail: 'Saved to .claude/settings.local.json in this project.' },
  user: { scope: 'user', label: 'User', detail: 'Saved to ~/.claude/settings.json, for all your projects.' },
};

export function scopeChoice(scope: RuleScope): ScopeChoice {
  return SCOPE_CHOICES[scope];
}

/**
 * The scopes an "always" answer may use, in the server's order, unknown and repeated values
 * dropped. A server that offers none keeps "always" answers for the session (its default).
 */
export function offeredScopes(scopes: readonly unknown[] | undefined): RuleScope[] {
  const out: RuleScope[] = [];
  for (const s of Array.isArray(scopes) ? scopes : []) {
    if ((RULE_SCOPES as readonly unknown[]).includes(s) && !out.includes(s as RuleScope)) out.push(s as RuleScope);
  }
  return out.length > 0 ? out : ['session'];
}

/** The scope preselected in the picker: `session` when offered, else the first offered. */
export function defaultScope(scopes: readonly RuleScope[]): RuleScope | undefined {
  return scopes.includes('session') ? 'session' : scopes[0];
}

/** Error for an answer that does not fit the question (unknown option, scope not offered). */
export class PermissionAnswerError extends Error {
  override name = 'PermissionAnswerError';
}

/**
 * The `scope` to send with `option`: only "always" answers carry one; it defaults to the
 * preselected scope and must be one the server offered. Throws `PermissionAnswerError` for a
 * scope not offered.
 */
export function answerScope(option: PermissionOption, scopes: readonly RuleScope[], requested?: RuleScope): RuleScope | undefined {
  if (!isAlwaysKind(option.kind)) return undefined;
  const scope = requested ?? defaultScope(scopes);
  if (scope !== undefined && !scopes.includes(scope)) {
    throw new PermissionAnswerError(`"${option.name}" cannot be kept in the ${scope} scope; offered: ${scopes.join(', ') || 'none'}.`);
  }
  return scope;
}

/** How an answered question reads on its card: "Always allow · saved to project settings". */
export function resolvedLabel(chosen: string, scope: RuleScope | undefined): string {
  if (scope === 'project') return `${chosen} · saved to project settings`;
  if (scope === 'user') return `${chosen} · saved to user settings`;
  if (scope === 'session') return `${chosen} · for this session`;
  return chosen;
}

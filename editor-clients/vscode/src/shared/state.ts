/**
 * The chat state of one session, built from the server's `lspAgent/session/update` stream.
 *
 * The extension host and the webview run the same reducer over the same messages, so the
 * panel can be rebuilt from a snapshot at any time. Every item carries a revision (`rev`)
 * that changes whenever the item changes; the webview re-renders an item only then.
 * Functions here mutate the session in place (streams are long; copying per chunk is not).
 */

import { offeredScopes } from './permissionPrompt';
import type {
  AvailableCommand,
  ContentBlock,
  PermissionOption,
  PlanEntry,
  ProposalStatus,
  TurnResult,
  RequestPermissionParams,
  RuleScope,
  SessionMode,
  SessionUpdate,
  TextContent,
  ToolCall,
  ToolCallContent,
  ToolCallUpdate,
  ToolCallLocation,
  ToolCallStatus,
  ToolKind,
} from './protocol';

export interface Attachment {
  label: string;
  uri: string;
}

export interface UserItem {
  kind: 'user';
  id: string;
  rev: number;
  text: string;
  attachments: Attachment[];
  /** The server's id of this prompt (the prompt result's `messageId`, or the replayed
   * `user_message_chunk`'s): what "Rewind to here" sends. */
  messageId?: string;
}

export interface AgentItem {
  kind: 'agent';
  id: string;
  rev: number;
  text: string;
  messageId?: string;
}

export interface ThoughtItem {
  kind: 'thought';
  id: string;
  rev: number;
  text: string;
  messageId?: string;
}

export type PermissionState = 'pending' | 'allowed' | 'rejected' | 'cancelled';

export interface PermissionInfo {
  requestId: string;
  reason: string;
  options: PermissionOption[];
  /** The rule that asked and where it (or the policy that asked) comes from. */
  rule?: string;
  source?: string;
  /** What an "always" answer saves, and where it may be kept. */
  suggestedRules: string[];
  /** The same rules as the user knows them ("Edit src/cart.py"), one per rule. */
  ruleLabels: string[];
  scopes: RuleScope[];
  state: PermissionState;
  /** Name of the chosen option once answered. */
  chosen?: string;
  feedback?: string;
  edited?: boolean;
  /** Where the chosen "always" answer is kept. */
  scope?: RuleScope;
}

/** The permission info a request shows (malformed optional fields are dropped). */
export function permissionInfo(requestId: string, params: RequestPermissionParams): PermissionInfo {
  const given = Array.isArray(params.suggestedRules) ? params.suggestedRules : [];
  const labels = Array.isArray(params.suggestedRuleLabels) ? params.suggestedRuleLabels : [];
  const rules: string[] = [];
  const ruleLabels: string[] = [];
  given.forEach((rule, i) => {
    if (typeof rule !== 'string' || rule === '') return;
    const label = labels[i];
    rules.push(rule);
    ruleLabels.push(typeof label === 'string' && label !== '' ? label : rule);
  });
  return {
    requestId,
    reason: typeof params.reason === 'string' ? params.reason : '',
    options: Array.isArray(params.options) ? params.options : [],
    ...(typeof params.rule === 'string' && params.rule !== '' ? { rule: params.rule } : {}),
    ...(typeof params.source === 'string' && params.source !== '' ? { source: params.source } : {}),
    suggestedRules: rules,
    ruleLabels,
    scopes: offeredScopes(params.scopes),
    state: 'pending',
  };
}

export interface ToolItem {
  kind: 'tool';
  id: string;
  rev: number;
  title: string;
  toolKind: ToolKind;
  status: ToolCallStatus;
  content: ToolCallContent[];
  locations: ToolCallLocation[];
  rawInput?: Record<string, unknown>;
  rawOutput?: Record<string, unknown>;
  permission?: PermissionInfo;
  /** How the pending proposal relates to the buffers now (the user typed meanwhile), by path. */
  proposal?: Record<string, ProposalStatus>;
}

export type NoticeLevel = 'info' | 'warning' | 'error';

export interface NoticeItem {
  kind: 'notice';
  id: string;
  rev: number;
  level: NoticeLevel;
  text: string;
  /** Longer text shown folded under the notice (a compaction's summary, an error's details). */
  detail?: string;
  /** Buttons offered with the notice: send the last prompt again, open the server log. */
  actions?: NoticeAction[];
}

export type NoticeAction = 'retry' | 'showLog';

/**
 * A turn's error as a short message (its first clause, without the exception chain and the
 * retry count) and the full text as details; `detail` is left out when nothing was cut.
 */
export function splitError(message: string): { text: string; detail?: string } {
  const full = message.trim();
  const firstLine = full.split('\n', 1)[0] ?? full;
  // The exception chain "(ConnectionRefusedError: …)", the "(after 4 retries)" tail and
  // "[request-id …]" are details; so is what follows the first ": " of a long message.
  let short = firstLine.replace(/\s*\((?:after \d+ retr|[A-Za-z_.]*(?:Error|Exception)\b|\[Errno).*$/s, '');
  short = short.replace(/\s*\[request-id [^\]]*\]/, '');
  if (short.length > 140) {
    const colon = short.indexOf(': ', 20);
    if (colon > 0) short = short.slice(0, colon);
  }
  short = short.replace(/[\s:;,]+$/, '');
  if (!/[.!?]$/.test(short)) short += '.';
  return short.replace(/\.$/, '') === full.replace(/\.$/, '') ? { text: short } : { text: short, detail: full };
}

export type ChatItem = UserItem | AgentItem | ThoughtItem | ToolItem | NoticeItem;

export interface TokenTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

export interface SessionState {
  id: string;
  title: string;
  cwd?: string;
  modeId: string;
  availableModes: SessionMode[];
  running: boolean;
  /** Slash commands the session accepts (`available_commands_update`), for `/` completion. */
  commands: AvailableCommand[];
  /** The model request being retried (`model_retry`), until the next other update or the turn's end. */
  retry?: { attempt: number; maxRetries: number; delayMs: number; error: string };
  /** Context window use from the last `usage_update`: `used` of `size` tokens. */
  context?: { used: number; size: number };
  tokens: TokenTotals;
  plan: PlanEntry[];
  items: ChatItem[];
  /** Bumped on any change; lets renderers skip untouched sessions. */
  rev: number;
  nextLocalId: number;
}

/** Modes shown before the server tells us its own list (names from Claude Code). */
export const DEFAULT_MODES: SessionMode[] = [
  { id: 'default', name: 'Default', description: 'Ask before edits and commands' },
  { id: 'acceptEdits', name: 'Accept edits', description: 'Apply file edits without asking' },
  { id: 'plan', name: 'Plan', description: 'Read and plan only; no changes' },
  {
    id: 'bypassPermissions',
    name: 'Bypass permissions',
    description: 'Run everything without asking',
  },
];

export function createSession(init: {
  id: string;
  cwd?: string;
  modeId?: string;
  availableModes?: SessionMode[];
  title?: string;
  commands?: AvailableCommand[];
}): SessionState {
  return {
    id: init.id,
    title: init.title ?? 'New chat',
    cwd: init.cwd,
    modeId: init.modeId ?? 'default',
    availableModes: init.availableModes && init.availableModes.length > 0 ? init.availableModes : DEFAULT_MODES,
    running: false,
    commands: init.commands ?? [],
    tokens: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 },
    plan: [],
    items: [],
    rev: 0,
    nextLocalId: 1,
  };
}

function localId(session: SessionState, prefix: string): string {
  const id = `${prefix}-${session.nextLocalId}`;
  session.nextLocalId += 1;
  return id;
}

function touch(session: SessionState, item?: ChatItem): void {
  session.rev += 1;
  if (item) {
    item.rev += 1;
  }
}

const TITLE_LENGTH = 48;

/** A tab title from the first prompt: first line, whitespace collapsed, at most 48 characters. */
export function titleFromPrompt(text: string): string {
  const line = text.trim().split('\n')[0]?.replace(/\s+/g, ' ') ?? '';
  if (line.length === 0) {
    return 'New chat';
  }
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1)}…` : line;
}

/** Record the user's prompt and mark the session running. */
export function startTurn(session: SessionState, text: string, attachments: Attachment[]): UserItem {
  const item: UserItem = { kind: 'user', id: localId(session, 'user'), rev: 1, text, attachments };
  if (session.items.every((i) => i.kind !== 'user')) {
    session.title = titleFromPrompt(text);
  }
  session.items.push(item);
  session.running = true;
  touch(session);
  return item;
}

const STOP_NOTICES: Record<string, { level: NoticeLevel; text: string } | undefined> = {
  max_tokens: { level: 'warning', text: 'The answer hit the output token limit.' },
  max_turn_requests: { level: 'warning', text: 'Stopped: the turn reached its request limit.' },
  refusal: { level: 'warning', text: 'The model declined to continue.' },
  cancelled: { level: 'info', text: 'Stopped.' },
};

/** Mark the turn finished; adds a notice for every stop reason but `end_turn`, and for errors. */
export function endTurn(session: SessionState, result: TurnResult | { error: string }): void {
  session.running = false;
  delete session.retry;
  if ('error' in result) {
    const { text, detail } = splitError(result.error);
    const item = addNotice(session, 'error', text);
    if (detail) item.detail = detail;
    item.actions = ['retry', 'showLog'];
  } else {
    if (result.messageId) {
      // The prompt this turn answered is the newest one the user sent.
      const prompt = [...session.items].reverse().find((i): i is UserItem => i.kind === 'user');
      if (prompt && prompt.messageId !== result.messageId) {
        prompt.messageId = result.messageId;
        prompt.rev += 1;
      }
    }
    const usage = result.usage;
    if (usage) {
      session.tokens.input += usage.inputTokens;
      session.tokens.output += usage.outputTokens;
      session.tokens.cacheRead += usage.cacheReadInputTokens ?? 0;
      session.tokens.cacheCreation += usage.cacheCreationInputTokens ?? 0;
    }
    const notice = STOP_NOTICES[result.stopReason];
    if (notice) {
      addNotice(session, notice.level, notice.text);
    }
  }
  // A turn that ended leaves no tool call pending or running, nor a question open.
  for (const item of session.items) {
    if (item.kind === 'tool') {
      let changed = false;
      if (item.status === 'pending' || item.status === 'in_progress') {
        item.status = 'failed';
        changed = true;
      }
      if (item.permission?.state === 'pending') {
        item.permission.state = 'cancelled';
        changed = true;
      }
      if (changed) {
        item.rev += 1;
      }
    }
  }
  touch(session);
}

export function addNotice(session: SessionState, level: NoticeLevel, text: string): NoticeItem {
  const item: NoticeItem = { kind: 'notice', id: localId(session, 'notice'), rev: 1, level, text };
  session.items.push(item);
  touch(session);
  return item;
}

function findTool(session: SessionState, toolCallId: string): ToolItem | undefined {
  for (let i = session.items.length - 1; i >= 0; i -= 1) {
    const item = session.items[i];
    if (item?.kind === 'tool' && item.id === toolCallId) {
      return item;
    }
  }
  return undefined;
}

function upsertTool(session: SessionState, call: ToolCall | ToolCallUpdate): ToolItem {
  let item = findTool(session, call.toolCallId);
  if (!item) {
    item = {
      kind: 'tool',
      id: call.toolCallId,
      rev: 0,
      title: call.title ?? 'Tool call',
      toolKind: call.kind ?? 'other',
      status: call.status ?? 'pending',
      content: call.content ?? [],
      locations: call.locations ?? [],
    };
    session.items.push(item);
  }
  if (call.title !== undefined) item.title = call.title;
  if (call.kind !== undefined) item.toolKind = call.kind;
  if (call.status !== undefined) item.status = call.status;
  if (call.content !== undefined) item.content = call.content;
  if (call.locations !== undefined) item.locations = call.locations;
  if (call.rawInput !== undefined) item.rawInput = call.rawInput;
  if ('rawOutput' in call && call.rawOutput !== undefined) item.rawOutput = call.rawOutput;
  if ('proposal' in call && call.proposal !== undefined) {
    item.proposal = { ...item.proposal };
    for (const status of call.proposal) item.proposal[status.path] = status;
  }
  touch(session, item);
  return item;
}

function appendText(
  session: SessionState,
  kind: 'agent' | 'thought',
  text: string,
  messageId: string | undefined,
): void {
  const last = session.items[session.items.length - 1];
  if (last && last.kind === kind && (messageId === undefined || last.messageId === messageId)) {
    last.text += text;
    touch(session, last);
    return;
  }
  const item: AgentItem | ThoughtItem = {
    kind,
    id: localId(session, kind),
    rev: 1,
    text,
    ...(messageId === undefined ? {} : { messageId }),
  };
  session.items.push(item);
  touch(session);
}

function blockText(block: ContentBlock | TextContent): string {
  if (block.type === 'text') return block.text;
  return `@${block.type === 'resource' ? block.resource.uri : block.uri}`;
}

/**
 * Apply one `lspAgent/session/update`. Unknown update kinds are ignored (newer servers may
 * send more); returns whether anything changed.
 */
export function applyUpdate(session: SessionState, update: SessionUpdate): boolean {
  if (session.retry && update.sessionUpdate !== 'model_retry') {
    // Anything else from the session means the retried request got through (or the turn moved on).
    delete session.retry;
    touch(session);
  }
  switch (update.sessionUpdate) {
    case 'model_retry':
      session.retry = {
        attempt: update.attempt,
        maxRetries: update.maxRetries,
        delayMs: update.delayMs,
        error: update.error,
      };
      touch(session);
      return true;
    case 'agent_message_chunk':
      appendText(session, 'agent', update.content.text ?? '', update.messageId);
      return true;
    case 'agent_thought_chunk':
      appendText(session, 'thought', update.content.text ?? '', update.messageId);
      return true;
    case 'user_message_chunk': {
      // While a turn runs the prompt is already shown (the server may echo it); otherwise this
      // is a replay of history (session load) and chunks of one prompt join one item.
      if (session.running) {
        return false;
      }
      const text = blockText(update.content);
      const last = session.items[session.items.length - 1];
      if (last?.kind === 'user') {
        last.text += text;
        touch(session, last);
        return true;
      }
      const item: UserItem = { kind: 'user', id: localId(session, 'user'), rev: 1, text, attachments: [] };
      if (update.messageId) item.messageId = update.messageId;
      if (session.items.every((i) => i.kind !== 'user')) {
        session.title = titleFromPrompt(text);
      }
      session.items.push(item);
      touch(session);
      return true;
    }
    case 'tool_call':
    case 'tool_call_update':
      upsertTool(session, update);
      return true;
    case 'usage_update':
      session.context = { used: update.used, size: update.size };
      touch(session);
      return true;
    case 'plan':
      session.plan = update.entries.map((e) => ({ ...e }));
      touch(session);
      return true;
    case 'current_mode_update':
      session.modeId = update.currentModeId;
      touch(session);
      return true;
    case 'available_commands_update':
      session.commands = update.availableCommands.map((c) => ({ ...c }));
      touch(session);
      return true;
    case 'session_info_update':
      // The short title the model wrote replaces the one taken from the first prompt.
      if (!update.title) return false;
      session.title = update.title;
      touch(session);
      return true;
    case 'context_compacted': {
      const item: NoticeItem = {
        kind: 'notice',
        id: localId(session, 'notice'),
        rev: 1,
        level: 'info',
        text: compactionLine(update),
        ...(update.summary ? { detail: update.summary } : {}),
      };
      session.items.push(item);
      touch(session);
      return true;
    }
    default:
      return false;
  }
}

/** "Retrying (2/4) in 3 s — overloaded_error": what the panel shows while a model request is retried. */
export function retryLine(retry: NonNullable<SessionState['retry']>): string {
  const wait = retry.delayMs >= 1000 ? `${Math.round(retry.delayMs / 1000)} s` : `${retry.delayMs} ms`;
  return `Retrying (${retry.attempt}/${retry.maxRetries}) in ${wait} — ${retry.error}`;
}

/** Show a permission question on its tool call card (creating the card if the server sent none). */
export function addPermission(session: SessionState, requestId: string, params: RequestPermissionParams): ToolItem {
  const item = upsertTool(session, params.toolCall);
  item.permission = permissionInfo(requestId, params);
  touch(session, item);
  return item;
}

/** Record how a permission question ended. */
export function resolvePermission(
  session: SessionState,
  requestId: string,
  resolution: { state: PermissionState; chosen?: string; feedback?: string; edited?: boolean; scope?: RuleScope },
): ToolItem | undefined {
  for (const item of session.items) {
    if (item.kind === 'tool' && item.permission?.requestId === requestId) {
      item.permission = { ...item.permission, ...resolution };
      touch(session, item);
      return item;
    }
  }
  return undefined;
}

/** Pending permission questions of a session, oldest first. */
export function pendingPermissions(session: SessionState): ToolItem[] {
  return session.items.filter(
    (i): i is ToolItem => i.kind === 'tool' && i.permission?.state === 'pending',
  );
}

/** "Compacted: 182k → 31k tokens; kept 4 instructions, 7 files". */
export function compactionLine(u: { tokensBefore: number; tokensAfter: number; promptsKept: number; files: number }): string {
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `Compacted: ${formatTokens(u.tokensBefore)} → ${formatTokens(u.tokensAfter)} tokens; kept ${plural(u.promptsKept, 'instruction')}, ${plural(u.files, 'file')}`;
}

/** The session's slash commands whose name starts with `query` (the text after "/"). */
export function matchingCommands(session: SessionState | undefined, query: string): AvailableCommand[] {
  return (session?.commands ?? []).filter((c) => c.name.startsWith(query));
}

/** "12.3k", "1.2M", "980": compact token counts for meters. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  // Round-trip boundaries: 9 950 shows as "10k", 999 500 as "1.0M" (never "1000k").
  if (n < 999_500) return `${(n / 1000).toFixed(n < 9_950 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

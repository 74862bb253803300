/**
 * Wire shapes of the lspAgent/* protocol (docs/protocol.md in the repository is the contract).
 *
 * Payloads mirror the Agent Client Protocol (ACP) `session/*` messages. Positions are LSP
 * positions (0-based line, UTF-16 code units, the encoding VS Code negotiates); tool-call
 * `line`s are 1-based as in ACP. This module is shared by the extension host and the webview,
 * so it holds types and constants only.
 */

/** Version of the lspAgent/* protocol this client speaks (`capabilities.experimental.lspAgent.protocolVersion`). */
export const PROTOCOL_VERSION = 1;

/** Oldest server release this client works with (compared with `capabilities.experimental.lspAgent.version`). */
export const MIN_SERVER_VERSION = '0.1.0';

export const Methods = {
  sessionNew: 'lspAgent/session/new',
  sessionPrompt: 'lspAgent/session/prompt',
  sessionCancel: 'lspAgent/session/cancel',
  sessionSetMode: 'lspAgent/session/setMode',
  sessionList: 'lspAgent/session/list',
  sessionLoad: 'lspAgent/session/load',
  sessionUpdate: 'lspAgent/session/update',
  requestPermission: 'lspAgent/session/requestPermission',
  saveDocuments: 'lspAgent/workspace/saveDocuments',
  didChangeFiles: 'lspAgent/workspace/didChangeFiles',
  diagnosticsDidChange: 'lspAgent/diagnostics/didChange',
  sessionDidStart: 'lspAgent/session/didStart',
  sessionDidEnd: 'lspAgent/session/didEnd',
  mcpList: 'lspAgent/mcp/list',
  mcpApprove: 'lspAgent/mcp/approve',
  mcpReconnect: 'lspAgent/mcp/reconnect',
  mcpDidChange: 'lspAgent/mcp/didChange',
} as const;

/** One MCP server as `lspAgent/mcp/list` and `lspAgent/mcp/didChange` describe it (protocol.md §15). */
export interface McpServerInfo {
  name: string;
  scope: string;
  transport: string;
  /** starting, ready, failed, needs_approval, untrusted, disabled, denied, invalid, idle, stopped */
  state: string;
  error: string | null;
  tools: number;
  description: string;
}

/** The answer of every `lspAgent/mcp/*` request and the `didChange` payload. */
export interface McpServersResult {
  cwd: string;
  servers: McpServerInfo[];
}

export type McpAction = 'approve' | 'reject' | 'reconnect';

/**
 * `workspace/executeCommand` commands the server advertises (`executeCommandProvider`). The
 * language client registers each as a VS Code command of the same id, so the extension's own
 * commands must never use these ids (VS Code refuses a second registration).
 */
export const ServerCommands = {
  fixWithAgent: 'lspAgent.fixWithAgent',
  explainWithAgent: 'lspAgent.explainWithAgent',
  askAgent: 'lspAgent.askAgent',
  applySuggestion: 'lspAgent.applySuggestion',
} as const;

export type ModeId = 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions';

export const MODE_IDS: readonly ModeId[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions'];

export interface SessionMode {
  id: string;
  name: string;
  description?: string;
}

export interface SessionModeState {
  currentModeId: string;
  availableModes: SessionMode[];
}

/** Zero-based LSP position (character in UTF-16 code units). */
export interface WirePosition {
  line: number;
  character: number;
}

export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

export interface TextBlock {
  type: 'text';
  text: string;
}

/** An @-mention or the selection: the *buffer* text of the resource, optionally a range in it. */
export interface ResourceBlock {
  type: 'resource';
  resource: { uri: string; text: string; mimeType?: string };
  _meta?: { range?: WireRange };
}

export type ContentBlock = TextBlock | ResourceBlock;

export interface NewSessionParams {
  cwd?: string;
  additionalDirectories?: string[];
  mode?: string;
}

export interface NewSessionResult {
  sessionId: string;
  modes?: SessionModeState;
}

export interface PromptParams {
  sessionId: string;
  prompt: ContentBlock[];
}

export type StopReason = 'end_turn' | 'max_tokens' | 'max_turn_requests' | 'refusal' | 'cancelled';

/** Token counts of one turn. */
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
}

export interface PromptResult {
  stopReason: StopReason;
  usage?: TurnUsage;
}

export interface SessionListResult {
  sessions: { sessionId: string; cwd?: string; busy?: boolean; title?: string }[];
}

export type ToolKind =
  | 'read'
  | 'edit'
  | 'delete'
  | 'move'
  | 'search'
  | 'execute'
  | 'think'
  | 'fetch'
  | 'switch_mode'
  | 'other';

export type ToolCallStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

export interface ContentItem {
  type: 'content';
  content: { type: 'text'; text: string } | { type: string; [key: string]: unknown };
}

/** Whole-file texts before (`null` for a new file) and after an edit. */
export interface DiffItem {
  type: 'diff';
  path: string;
  uri?: string;
  oldText: string | null;
  newText: string;
  unifiedDiff?: string;
}

export type ToolCallContent = ContentItem | DiffItem;

/** A file touched by a tool call; `line` is 1-based. */
export interface ToolCallLocation {
  path: string;
  uri?: string;
  line?: number;
}

export interface ToolCall {
  toolCallId: string;
  title: string;
  kind?: ToolKind;
  status?: ToolCallStatus;
  content?: ToolCallContent[];
  locations?: ToolCallLocation[];
  rawInput?: Record<string, unknown>;
  rawOutput?: Record<string, unknown>;
}

export interface PlanEntry {
  content: string;
  priority?: 'high' | 'medium' | 'low';
  status?: 'pending' | 'in_progress' | 'completed';
}

export type SessionUpdate =
  | { sessionUpdate: 'agent_message_chunk'; content: TextBlock; messageId?: string }
  | { sessionUpdate: 'agent_thought_chunk'; content: TextBlock; messageId?: string }
  | { sessionUpdate: 'user_message_chunk'; content: ContentBlock; messageId?: string }
  | ({ sessionUpdate: 'tool_call' } & ToolCall)
  | ({ sessionUpdate: 'tool_call_update' } & Partial<ToolCall> & { toolCallId: string })
  | { sessionUpdate: 'usage_update'; used: number; size: number }
  | { sessionUpdate: 'plan'; entries: PlanEntry[] }
  | { sessionUpdate: 'current_mode_update'; currentModeId: string };

export interface SessionUpdateParams {
  sessionId: string;
  update: SessionUpdate;
}

export type PermissionOptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: PermissionOptionKind;
}

/**
 * Where an "always" answer is kept: this session only, the project's
 * `.claude/settings.local.json`, or the user's `~/.claude/settings.json`.
 */
export type RuleScope = 'session' | 'project' | 'user';

export const RULE_SCOPES: readonly RuleScope[] = ['session', 'project', 'user'];

/**
 * The settings layer or policy that decided a permission question (`source`): with a rule
 * `managed`, `cli`, `flagSettings`, `lsp`, `local`, `project`, `user`, `session`; without one
 * `mode`, `sandbox`, `hook`, `default`. Newer servers may send others (shown as they are).
 */
export type DecisionSource =
  | 'managed'
  | 'cli'
  | 'flagSettings'
  | 'lsp'
  | 'local'
  | 'project'
  | 'user'
  | 'session'
  | 'mode'
  | 'sandbox'
  | 'hook'
  | 'default';

export interface RequestPermissionParams {
  sessionId: string;
  toolCall: ToolCall;
  /** The answers offered; the "always" kinds are left out when an always-rule could not help. */
  options: PermissionOption[];
  /** Why the server asks, in words for the user. */
  reason?: string;
  /** The permission rule that asked (e.g. `Bash(git push:*)`), when a rule did. */
  rule?: string;
  /** Where that rule (or, without one, the policy) comes from. */
  source?: DecisionSource | string;
  /** The rules an "always" answer saves: shown to the user before answering. */
  suggestedRules?: string[];
  /** Where an "always" answer may be kept (absent: the session only). */
  scopes?: RuleScope[];
  _meta?: { unsavedBuffers?: string[]; [key: string]: unknown };
}

/**
 * The answer to `lspAgent/session/requestPermission`.
 *
 * `feedback` goes to the model (with a rejection, or as a remark with an approval).
 * `editedText` (file URI → full text) is what the user approved instead of the proposal: a
 * proposal edited before accepting, or accepted only in part (per-hunk review). `scope`
 * (with `allow_always`/`reject_always` only) says where the suggested rules are kept.
 */
export interface RequestPermissionResult {
  outcome:
    | { outcome: 'selected'; optionId: string; feedback?: string; editedText?: Record<string, string>; scope?: RuleScope }
    | { outcome: 'cancelled' };
}

export interface SaveDocumentsParams {
  uris: string[];
}

export interface SaveDocumentsResult {
  saved: string[];
}

export interface DidChangeFilesParams {
  uris: string[];
}

/** LSP diagnostic as sent by the diagnostics bridge. */
export interface WireDiagnostic {
  range: WireRange;
  severity?: 1 | 2 | 3 | 4;
  code?: string | number;
  source?: string;
  message: string;
  tags?: number[];
}

export interface DiagnosticsDidChangeParams {
  uri: string;
  /** Version of the open document the diagnostics were computed for; `null` when not open. */
  version: number | null;
  diagnostics: WireDiagnostic[];
}

/**
 * `lspAgent/session/didStart`: the server started a turn on its own, for an agent command
 * (a code action such as "Fix with agent"). Updates and permission requests of the turn follow.
 */
export interface SessionDidStartParams {
  sessionId: string;
  cwd?: string;
  /** E.g. "Fix with agent: cart.py". */
  title?: string;
  /** The command that started it, e.g. `lspAgent.fixWithAgent`. */
  origin?: string;
}

/** `lspAgent/session/didEnd`: a turn started by the server is over. */
export interface SessionDidEndParams {
  sessionId: string;
  stopReason: StopReason;
  /** Why the turn failed (the model endpoint, a bug), when it did. */
  error?: string;
}

/** What the server advertises in `capabilities.experimental.lspAgent`. */
export interface ServerAgentCapabilities {
  version: string;
  protocolVersion: number;
}

/**
 * Wire shapes of the lspAgent/* protocol (docs/protocol.md in the repository is the contract).
 *
 * The shapes, method names and server commands are generated from the server's single source
 * into `protocol.generated.ts` (`make protocol`); this module re-exports them under the names
 * the extension uses and adds what only the client knows (its minimum server version). Payloads
 * mirror the Agent Client Protocol (ACP) `session/*` messages. Positions are LSP positions
 * (0-based line, UTF-16 code units, the encoding VS Code negotiates); tool-call `line`s are
 * 1-based as in ACP. This module is shared by the extension host and the webview, so it holds
 * types and constants only.
 */

import {
  PERMISSION_MODE_VALUES,
  RULE_SCOPE_VALUES,
  type AgentCapabilities,
  type Location,
  type PermissionMode,
  type Position,
  type PromptResult,
  type Range,
  type ResourceBlockIn,
  type TextBlockIn,
} from './protocol.generated';

export * from './protocol.generated';

/** Oldest server release this client works with (compared with `capabilities.experimental.lspAgent.version`). */
export const MIN_SERVER_VERSION = '0.1.0';

export type ModeId = PermissionMode;

/** What the user can do about an MCP server in the panel. */
export type McpAction = 'approve' | 'reject' | 'reconnect' | 'login' | 'logout' | 'enable' | 'disable';

/**
 * How a turn ended as the extension records it: the server's `PromptResult`, or one made
 * here (a cancel the server did not answer, the `didEnd` of a server-started turn).
 */
export type TurnResult = Pick<PromptResult, 'stopReason'> & Partial<Pick<PromptResult, 'usage' | 'messageId'>>;
export const MODE_IDS: readonly ModeId[] = PERMISSION_MODE_VALUES;
export const RULE_SCOPES = RULE_SCOPE_VALUES;

/** Zero-based LSP position (character in UTF-16 code units). */
export type WirePosition = Position;
export type WireRange = Range;
export type TextBlock = TextBlockIn;
/** An @-mention or the selection: the *buffer* text of the resource, optionally a range in it. */
export type ResourceBlock = ResourceBlockIn;
/** A file touched by a tool call; `line` is 1-based. */
export type ToolCallLocation = Location;
/** What the server advertises in `capabilities.experimental.lspAgent`. */
export type ServerAgentCapabilities = AgentCapabilities;

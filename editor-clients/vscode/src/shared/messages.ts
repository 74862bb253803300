/**
 * Messages between the extension host and the chat webview (`postMessage` both ways).
 *
 * The host owns the truth (sessions, server state); the webview mirrors it by applying the same
 * reducer (`state.ts`) to the same session updates, and asks the host to act through
 * `ToWebviewHost` messages. Both sides validate what they receive (`isWebviewMessage`).
 */

import { RULE_SCOPES, type ContentBlock, type McpAction, type McpServerInfo, type TurnResult, type RequestPermissionParams, type RuleScope, type SessionUpdate } from './protocol';
import type { Attachment, PermissionState, SessionState } from './state';

export type ServerPhase = 'starting' | 'running' | 'stopped' | 'restarting' | 'missing' | 'incompatible' | 'failed';

/** An action button the host offers in the server banner (the id is sent back as `runAction`). */
export interface HostAction {
  id: 'configureServer' | 'showLog' | 'restartServer' | 'openInstallGuide' | 'trustWorkspace';
  label: string;
}

export interface ServerStatus {
  phase: ServerPhase;
  message?: string;
  version?: string;
  actions?: HostAction[];
}

/** The editor's current selection, offered as a prompt attachment. */
export interface SelectionInfo {
  uri: string;
  label: string;
  /** 1-based inclusive line numbers for display. */
  startLine: number;
  endLine: number;
}

export interface MentionCandidate {
  uri: string;
  /** Path relative to its workspace folder, as typed after `@`. */
  label: string;
  description?: string;
  /** `mcp`: an MCP resource (`label` is `server:uri`); the server reads it from the prompt text. */
  kind?: 'mcp';
}

/** One row of the session list (server sessions, open in a tab or not). */
export interface SessionSummary {
  sessionId: string;
  title: string;
  cwd?: string;
  busy: boolean;
  open: boolean;
  /** The id of the background run (`lsp-agent run -p --bg`) running this session now. */
  backgroundRun?: string;
}

export interface PanelSnapshot {
  sessions: SessionState[];
  activeSessionId?: string;
  server: ServerStatus;
  history: string[];
  selection?: SelectionInfo;
  editedProposals: boolean;
  /** The MCP servers of the workspace, as last reported by the server. */
  mcpServers?: McpServerInfo[];
}

export type ToWebview =
  | { type: 'snapshot'; snapshot: PanelSnapshot }
  | { type: 'sessionAdded'; session: SessionState; activate: boolean }
  | { type: 'sessionActivated'; sessionId: string }
  | { type: 'sessionClosed'; sessionId: string }
  | { type: 'sessionUpdate'; sessionId: string; update: SessionUpdate }
  | { type: 'turnStarted'; sessionId: string; text: string; attachments: Attachment[] }
  | { type: 'turnEnded'; sessionId: string; result: TurnResult | { error: string } }
  | { type: 'permissionRequested'; requestId: string; request: RequestPermissionParams }
  | {
      type: 'permissionResolved';
      sessionId: string;
      requestId: string;
      state: PermissionState;
      chosen?: string;
      feedback?: string;
      edited?: boolean;
      scope?: RuleScope;
    }
  | { type: 'serverStatus'; status: ServerStatus }
  | { type: 'history'; history: string[] }
  | { type: 'selection'; selection?: SelectionInfo }
  | { type: 'mentionResults'; query: string; items: MentionCandidate[] }
  | { type: 'notice'; sessionId?: string; level: 'info' | 'warning' | 'error'; text: string }
  | { type: 'focusPrompt'; text?: string }
  | { type: 'sessionList'; sessions: SessionSummary[] }
  | { type: 'mcpServers'; servers: McpServerInfo[] }
  | { type: 'mcpForm'; form: McpFormRequest }
  | { type: 'mcpFormClosed'; formId: string };

/** An MCP server's form waiting for the user (`lspAgent/mcp/elicit`), with the host's id. */
export interface McpFormRequest {
  formId: string;
  server: string;
  message: string;
  requestedSchema: Record<string, unknown>;
  problems?: string[];
}

export type ToHost =
  | { type: 'ready' }
  | { type: 'newSession' }
  | { type: 'activateSession'; sessionId: string }
  | { type: 'closeSession'; sessionId: string }
  | { type: 'prompt'; sessionId?: string; text: string; mentions: MentionCandidate[]; includeSelection: boolean }
  | { type: 'cancel'; sessionId: string }
  | { type: 'setMode'; sessionId: string; modeId: string }
  | { type: 'permission'; requestId: string; optionId: string; feedback?: string; scope?: RuleScope }
  | { type: 'review'; requestId: string }
  | { type: 'mentionQuery'; query: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'openLocation'; uri: string; line?: number }
  | { type: 'openLink'; href: string }
  | { type: 'runAction'; id: HostAction['id'] }
  | { type: 'listSessions' }
  | { type: 'mcpAction'; action: McpAction; name: string }
  | { type: 'mcpFormAnswer'; formId: string; action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean> }
  | { type: 'rewind'; sessionId: string; messageId: string; restore: RewindRestore };

/** What "Rewind to here" restores. */
export type RewindRestore = 'code' | 'conversation' | 'both';
export const REWIND_RESTORES: readonly RewindRestore[] = ['code', 'conversation', 'both'];

const HOST_TYPES: ReadonlySet<string> = new Set([
  'ready',
  'newSession',
  'activateSession',
  'closeSession',
  'prompt',
  'cancel',
  'setMode',
  'permission',
  'review',
  'mentionQuery',
  'copy',
  'insert',
  'openLocation',
  'openLink',
  'runAction',
  'listSessions',
  'mcpAction',
  'mcpFormAnswer',
  'rewind',
]);

/** Shape check of a message from the webview: an object with a known `type` and string fields where required. */
export function isToHost(value: unknown): value is ToHost {
  if (typeof value !== 'object' || value === null) return false;
  const msg = value as Record<string, unknown>;
  if (typeof msg.type !== 'string' || !HOST_TYPES.has(msg.type)) return false;
  const str = (k: string): boolean => typeof msg[k] === 'string';
  switch (msg.type) {
    case 'activateSession':
    case 'closeSession':
    case 'cancel':
      return str('sessionId');
    case 'prompt':
      return str('text') && Array.isArray(msg.mentions) && typeof msg.includeSelection === 'boolean';
    case 'setMode':
      return str('sessionId') && str('modeId');
    case 'permission':
      return (
        str('requestId') &&
        str('optionId') &&
        (msg.feedback === undefined || str('feedback')) &&
        (msg.scope === undefined || (RULE_SCOPES as readonly unknown[]).includes(msg.scope))
      );
    case 'review':
      return str('requestId');
    case 'mentionQuery':
      return str('query');
    case 'copy':
    case 'insert':
      return str('text');
    case 'openLocation':
      return str('uri');
    case 'openLink':
      return str('href');
    case 'runAction':
      return str('id');
    case 'rewind':
      return str('sessionId') && str('messageId') && (REWIND_RESTORES as readonly unknown[]).includes(msg.restore);
    case 'mcpAction':
      return str('name') && (['approve', 'reject', 'reconnect', 'login', 'logout', 'enable', 'disable'] as unknown[]).includes(msg.action);
    case 'mcpFormAnswer':
      return (
        str('formId') &&
        (msg.action === 'accept' || msg.action === 'decline' || msg.action === 'cancel') &&
        (msg.content === undefined || (typeof msg.content === 'object' && msg.content !== null && !Array.isArray(msg.content)))
      );
    default:
      return true;
  }
}

/** Blocks of a prompt as the host sends them to the server (re-exported for tests). */
export type PromptBlocks = ContentBlock[];

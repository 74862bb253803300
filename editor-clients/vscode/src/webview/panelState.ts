/**
 * The chat panel page's state: the host's chats as the shared reducer keeps them, the UI state
 * kept across reloads (drafts), the bridge to the host (`post`, `persist`) and the render
 * scheduler (one render per animation frame).
 */

import type { MentionCandidate, SelectionInfo, ServerStatus, ToHost } from '../shared/messages';
import type { McpServerInfo, RuleScope } from '../shared/protocol';
import type { SessionState } from '../shared/state';

interface VsCodeApi {
  postMessage(message: ToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

interface PersistedUi {
  drafts: Record<string, string>;
  includeSelection: boolean;
}

const vscode = acquireVsCodeApi();
export const NEW_DRAFT = '__new__';

export const state = {
  sessions: new Map<string, SessionState>(),
  order: [] as string[],
  activeId: undefined as string | undefined,
  server: { phase: 'starting' } as ServerStatus,
  history: [] as string[],
  selection: undefined as SelectionInfo | undefined,
  editedProposals: false,
  ui: { drafts: {}, includeSelection: true, ...((vscode.getState() as Partial<PersistedUi> | undefined) ?? {}) } as PersistedUi,
  expanded: new Map<string, boolean>(),
  /** The scope picked for the "always" answers of each open permission question. */
  scopes: new Map<string, RuleScope>(),
  /** Mentions picked from the popup for the draft being written. */
  mentions: [] as MentionCandidate[],
  historyIndex: -1,
  historyDraft: '',
  globalNotices: [] as { level: string; text: string }[],
  mcpServers: [] as McpServerInfo[],
  mcpOpen: false,
};

export function post(message: ToHost): void {
  vscode.postMessage(message);
}

export function persist(): void {
  vscode.setState(state.ui);
}

export const active = (): SessionState | undefined => (state.activeId ? state.sessions.get(state.activeId) : undefined);

// The page's render function, set once by main.ts (which imports every part of the page): the
// parts schedule renders without importing the page.
let renderAll: () => void = () => undefined;
let frame = 0;

/** Set the function that renders the whole page. */
export function setRenderer(render: () => void): void {
  renderAll = render;
}

/** Render the page at the next animation frame (once, however often it is asked for). */
export function scheduleRender(): void {
  if (frame !== 0) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    renderAll();
  });
}

/**
 * The status bar item: mode, running state and tokens of the active session; server problems;
 * waiting approvals. A click opens the chat panel.
 */

import * as vscode from 'vscode';
import type { ServerStatus } from './shared/messages';
import { formatTokens, type SessionState } from './shared/state';

export interface StatusView {
  text: string;
  tooltip: string;
  warning: boolean;
  error: boolean;
}

/** What the item shows for a server status, the active session and the number of open questions. */
export function describeStatus(server: ServerStatus, session: SessionState | undefined, pending: number): StatusView {
  if (server.phase === 'missing' || server.phase === 'incompatible' || server.phase === 'failed') {
    return { text: '$(error) lsp-agent', tooltip: server.message ?? 'The lsp-agent server is not running.', warning: false, error: true };
  }
  if (server.phase === 'starting' || server.phase === 'restarting') {
    return { text: '$(loading~spin) lsp-agent', tooltip: server.message ?? 'Starting lsp-agent…', warning: false, error: false };
  }
  if (pending > 0) {
    return {
      text: `$(bell-dot) lsp-agent: ${pending} approval${pending === 1 ? '' : 's'}`,
      tooltip: 'The agent is waiting for your answer. Click to open the chat.',
      warning: true,
      error: false,
    };
  }
  const mode = session ? (session.availableModes.find((m) => m.id === session.modeId)?.name ?? session.modeId) : undefined;
  const tokens = session ? session.tokens.input + session.tokens.output : 0;
  const parts = [session?.running ? '$(loading~spin) lsp-agent' : '$(hubot) lsp-agent'];
  if (mode) parts.push(mode);
  if (tokens > 0) parts.push(`${formatTokens(tokens)} tok`);
  const tooltip = [
    server.version ? `lsp-agent ${server.version}` : 'lsp-agent',
    session ? `Session: ${session.title}` : 'No chat yet',
    mode ? `Mode: ${mode}` : undefined,
    session?.running ? 'Working…' : undefined,
    session && tokens > 0 ? `Tokens: ${formatTokens(session.tokens.input)} in, ${formatTokens(session.tokens.output)} out` : undefined,
    session?.context ? `Context: ${formatTokens(session.context.used)} of ${formatTokens(session.context.size)}` : undefined,
    'Click to open the chat.',
  ]
    .filter((l): l is string => l !== undefined)
    .join('\n');
  return { text: parts.join(' · '), tooltip, warning: false, error: false };
}

export class AgentStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(command: string) {
    this.item = vscode.window.createStatusBarItem('lspAgent.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'lsp-agent';
    this.item.command = command;
    this.item.show();
  }

  update(server: ServerStatus, session: SessionState | undefined, pending: number): void {
    const view = describeStatus(server, session, pending);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.error
      ? new vscode.ThemeColor('statusBarItem.errorBackground')
      : view.warning
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

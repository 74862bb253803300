/**
 * The extension's settings (`lspAgent.*`, contributed in package.json and documented in the
 * README) and the `initializationOptions` built from them.
 */

import type * as vscode from 'vscode';
import type { ServerSettings } from './server/locate';

export type PermissionModeSetting = 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions' | 'dontAsk';
export type VerificationModeSetting = 'off' | 'report' | 'strict';
export type LogLevelSetting = 'error' | 'warning' | 'info' | 'debug';

export interface ExtensionSettings {
  server: ServerSettings;
  /** Model id for new sessions; empty = the server's default. */
  model: string;
  permissionMode: PermissionModeSetting;
  /**
   * The user set `lspAgent.permissionMode` themselves. When not, new sessions name no mode, so
   * the server's settings decide — and a repository's `bypassPermissions` default then needs
   * the user's confirmation (docs/security.md).
   */
  permissionModeChosen?: boolean;
  verificationMode: VerificationModeSetting;
  /** Run hooks from the workspace's settings files (only ever in a trusted workspace). */
  trustedHooks: boolean;
  diagnosticsBridge: boolean;
  /** Quiet time before bridged diagnostics are sent, in ms. */
  diagnosticsDebounceMs: number;
  /** Lowest level of server log records shown in the output channel. */
  logLevel: LogLevelSetting;
  /**
   * The user's own MCP servers (`lspAgent.mcpServers`, shaped like `.mcp.json`'s
   * `mcpServers`); user settings only: a workspace's .vscode/settings.json cannot add servers.
   */
  mcpServers?: Record<string, unknown>;
}

const PERMISSION_MODES: readonly string[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'];
const VERIFICATION_MODES: readonly string[] = ['off', 'report', 'strict'];
const LOG_LEVELS: readonly string[] = ['error', 'warning', 'info', 'debug'];

function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'string') out[k] = v;
    }
  }
  return out;
}

/** Read the settings, replacing values of the wrong type by their defaults. */
export function readSettings(config: Pick<vscode.WorkspaceConfiguration, 'get'> & Partial<Pick<vscode.WorkspaceConfiguration, 'inspect'>>): ExtensionSettings {
  const str = (key: string, fallback = ''): string => {
    const v = config.get<unknown>(key);
    return typeof v === 'string' ? v : fallback;
  };
  // The mode is the user's own setting only: a value from the workspace's .vscode/settings.json
  // comes from the repository, which must not switch off permission prompts by itself.
  const inspected = config.inspect?.<unknown>('permissionMode');
  const userMode = inspected ? inspected.globalValue : config.get<unknown>('permissionMode');
  const mode = typeof userMode === 'string' ? userMode : 'default';
  const verification = str('verificationMode', 'report');
  const args = config.get<unknown>('server.args');
  const debounce = config.get<unknown>('diagnostics.debounceMs');
  const logLevel = str('server.logLevel', 'warning');
  // Servers run commands: only the user's own settings may name them, never the repository's.
  const mcp = config.inspect?.<unknown>('mcpServers')?.globalValue;
  return {
    server: {
      path: str('server.path'),
      pythonInterpreter: str('server.pythonInterpreter'),
      args: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [],
      env: stringRecord(config.get<unknown>('server.env')),
    },
    model: str('model'),
    permissionMode: (PERMISSION_MODES.includes(mode) ? mode : 'default') as PermissionModeSetting,
    permissionModeChosen: inspected !== undefined && inspected.globalValue !== undefined,
    verificationMode: (VERIFICATION_MODES.includes(verification) ? verification : 'report') as VerificationModeSetting,
    trustedHooks: config.get<unknown>('hooks.trusted') === true,
    diagnosticsBridge: config.get<unknown>('diagnostics.bridge') !== false,
    diagnosticsDebounceMs: typeof debounce === 'number' && debounce >= 0 ? debounce : 400,
    logLevel: (LOG_LEVELS.includes(logLevel) ? logLevel : 'warning') as LogLevelSetting,
    ...(typeof mcp === 'object' && mcp !== null && !Array.isArray(mcp) ? { mcpServers: mcp as Record<string, unknown> } : {}),
  };
}

/**
 * `initializationOptions.lspAgent` (docs/protocol.md, "initialize"). The server rejects unknown
 * keys, so settings it does not know yet (`verificationMode`, `trustedHooks`) are sent only when
 * the user changed them from their defaults.
 */
export interface AgentInitOptions {
  trusted: boolean;
  permissionMode: PermissionModeSetting;
  model?: string;
  logLevel: LogLevelSetting;
  verificationMode?: VerificationModeSetting;
  trustedHooks?: boolean;
  mcpServers?: Record<string, unknown>;
  clientCapabilities: { saveDocuments: true; reloadDocuments: true; mcpElicitation: true };
}

export function initializationOptions(settings: ExtensionSettings, trusted: boolean): { lspAgent: AgentInitOptions } {
  // Hooks are code from the repository: never run them in an untrusted workspace.
  const trustedHooks = trusted && settings.trustedHooks;
  return {
    lspAgent: {
      trusted,
      permissionMode: settings.permissionMode,
      ...(settings.model.trim().length > 0 ? { model: settings.model.trim() } : {}),
      logLevel: settings.logLevel,
      ...(settings.verificationMode !== 'report' ? { verificationMode: settings.verificationMode } : {}),
      ...(trustedHooks ? { trustedHooks } : {}),
      ...(settings.mcpServers && Object.keys(settings.mcpServers).length > 0 ? { mcpServers: settings.mcpServers } : {}),
      clientCapabilities: { saveDocuments: true, reloadDocuments: true, mcpElicitation: true },
    },
  };
}

/**
 * Find the command that runs `lsp-agent serve`, or explain why there is none.
 *
 * Order: the `lspAgent.server.path` setting; else `lspAgent.server.pythonInterpreter` running
 * `-m lsp_agent serve`; else a `.venv` of a workspace folder; else `lsp-agent` on PATH.
 * Pure apart from the injected file checks, so tests run it against a scratch directory.
 */

import * as path from 'node:path';

export interface ServerSettings {
  /** Path of the `lsp-agent` executable; `~` and `${workspaceFolder}` are expanded. */
  path: string;
  /** A Python interpreter that has lsp-agent installed (runs `python -m lsp_agent serve`). */
  pythonInterpreter: string;
  /** Extra arguments after `serve`. */
  args: string[];
  /** Extra environment variables for the server process. */
  env: Record<string, string>;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** How it was found, for the log ("setting lspAgent.server.path", "PATH", ...). */
  source: string;
}

export type LocateResult = { ok: true; server: ServerCommand } | { ok: false; message: string };

export interface LocateEnv {
  /** The PATH variable's value. */
  pathVar: string;
  platform: NodeJS.Platform;
  homeDir: string;
  workspaceFolders: string[];
  isExecutable(file: string): boolean;
}

export const INSTALL_HINT =
  'Install it from a clone of lsp-agent with "pipx install ./lsp-agent" (or "uv tool install ./lsp-agent"), or point the setting "lspAgent.server.path" at the executable.';

function expand(value: string, env: LocateEnv): string {
  let out = value.trim();
  const folder = env.workspaceFolders[0];
  if (folder !== undefined) out = out.replace(/\$\{workspaceFolder\}/g, folder);
  if (out === '~' || out.startsWith('~/')) out = path.join(env.homeDir, out.slice(1));
  if (!path.isAbsolute(out) && folder !== undefined && out.includes(path.sep)) out = path.resolve(folder, out);
  return out;
}

function executableNames(base: string, platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? [`${base}.exe`, `${base}.cmd`, base] : [base];
}

/** Search `pathVar` for `name` the way a shell would. */
export function whichSync(name: string, env: LocateEnv): string | undefined {
  const sep = env.platform === 'win32' ? ';' : ':';
  for (const dir of env.pathVar.split(sep)) {
    if (dir.length === 0) continue;
    for (const candidate of executableNames(name, env.platform)) {
      const file = path.join(dir, candidate);
      if (env.isExecutable(file)) return file;
    }
  }
  return undefined;
}

export function locateServer(settings: ServerSettings, env: LocateEnv): LocateResult {
  const serveArgs = ['serve', ...settings.args];
  if (settings.path.trim().length > 0) {
    const resolved = expand(settings.path, env);
    const found = path.isAbsolute(resolved) ? (env.isExecutable(resolved) ? resolved : undefined) : whichSync(resolved, env);
    if (found === undefined) {
      return {
        ok: false,
        message: `The setting "lspAgent.server.path" is "${settings.path}", but no executable file is there. ${INSTALL_HINT}`,
      };
    }
    return { ok: true, server: { command: found, args: serveArgs, source: 'setting lspAgent.server.path' } };
  }
  if (settings.pythonInterpreter.trim().length > 0) {
    const resolved = expand(settings.pythonInterpreter, env);
    const found = path.isAbsolute(resolved) ? (env.isExecutable(resolved) ? resolved : undefined) : whichSync(resolved, env);
    if (found === undefined) {
      return {
        ok: false,
        message: `The setting "lspAgent.server.pythonInterpreter" is "${settings.pythonInterpreter}", but no executable file is there.`,
      };
    }
    return {
      ok: true,
      server: { command: found, args: ['-m', 'lsp_agent', ...serveArgs], source: 'setting lspAgent.server.pythonInterpreter' },
    };
  }
  for (const folder of env.workspaceFolders) {
    const bin = env.platform === 'win32' ? path.join(folder, '.venv', 'Scripts') : path.join(folder, '.venv', 'bin');
    for (const candidate of executableNames('lsp-agent', env.platform)) {
      const file = path.join(bin, candidate);
      if (env.isExecutable(file)) {
        return { ok: true, server: { command: file, args: serveArgs, source: `the virtual environment of ${folder}` } };
      }
    }
  }
  const onPath = whichSync('lsp-agent', env);
  if (onPath !== undefined) {
    return { ok: true, server: { command: onPath, args: serveArgs, source: 'PATH' } };
  }
  return { ok: false, message: `The lsp-agent server was not found on PATH. ${INSTALL_HINT}` };
}

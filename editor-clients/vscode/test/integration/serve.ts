/**
 * The end-to-end setup of the integration suites: the project's scripted Messages-API server on
 * 127.0.0.1, and the extension activated against the fake `vscode` API with its real
 * vscode-languageclient node client starting the real `lsp-agent serve` on a temporary project
 * (`cart.py`). `launch()` starts both; `stopLaunched()` (after each test) stops them.
 *
 * Needs Python with lsp-agent installed: `LSP_AGENT_PYTHON` (default: the repository's
 * `.venv/bin/python`, else `python3`).
 */

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { activate, type ExtensionApi } from '../../src/extension';
import type { ToWebview } from '../../src/shared/messages';
import { fake, makeContext, makeWebviewView, Uri } from '../fake-vscode/index';

const EXTENSION_ROOT = resolve(__dirname, '..', '..', '..');
const REPO_ROOT = resolve(EXTENSION_ROOT, '..', '..');

function python(): string {
  if (process.env.LSP_AGENT_PYTHON) return process.env.LSP_AGENT_PYTHON;
  const venv = join(REPO_ROOT, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

interface Scripted {
  port: number;
  proc: ChildProcess;
  stderr(): string;
  /** Stop it; resolves with its exit code (0: every step consumed, no bad request). */
  stop(): Promise<number | null>;
}

async function startScripted(scenario: unknown, dir: string): Promise<Scripted> {
  const scenarioFile = join(dir, 'scenario.json');
  const portFile = join(dir, 'port');
  writeFileSync(scenarioFile, JSON.stringify(scenario));
  const proc = spawn(python(), ['-m', 'lsp_agent.testing', '--scenario', scenarioFile, '--port', '0', '--port-file', portFile, '--var', `cwd=${dir}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  for (let i = 0; i < 300 && !existsSync(portFile); i += 1) {
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!existsSync(portFile)) {
    proc.kill();
    throw new Error(`the scripted model server did not start (${python()}): ${err}`);
  }
  return {
    port: Number(readFileSync(portFile, 'utf8').trim()),
    proc,
    stderr: () => err,
    stop: async () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

export const CART = `def total(items):
    result = 0
    for item in items:
        result += item.price
    return result


def describe(items):
    return f"{len(items)} items"
`;

export interface Setup {
  dir: string;
  scripted: Scripted;
  api: ExtensionApi;
  page: ReturnType<typeof makeWebviewView>;
  context: { subscriptions: { dispose(): unknown }[] };
}

let setup: Setup | undefined;

export async function launch(steps: unknown[], files: Record<string, string> = {}, opts: { trusted?: boolean } = {}): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'lsp-agent-vscode-'));
  writeFileSync(join(dir, 'cart.py'), CART);
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), body);
  }
  const scripted = await startScripted({ name: 'vscode-integration', steps }, dir);
  fake.reset();
  fake.isTrusted = opts.trusted ?? true;
  fake.workspaceFolders = [{ uri: Uri.file(dir), name: 'shop', index: 0 }];
  fake.setConfiguration({
    'lspAgent.server.pythonInterpreter': python(),
    // The session store goes beside this test's folder.
    'lspAgent.server.env': { ANTHROPIC_BASE_URL: `http://127.0.0.1:${scripted.port}`, ANTHROPIC_API_KEY: 'dummy', LSP_AGENT_DATA_DIR: `${dir}.data` },
    'lspAgent.server.logLevel': 'info',
  });
  fake.openDocument(join(dir, 'cart.py'));
  const context = makeContext(EXTENSION_ROOT);
  const api = activate(context);
  const page = makeWebviewView();
  fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
  page.receive({ type: 'ready' });
  setup = { dir, scripted, api, page, context };
  await page.waitFor((m: ToWebview) => m.type === 'snapshot', 'snapshot');
  for (let i = 0; i < 600 && api.client.status.phase !== 'running'; i += 1) {
    if (api.client.status.phase === 'missing' || api.client.status.phase === 'incompatible' || api.client.status.phase === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(api.client.status.phase, 'running', `server status: ${JSON.stringify(api.client.status)}\n${fake.outputLines.join('\n')}`);
  return setup;
}

/** Stop what the last `launch()` started and remove its folders (after each test). */
export async function stopLaunched(): Promise<void> {
  if (!setup) return;
  const { api, context, dir, scripted } = setup;
  setup = undefined;
  await api.client.stop();
  for (const d of context.subscriptions.reverse()) d.dispose();
  await scripted.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}.data`, { recursive: true, force: true });
}

/** Forget the last launch (before each test). */
export function resetLaunched(): void {
  setup = undefined;
}

export function text(t: string) {
  return { type: 'text', text: t };
}

export function toolUse(id: string, name: string, input: Record<string, unknown>) {
  return { type: 'tool_use', id, name, input };
}

/** The arguments of the first `executeCommand(command, …)` call (waits up to 5 s). */
export async function waitForCall(command: string): Promise<unknown[]> {
  for (let i = 0; i < 200; i += 1) {
    const call = fake.callsOf('executeCommand').find((args) => args[0] === command);
    if (call) return call;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${command} was never executed`);
}

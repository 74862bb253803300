/**
 * `lsp-agent serve --offline` (setting `lspAgent.server.args: ["--offline"]`) with the real
 * extension client and the real server, no API key: the bundled trial model answers a question
 * about the open file, proposes a two-hunk edit that lands in the buffer, and answers a
 * rejected command politely.
 */

import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
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

const CALC = [
  '"""Tiny calculator helpers."""',
  '',
  '',
  'def add(a, b):',
  '    return a + b',
  '',
  '',
  'def sub(a, b):',
  '    return a - b',
  '',
  '',
  'def mul(a, b):',
  '    return a * b',
  '',
].join('\n');

describe('serve --offline: the trial model through the extension', () => {
  let dir = '';
  let api: ExtensionApi;
  let page: ReturnType<typeof makeWebviewView>;
  let context: ReturnType<typeof makeContext>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lsp-agent-offline-'));
    writeFileSync(join(dir, 'calc.py'), CALC);
    fake.reset();
    fake.workspaceFolders = [{ uri: Uri.file(dir), name: 'calc', index: 0 }];
    fake.setConfiguration({
      'lspAgent.server.pythonInterpreter': python(),
      'lspAgent.server.args': ['--offline'],
      // No usable key or endpoint: the trial model must not need them.
      'lspAgent.server.env': { ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
      'lspAgent.server.logLevel': 'info',
    });
    fake.openDocument(join(dir, 'calc.py'));
    context = makeContext(EXTENSION_ROOT);
    api = activate(context);
    page = makeWebviewView();
    fake.webviewProviders.get('lspAgent.chat').resolveWebviewView(page.view);
    page.receive({ type: 'ready' });
    await page.waitFor((m: ToWebview) => m.type === 'snapshot', 'snapshot');
    for (let i = 0; i < 600 && api.client.status.phase !== 'running'; i += 1) {
      if (['missing', 'incompatible', 'failed'].includes(api.client.status.phase)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(api.client.status.phase, 'running', `server status: ${JSON.stringify(api.client.status)}\n${fake.outputLines.join('\n')}`);
  });

  after(async () => {
    if (process.env.LSP_AGENT_RECORD_OFFLINE) {
      // Refresh test/fixtures/recorded-offline.json, which the webview test replays in Chromium.
      const fileUrl = Uri.file(dir).toString();
      const scrubbed = JSON.stringify(page.posted).split(fileUrl).join('file:///home/dev/calc').split(dir).join('/home/dev/calc');
      writeFileSync(process.env.LSP_AGENT_RECORD_OFFLINE, `${JSON.stringify(JSON.parse(scrubbed), null, 1)}\n`);
    }
    await api.client.stop();
    for (const d of context.subscriptions.reverse()) d.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  function agentText(): string {
    const session = api.controller.active;
    return (session?.items ?? []).filter((i) => i.kind === 'agent').map((i) => (i as { text: string }).text).join('\n');
  }

  async function turn(prompt: string, answer?: (request: { requestId: string; request: { toolCall: { content: { type: string; newText?: string; oldText?: string }[] }; options: { kind: string; optionId: string }[] } }) => string): Promise<void> {
    const before = page.posted.length;
    page.receive({ type: 'prompt', text: prompt, mentions: [], includeSelection: false });
    if (answer) {
      const asked = await page.waitFor((m: ToWebview) => m.type === 'permissionRequested' && page.posted.indexOf(m) >= before, 'permissionRequested');
      const kind = answer(asked);
      const option = asked.request.options.find((o: { kind: string }) => o.kind === kind);
      assert.ok(option, `option ${kind}`);
      page.receive({ type: 'permission', requestId: asked.requestId, optionId: option.optionId });
    }
    const ended = await page.waitFor((m: ToWebview) => m.type === 'turnEnded' && page.posted.indexOf(m) >= before, 'turnEnded');
    assert.equal(ended.result.stopReason, 'end_turn', JSON.stringify(ended.result));
  }

  it('answers a question about the open file', async () => {
    await turn('What does @calc.py do?');
    assert.match(agentText(), /`calc\.py` has 13 lines\. It defines `add`, `sub`, `mul`\./);
    assert.match(agentText(), /offline trial model/);
  });

  it('proposes a two-hunk edit that lands in the buffer', async () => {
    let proposed = '';
    await turn('edit @calc.py', (asked) => {
      const diff = asked.request.toolCall.content.find((c) => c.type === 'diff');
      proposed = diff?.newText ?? '';
      return 'allow_once';
    });
    const doc = fake.documents.find((d) => d.uri.fsPath === join(dir, 'calc.py'));
    assert.equal(doc?.getText(), proposed);
    const lines = proposed.split('\n');
    assert.equal(lines[0], "# Reviewed with lsp-agent's offline trial model.");
    assert.equal(lines[11], '# (The trial model looked at the lines above.)');
    assert.match(agentText(), /Done: the edit of `calc\.py` was applied/);
  });

  it('answers a rejected command politely and does not run it', async () => {
    await turn('run `touch rejected.txt`', () => 'reject_once');
    assert.match(agentText(), /OK, I won't\. The Bash call did not run and nothing was changed\./);
    assert.equal(existsSync(join(dir, 'rejected.txt')), false);
  });
});

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RestartPolicy } from '../../src/server/backoff';
import { locateServer, type LocateEnv, type ServerSettings } from '../../src/server/locate';
import { checkHandshake, compareVersions } from '../../src/server/version';

describe('compareVersions', () => {
  it('orders releases, pre-releases and missing parts', () => {
    assert.ok(compareVersions('0.10.0', '0.9.9') > 0);
    assert.equal(compareVersions('1.0', '1.0.0'), 0);
    assert.ok(compareVersions('1.0.0rc1', '1.0.0') < 0);
    assert.ok(compareVersions('0.1.0.dev3', '0.1.0') < 0);
    assert.ok(compareVersions('1.0.0-beta.2', '1.0.0-beta.10') !== 0);
    assert.equal(compareVersions('1.2.3+local', '1.2.3'), 0);
    assert.ok(compareVersions('v2.0.0', '1.9.9') > 0);
  });
});

describe('checkHandshake', () => {
  it('accepts a compatible lsp-agent', () => {
    const r = checkHandshake({ capabilities: { experimental: { lspAgent: { version: '0.1.0', protocolVersion: 1 } } }, serverInfo: { name: 'lsp-agent', version: '0.1.0' } });
    // An older server that does not mention loadSession cannot load sessions.
    assert.deepEqual(r, { ok: true, agent: { version: '0.1.0', protocolVersion: 1, loadSession: false }, serverName: 'lsp-agent' });
    const loads = checkHandshake({ capabilities: { experimental: { lspAgent: { version: '0.2.0', protocolVersion: 1, loadSession: true } } } });
    assert.equal(loads.ok && loads.agent.loadSession, true);
  });

  it('names the problem for other servers, old servers and other protocols', () => {
    const notAgent = checkHandshake({ capabilities: {}, serverInfo: { name: 'pyright' } });
    assert.equal(notAgent.ok, false);
    assert.match(!notAgent.ok ? notAgent.message : '', /"pyright" did not announce the lspAgent protocol/);
    const old = checkHandshake({ capabilities: { experimental: { lspAgent: { version: '0.0.9', protocolVersion: 1 } } } }, '0.1.0');
    assert.match(!old.ok ? old.message : '', /lsp-agent 0\.0\.9 is too old; this extension needs 0\.1\.0 or newer/);
    const newer = checkHandshake({ capabilities: { experimental: { lspAgent: { version: '3.0.0', protocolVersion: 2 } } } });
    assert.match(!newer.ok ? newer.message : '', /speaks protocol version 2; this extension speaks 1\. Update the extension\./);
    assert.equal(checkHandshake(undefined).ok, false);
  });
});

describe('RestartPolicy', () => {
  it('backs off exponentially, caps, gives up, and forgets after a stable run', () => {
    const p = new RestartPolicy({ baseDelayMs: 1000, maxDelayMs: 5000, maxAttempts: 4, stableMs: 60_000 });
    p.started(0);
    assert.deepEqual([p.exited(10), p.exited(20), p.exited(30), p.exited(40)], [1000, 2000, 4000, 5000]);
    assert.equal(p.exited(50), undefined);
    p.reset();
    p.started(100);
    assert.equal(p.exited(200), 1000);
    p.started(1000);
    assert.equal(p.exited(2000), 2000);
    p.started(3000);
    assert.equal(p.exited(3000 + 60_000), 1000, 'a run of stableMs resets the count');
  });
});

describe('locateServer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'locate-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const exe = (p: string): string => {
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, '#!/bin/sh\n');
    chmodSync(p, 0o755);
    return p;
  };
  const bin = join(dir, 'bin');
  const onPath = exe(join(bin, 'lsp-agent'));
  const python = exe(join(dir, 'py', 'python3'));
  const folder = join(dir, 'project');
  const venv = exe(join(folder, '.venv', 'bin', 'lsp-agent'));
  const env = (over: Partial<LocateEnv> = {}): LocateEnv => ({
    pathVar: bin,
    platform: 'linux',
    homeDir: homedir(),
    workspaceFolders: [],
    isExecutable: (f) => [onPath, python, venv].includes(f),
    ...over,
  });
  const settings = (over: Partial<ServerSettings> = {}): ServerSettings => ({ path: '', pythonInterpreter: '', args: [], env: {}, ...over });

  it('uses the configured path, with args after serve', () => {
    const r = locateServer(settings({ path: onPath, args: ['--log-level', 'DEBUG'] }), env());
    assert.deepEqual(r, { ok: true, server: { command: onPath, args: ['serve', '--log-level', 'DEBUG'], source: 'setting lspAgent.server.path' } });
  });

  it('expands ${workspaceFolder} and explains a bad path', () => {
    const r = locateServer(settings({ path: '${workspaceFolder}/.venv/bin/lsp-agent' }), env({ workspaceFolders: [folder] }));
    assert.equal(r.ok && r.server.command, venv);
    const bad = locateServer(settings({ path: '/nowhere/lsp-agent' }), env());
    assert.equal(bad.ok, false);
    assert.match(!bad.ok ? bad.message : '', /"lspAgent\.server\.path" is "\/nowhere\/lsp-agent", but no executable file is there/);
  });

  it('runs a configured interpreter with -m lsp_agent serve', () => {
    const r = locateServer(settings({ pythonInterpreter: python }), env());
    assert.deepEqual(r.ok && r.server.args, ['-m', 'lsp_agent', 'serve']);
  });

  it('prefers a workspace virtualenv, then PATH, then explains how to install', () => {
    assert.equal((locateServer(settings(), env({ workspaceFolders: [folder] })) as { server: { command: string } }).server.command, venv);
    assert.equal((locateServer(settings(), env()) as { server: { command: string } }).server.command, onPath);
    const missing = locateServer(settings(), env({ pathVar: '/empty' }));
    assert.match(!missing.ok ? missing.message : '', /not found on PATH\. Install it from a clone of lsp-agent with "pipx install \.\/lsp-agent"/);
  });
});

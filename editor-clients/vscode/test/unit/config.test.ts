import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { initializationOptions, readSettings } from '../../src/config';

/** A configuration whose `permissionMode` has the given user and workspace values. */
function config(user: unknown, workspace: unknown) {
  const effective = workspace ?? user;
  return {
    get<T>(key: string): T | undefined {
      return (key === 'permissionMode' ? effective : undefined) as T | undefined;
    },
    inspect<T>(key: string) {
      return key === 'permissionMode' ? { key, globalValue: user as T, workspaceValue: workspace as T } : undefined;
    },
  };
}

describe('permission mode setting', () => {
  it("a workspace's .vscode/settings.json cannot choose the mode; the user's setting can", () => {
    const fromRepo = readSettings(config(undefined, 'bypassPermissions'));
    assert.equal(fromRepo.permissionMode, 'default');
    assert.equal(fromRepo.permissionModeChosen, false);
    const fromUser = readSettings(config('acceptEdits', 'bypassPermissions'));
    assert.equal(fromUser.permissionMode, 'acceptEdits');
    assert.equal(fromUser.permissionModeChosen, true);
  });

  it('the manifest declares the setting user-level only (VS Code then ignores workspace values)', () => {
    const manifest = JSON.parse(readFileSync(join(resolve(__dirname, '..', '..', '..'), 'package.json'), 'utf8'));
    assert.equal(manifest.contributes.configuration.properties['lspAgent.permissionMode'].scope, 'application');
  });
});

describe('MCP servers setting', () => {
  /** A configuration whose `mcpServers` has the given user and workspace values. */
  function servers(user: unknown, workspace: unknown) {
    return {
      get<T>(key: string): T | undefined {
        return (key === 'mcpServers' ? (workspace ?? user) : undefined) as T | undefined;
      },
      inspect<T>(key: string) {
        return key === 'mcpServers' ? { key, globalValue: user as T, workspaceValue: workspace as T } : undefined;
      },
    };
  }

  it("only the user's settings name MCP servers; a workspace's cannot", () => {
    const mine = { github: { type: 'http', url: 'https://example.com/mcp' } };
    assert.deepEqual(readSettings(servers(mine, { evil: { command: 'sh' } })).mcpServers, mine);
    assert.equal(readSettings(servers(undefined, { evil: { command: 'sh' } })).mcpServers, undefined);
    assert.equal(readSettings(servers(['not', 'an', 'object'], undefined)).mcpServers, undefined);
    const options = initializationOptions(readSettings(servers(mine, undefined)), false);
    assert.deepEqual(options.lspAgent.mcpServers, mine);
    assert.equal('mcpServers' in initializationOptions(readSettings(servers({}, undefined)), true).lspAgent, false);
  });

  it('the manifest declares mcpServers user-level only', () => {
    const manifest = JSON.parse(readFileSync(join(resolve(__dirname, '..', '..', '..'), 'package.json'), 'utf8'));
    assert.equal(manifest.contributes.configuration.properties['lspAgent.mcpServers'].scope, 'application');
  });
});

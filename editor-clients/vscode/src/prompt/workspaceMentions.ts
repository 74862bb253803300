/**
 * Mentions in the workspace: the `MentionIo` that reads open buffers and workspace files, and
 * the candidates of the mention picker (workspace files, ranked; `server:` resources of MCP
 * servers, matched by the server).
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage, type AgentClient } from '../server/agentClient';
import type { MentionCandidate } from '../shared/messages';
import { rankPaths, type MentionIo } from './mentions';

const FILE_INDEX_TTL_MS = 10_000;
const FILE_INDEX_LIMIT = 20_000;
const MENTION_EXCLUDE = '**/{node_modules,.git,.venv,venv,__pycache__,dist,out,build,.mypy_cache,.ruff_cache}/**';

/** Buffers of open documents, files of the workspace, paths resolved against its folders. */
export function workspaceMentionIo(): MentionIo {
  return {
    openDocumentText: (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.getText(),
    readFile: async (uri) => vscode.workspace.fs.readFile(vscode.Uri.parse(uri)),
    resolvePath: async (p) => {
      const candidates: vscode.Uri[] = path.isAbsolute(p)
        ? [vscode.Uri.file(p)]
        : (vscode.workspace.workspaceFolders ?? []).map((f) => vscode.Uri.joinPath(f.uri, p));
      for (const uri of candidates) {
        try {
          const stat = await vscode.workspace.fs.stat(uri);
          if (stat.type === vscode.FileType.File) return uri.toString();
        } catch {
          // Not in this folder.
        }
      }
      return undefined;
    },
  };
}

/** The mention picker's candidates; the workspace's file list is cached for a few seconds. */
export class WorkspaceMentions {
  private fileIndex: { at: number; paths: Map<string, string> } | undefined;

  constructor(private readonly deps: { client: AgentClient; log: vscode.LogOutputChannel }) {}

  private async files(): Promise<Map<string, string>> {
    const now = Date.now();
    if (this.fileIndex && now - this.fileIndex.at < FILE_INDEX_TTL_MS) return this.fileIndex.paths;
    const uris = await vscode.workspace.findFiles('**/*', MENTION_EXCLUDE, FILE_INDEX_LIMIT);
    const paths = new Map<string, string>();
    for (const uri of uris) paths.set(vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1), uri.toString());
    this.fileIndex = { at: now, paths };
    return paths;
  }

  /** Candidates for what follows `@`: files ranked by `rankPaths`, or an MCP server's resources for `server:…`. */
  async candidates(query: string): Promise<MentionCandidate[]> {
    // `@server:` completes the resources of an MCP server (the server matches them).
    if (query.includes(':')) return this.resourceCandidates(query);
    const files = await this.files();
    return rankPaths(query, [...files.keys()]).map((label) => {
      const dir = path.posix.dirname(label);
      return { uri: files.get(label) as string, label, ...(dir !== '.' ? { description: dir } : {}) };
    });
  }

  private async resourceCandidates(query: string): Promise<MentionCandidate[]> {
    if (this.deps.client.status.phase !== 'running') return [];
    try {
      const { items } = await this.deps.client.mcpResources(query);
      return items.map((item) => ({ uri: item.uri, label: item.label, description: item.description ?? item.name, kind: 'mcp' }));
    } catch (error) {
      this.deps.log.warn(`MCP resource completion failed: ${errorMessage(error)}`);
      return [];
    }
  }
}

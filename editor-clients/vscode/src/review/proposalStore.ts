/**
 * Virtual documents for reviewing a proposed edit in VS Code's diff editor (no temp files).
 *
 * - `lsp-agent-original:` — the text the edit was computed from; read-only, served by a
 *   `TextDocumentContentProvider`.
 * - `lsp-agent-proposal:` — the proposed text; an in-memory `FileSystemProvider`, because the
 *   user may edit the proposal before accepting it and a content provider's documents are
 *   read-only. Saving (Ctrl+S) keeps the text here; nothing touches the disk.
 *
 * URIs: `<scheme>:/<requestId>/<index>/<original path>`, so the tab shows the file name and the
 * language is detected from it.
 */

import * as vscode from 'vscode';

export const ORIGINAL_SCHEME = 'lsp-agent-original';
export const PROPOSAL_SCHEME = 'lsp-agent-proposal';

export interface ProposalEntry {
  requestId: string;
  index: number;
  /** URI of the real file (as the server named it). */
  targetUri: string;
  targetPath: string;
  original: string;
  /** The server's proposed text, before any change by the user. */
  proposed: string;
  originalUri: vscode.Uri;
  proposalUri: vscode.Uri;
}

function key(uri: vscode.Uri): string {
  return uri.path;
}

function virtualPath(requestId: string, index: number, targetPath: string): string {
  const normalized = targetPath.replace(/\\/g, '/');
  return `/${requestId}/${index}${normalized.startsWith('/') ? '' : '/'}${normalized}`;
}

export class ProposalStore implements vscode.FileSystemProvider, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly entries = new Map<string, ProposalEntry>();
  private readonly texts = new Map<string, { data: Uint8Array; mtime: number }>();
  private readonly fileEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  private readonly contentEmitter = new vscode.EventEmitter<vscode.Uri>();
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  readonly onDidChangeFile = this.fileEmitter.event;
  readonly onDidChange = this.contentEmitter.event;

  /** Register both providers with VS Code. */
  register(): vscode.Disposable {
    return vscode.Disposable.from(
      vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, this),
    );
  }

  add(init: { requestId: string; index: number; targetUri: string; targetPath: string; original: string; proposed: string }): ProposalEntry {
    const path = virtualPath(init.requestId, init.index, init.targetPath);
    const entry: ProposalEntry = {
      ...init,
      originalUri: vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path }),
      proposalUri: vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path }),
    };
    this.entries.set(path, entry);
    this.texts.set(path, { data: this.encoder.encode(init.proposed), mtime: Date.now() });
    return entry;
  }

  /** The entry behind an original or proposal URI. */
  entry(uri: vscode.Uri): ProposalEntry | undefined {
    return this.entries.get(key(uri));
  }

  entriesOf(requestId: string): ProposalEntry[] {
    return [...this.entries.values()].filter((e) => e.requestId === requestId).sort((a, b) => a.index - b.index);
  }

  /** The proposal's current text: the open editor's buffer if any (it may be unsaved), else the store. */
  currentText(entry: ProposalEntry): string {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === entry.proposalUri.toString());
    if (doc) return doc.getText();
    const stored = this.texts.get(key(entry.proposalUri));
    return stored ? this.decoder.decode(stored.data) : entry.proposed;
  }

  removeRequest(requestId: string): void {
    for (const entry of this.entriesOf(requestId)) {
      this.entries.delete(key(entry.proposalUri));
      this.texts.delete(key(entry.proposalUri));
    }
  }

  // TextDocumentContentProvider (originals)
  provideTextDocumentContent(uri: vscode.Uri): string {
    const entry = this.entries.get(key(uri));
    return entry ? entry.original : '';
  }

  // FileSystemProvider (proposals)
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const text = this.texts.get(key(uri));
    if (!text) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: text.mtime, mtime: text.mtime, size: text.data.byteLength };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const text = this.texts.get(key(uri));
    if (!text) throw vscode.FileSystemError.FileNotFound(uri);
    return text.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.entries.has(key(uri))) throw vscode.FileSystemError.NoPermissions(uri);
    this.texts.set(key(uri), { data: content, mtime: Date.now() });
    this.fileEmitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  dispose(): void {
    this.fileEmitter.dispose();
    this.contentEmitter.dispose();
  }
}

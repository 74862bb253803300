/**
 * The diagnostics bridge: other extensions' diagnostics (with the document version they belong
 * to) go to the server as `lspAgent/diagnostics/didChange`, so the agent can check its edits
 * against every checker the editor runs.
 *
 * Changes are collected per URI and sent after `debounceMs` of quiet; an unchanged payload for
 * the same URI and version is not sent twice. The server's own diagnostics (source
 * `lsp-agent`) are left out. Only `file:` and `untitled:` documents are bridged.
 */

import type * as vscode from 'vscode';
import type { DiagnosticsDidChangeParams, WireDiagnostic } from '../shared/protocol';

export const OWN_SOURCE = 'lsp-agent';

export interface DiagnosticLike {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  message: string;
  /** vscode.DiagnosticSeverity: Error 0, Warning 1, Information 2, Hint 3. */
  severity: number;
  source?: string;
  code?: string | number | { value: string | number; target?: unknown };
  tags?: readonly number[];
}

/** VS Code diagnostic → LSP diagnostic (severity shifts by one: LSP Error is 1). */
export function toWireDiagnostic(d: DiagnosticLike): WireDiagnostic {
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  const severity = Math.min(4, Math.max(1, d.severity + 1)) as 1 | 2 | 3 | 4;
  return {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity,
    message: d.message,
    ...(code !== undefined ? { code } : {}),
    ...(d.source ? { source: d.source } : {}),
    ...(d.tags && d.tags.length > 0 ? { tags: [...d.tags] } : {}),
  };
}

export interface BridgeDeps {
  onDidChangeDiagnostics(listener: (uris: readonly { toString(): string; scheme: string }[]) => void): vscode.Disposable;
  getDiagnostics(uri: string): readonly DiagnosticLike[];
  /** Version of the open document, or `null` when it is not open. */
  documentVersion(uri: string): number | null;
  send(params: DiagnosticsDidChangeParams): Promise<void>;
  debounceMs(): number;
  enabled(): boolean;
  setTimer(fn: () => void, ms: number): { dispose(): void };
}

export class DiagnosticsBridge implements vscode.Disposable {
  private readonly dirty = new Set<string>();
  private readonly lastSent = new Map<string, string>();
  private timer: { dispose(): void } | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly deps: BridgeDeps) {
    this.subscription = deps.onDidChangeDiagnostics((uris) => {
      if (!deps.enabled()) return;
      for (const uri of uris) {
        if (uri.scheme === 'file' || uri.scheme === 'untitled') this.dirty.add(uri.toString());
      }
      if (this.dirty.size > 0) this.schedule();
    });
  }

  private schedule(): void {
    this.timer?.dispose();
    this.timer = this.deps.setTimer(() => {
      this.timer = undefined;
      void this.flush();
    }, this.deps.debounceMs());
  }

  /** Send what changed now (also used by tests and when the server (re)starts). */
  async flush(): Promise<number> {
    const uris = [...this.dirty];
    this.dirty.clear();
    let sent = 0;
    for (const uri of uris) {
      const diagnostics = this.deps
        .getDiagnostics(uri)
        .filter((d) => d.source !== OWN_SOURCE)
        .map(toWireDiagnostic);
      const params: DiagnosticsDidChangeParams = { uri, version: this.deps.documentVersion(uri), diagnostics };
      const fingerprint = JSON.stringify(params);
      if (this.lastSent.get(uri) === fingerprint) continue;
      this.lastSent.set(uri, fingerprint);
      try {
        await this.deps.send(params);
        sent += 1;
      } catch {
        // Not sent (server down): forget it so the next change sends it again.
        this.lastSent.delete(uri);
      }
    }
    return sent;
  }

  /** Forget what was sent (a new server process knows nothing) and queue `uris` again. */
  resend(uris: readonly string[]): void {
    this.lastSent.clear();
    for (const uri of uris) this.dirty.add(uri);
    if (this.dirty.size > 0) this.schedule();
  }

  dispose(): void {
    this.timer?.dispose();
    this.subscription.dispose();
  }
}

/**
 * The chat side panel (a webview view in the lsp-agent activity-bar container). Messages from
 * the page are validated and handed to the controller; messages to the page are queued until
 * the page says it is ready (it asks for a snapshot then).
 */

import * as vscode from 'vscode';
import { isToHost, type ToHost, type ToWebview } from '../shared/messages';
import { makeNonce, renderHtml } from './html';

export const CHAT_VIEW_ID = 'lspAgent.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private queue: ToWebview[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly visibility = new vscode.EventEmitter<boolean>();
  readonly onDidChangeVisibility = this.visibility.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (message: ToHost) => void,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    const asUri = (...parts: string[]): string => view.webview.asWebviewUri(vscode.Uri.joinPath(media, ...parts)).toString();
    view.webview.html = renderHtml({
      cspSource: view.webview.cspSource,
      nonce: makeNonce(),
      scriptUri: asUri('dist', 'webview.js'),
      styleUri: asUri('dist', 'webview.css'),
      codiconUri: asUri('dist', 'codicon.css'),
    });
    this.disposables.push(
      view.webview.onDidReceiveMessage((raw: unknown) => {
        if (!isToHost(raw)) {
          this.log.warn(`Ignored a malformed message from the chat view: ${JSON.stringify(raw)?.slice(0, 200)}`);
          return;
        }
        if (raw.type === 'ready') {
          this.ready = true;
          // The page asks for a snapshot with 'ready'; queued deltas are covered by it.
          this.queue = [];
        }
        this.onMessage(raw);
      }),
      view.onDidChangeVisibility(() => this.visibility.fire(view.visible)),
      view.onDidDispose(() => {
        this.view = undefined;
        this.ready = false;
        this.visibility.fire(false);
      }),
    );
  }

  post(message: ToWebview): void {
    if (!this.view) return;
    if (!this.ready) {
      this.queue.push(message);
      return;
    }
    void this.view.webview.postMessage(message);
  }

  /** Show the count of open questions on the view's icon. */
  setBadge(count: number): void {
    if (!this.view) return;
    this.view.badge = count > 0 ? { value: count, tooltip: `${count} permission request${count === 1 ? '' : 's'} waiting` } : undefined;
  }

  /** Reveal the panel; `focus` moves keyboard focus into it (only when the user asked). */
  async reveal(focus: boolean): Promise<void> {
    if (this.view) {
      this.view.show(!focus);
      return;
    }
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.visibility.dispose();
  }
}

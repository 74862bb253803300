/**
 * A small, working stand-in for the `vscode` module: enough of the API for the extension and
 * for vscode-languageclient's node client to run in plain Node. Documents, edits, diagnostics,
 * configuration, commands and UI calls are real in-memory behaviour, and every UI call is
 * recorded in `fake.calls` so tests can assert on it. `fake.reset()` clears all state.
 */

import { EventEmitter as NodeEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { fileURLToPath } from 'node:url';
import { disposable, fake, FakeTextDocument } from './workspace';
import { CancellationTokenSource, type Diagnostic, Disposable, EventEmitter, ExtensionMode, LogLevel, TabInputTextDiff, UIKind, Uri } from './values';

export * from './values';
export { FakeTextDocument, fake, workspace } from './workspace';

export const version = '1.99.0';

// ---- the other namespaces, contexts and views --------------------------------------------------------------------------------

function nextAnswer(api: string, args: unknown[]): Promise<any> {
  fake.record(api, ...args);
  return Promise.resolve(fake.answers.shift());
}

function outputChannel(name: string) {
  const line = (level: string) => (message: string, ...rest: unknown[]) => {
    const text = `[${level}] ${message}${rest.length ? ` ${rest.map(String).join(' ')}` : ''}`;
    fake.outputLines.push(text);
    if (process.env.FAKE_VSCODE_LOG) process.stderr.write(`${name}: ${text}\n`);
  };
  return {
    name,
    logLevel: LogLevel.Info,
    onDidChangeLogLevel: () => disposable(),
    trace: line('trace'),
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: (e: unknown, ...rest: unknown[]) => line('error')(e instanceof Error ? e.message : String(e), ...rest),
    append: line('out'),
    appendLine: line('out'),
    replace: line('out'),
    clear: () => undefined,
    show: () => fake.record('outputChannel.show', name),
    hide: () => undefined,
    dispose: () => undefined,
  };
}

export const window = {
  get activeTextEditor() {
    return fake.activeTextEditor;
  },
  get visibleTextEditors() {
    return fake.activeTextEditor ? [fake.activeTextEditor] : [];
  },
  get activeColorTheme() {
    return { kind: 2 };
  },
  tabGroups: {
    get all() {
      return [{ tabs: fake.tabs, isActive: true, viewColumn: 1 }];
    },
    get activeTabGroup() {
      return { tabs: fake.tabs, isActive: true, viewColumn: 1 };
    },
    onDidChangeTabs: () => disposable(),
    onDidChangeTabGroups: () => disposable(),
    async close(tabs: unknown[] | unknown): Promise<boolean> {
      const list = Array.isArray(tabs) ? tabs : [tabs];
      fake.record('tabGroups.close', list);
      fake.tabs = fake.tabs.filter((t) => !list.includes(t));
      return true;
    },
  },
  createOutputChannel: (name: string) => outputChannel(name),
  createStatusBarItem(...args: unknown[]) {
    const item = { id: args[0], text: '', tooltip: '', command: undefined as unknown, name: '', backgroundColor: undefined as unknown, show: () => undefined, hide: () => undefined, dispose: () => undefined };
    fake.record('createStatusBarItem', item);
    return item;
  },
  showInformationMessage: (...args: unknown[]) => nextAnswer('showInformationMessage', args),
  showWarningMessage: (...args: unknown[]) => nextAnswer('showWarningMessage', args),
  showErrorMessage: (...args: unknown[]) => nextAnswer('showErrorMessage', args),
  showInputBox: (...args: unknown[]) => nextAnswer('showInputBox', args),
  showQuickPick: (...args: unknown[]) => nextAnswer('showQuickPick', args),
  setStatusBarMessage: (...args: unknown[]) => {
    fake.record('setStatusBarMessage', ...args);
    return disposable();
  },
  async showTextDocument(target: Uri | FakeTextDocument, options?: unknown) {
    fake.record('showTextDocument', target, options);
    const doc = target instanceof FakeTextDocument ? target : fake.openDocument(target);
    return fake.showEditor(doc);
  },
  async withProgress<R>(options: unknown, task: (progress: { report(v: unknown): void }, token: unknown) => Promise<R>): Promise<R> {
    fake.record('withProgress', options);
    return task({ report: () => undefined }, new CancellationTokenSource().token);
  },
  registerWebviewViewProvider(id: string, provider: unknown): Disposable {
    fake.webviewProviders.set(id, provider);
    return new Disposable(() => fake.webviewProviders.delete(id));
  },
  onDidChangeTextEditorSelection: (l: (e: any) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didChangeSelection.event(l, t, d),
  onDidChangeActiveTextEditor: (l: (e: any) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didChangeActiveEditor.event(l, t, d),
  onDidChangeVisibleTextEditors: () => disposable(),
  onDidChangeActiveNotebookEditor: () => disposable(),
  onDidChangeVisibleNotebookEditors: () => disposable(),
};

function matchScore(selector: unknown, doc: FakeTextDocument): number {
  const list = Array.isArray(selector) ? selector : [selector];
  let best = 0;
  for (const s of list) {
    if (typeof s === 'string') {
      if (s === doc.languageId || s === '*') best = Math.max(best, 10);
      continue;
    }
    const f = s as { scheme?: string; language?: string; pattern?: string; notebookType?: string };
    if (f.notebookType) continue;
    if (f.scheme && f.scheme !== doc.uri.scheme && f.scheme !== '*') continue;
    if (f.language && f.language !== doc.languageId && f.language !== '*') continue;
    best = Math.max(best, 5);
  }
  return best;
}

const languagesBase = {
  match: matchScore,
  getDiagnostics(uri?: Uri): any {
    const collect = (entry: { byOwner: Map<string, Diagnostic[]> }) => [...entry.byOwner.values()].flat();
    if (uri) {
      const entry = fake.diagnostics.get(uri.toString());
      return entry ? collect(entry) : [];
    }
    return [...fake.diagnostics.values()].map((e) => [e.uri, collect(e)]);
  },
  onDidChangeDiagnostics: (l: (e: { uris: Uri[] }) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didChangeDiagnostics.event(l, t, d),
  createDiagnosticCollection(name = 'fake') {
    const own = new Set<string>();
    return {
      name,
      set(uri: Uri | [Uri, Diagnostic[]][], diagnostics?: Diagnostic[]) {
        const entries: [Uri, Diagnostic[]][] = Array.isArray(uri) ? uri : [[uri, diagnostics ?? []]];
        for (const [u, ds] of entries) {
          own.add(u.toString());
          fake.setDiagnostics(u, name, ds);
        }
      },
      delete(uri: Uri) {
        fake.setDiagnostics(uri, name, []);
      },
      clear() {
        for (const u of own) fake.setDiagnostics(Uri.parse(u), name, []);
      },
      get: (uri: Uri) => fake.diagnostics.get(uri.toString())?.byOwner.get(name),
      has: (uri: Uri) => fake.diagnostics.get(uri.toString())?.byOwner.has(name) ?? false,
      forEach: () => undefined,
      dispose() {
        this.clear();
      },
    };
  },
  registerCodeLensProvider(selector: unknown, provider: unknown): Disposable {
    const entry = { selector, provider };
    fake.codeLensProviders.push(entry);
    return new Disposable(() => {
      fake.codeLensProviders = fake.codeLensProviders.filter((e) => e !== entry);
    });
  },
  registerCodeActionsProvider(selector: unknown, provider: unknown, metadata?: unknown): Disposable {
    const entry = { selector, provider, metadata };
    fake.codeActionProviders.push(entry);
    return new Disposable(() => {
      fake.codeActionProviders = fake.codeActionProviders.filter((e) => e !== entry);
    });
  },
  setTextDocumentLanguage: async (doc: FakeTextDocument) => doc,
};

/** `languages.register*Provider` that the test does not care about return a no-op disposable. */
export const languages = new Proxy(languagesBase as Record<string, unknown>, {
  get(target, key: string) {
    if (key in target) return target[key];
    if (key.startsWith('register')) return () => disposable();
    return undefined;
  },
}) as typeof languagesBase & Record<string, any>;

export const commands = {
  /** Like VS Code: a second registration of the same id throws (the first one stays). */
  registerCommand(id: string, fn: (...args: any[]) => unknown): Disposable {
    if (fake.commands.has(id)) throw new Error(`command '${id}' already exists`);
    fake.commands.set(id, fn);
    return new Disposable(() => fake.commands.delete(id));
  },
  async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    fake.record('executeCommand', id, ...args);
    const fn = fake.commands.get(id);
    if (id === 'vscode.diff') {
      fake.tabs.push({ input: new TabInputTextDiff(args[0] as Uri, args[1] as Uri), label: String(args[2]) });
      fake.openDocument(args[1] as Uri);
      return undefined;
    }
    return fn ? fn(...args) : undefined;
  },
  async getCommands(): Promise<string[]> {
    return [...fake.commands.keys()];
  },
};

export const env = {
  appName: 'Visual Studio Code',
  appRoot: '/fake',
  language: 'en',
  machineId: 'fake-machine',
  sessionId: 'fake-session',
  uiKind: UIKind.Desktop,
  uriScheme: 'vscode',
  remoteName: undefined,
  clipboard: {
    async readText() {
      return fake.clipboard;
    },
    async writeText(text: string) {
      fake.clipboard = text;
    },
  },
  async openExternal(uri: Uri) {
    fake.record('openExternal', uri.toString());
    return true;
  },
  asExternalUri: async (uri: Uri) => uri,
};

export const extensions = {
  getExtension: () => undefined,
  all: [],
  onDidChange: () => disposable(),
};

export const l10n = { t: (message: string) => message };

/** A fake `ExtensionContext` rooted at `extensionPath`. */
export function makeContext(extensionPath: string): any {
  const state = new Map<string, unknown>();
  const memento = {
    get: <T>(key: string, defaultValue?: T) => (state.has(key) ? (state.get(key) as T) : defaultValue),
    update: async (key: string, value: unknown) => void state.set(key, value),
    keys: () => [...state.keys()],
    setKeysForSync: () => undefined,
  };
  return {
    subscriptions: [] as { dispose(): unknown }[],
    extensionUri: Uri.file(extensionPath),
    extensionPath,
    workspaceState: memento,
    globalState: memento,
    extensionMode: ExtensionMode.Test,
    extension: { packageJSON: JSON.parse(fs.readFileSync(nodePath.join(extensionPath, 'package.json'), 'utf8')) },
    asAbsolutePath: (p: string) => nodePath.join(extensionPath, p),
    logUri: Uri.file(nodePath.join(extensionPath, 'out', 'log')),
  };
}

/** A fake webview view: records what the extension posts; `receive()` plays the page's messages. */
export function makeWebviewView() {
  const fromPage = new EventEmitter<unknown>();
  const posted: any[] = [];
  const bus = new NodeEmitter();
  const visibility = new EventEmitter<void>();
  const disposeEmitter = new EventEmitter<void>();
  const view = {
    visible: true,
    badge: undefined as unknown,
    webview: {
      options: {},
      html: '',
      cspSource: 'https://fake.vscode-cdn.net',
      asWebviewUri: (uri: Uri) => uri.with({ scheme: 'https', authority: 'fake.vscode-cdn.net' }),
      onDidReceiveMessage: fromPage.event,
      async postMessage(message: unknown) {
        const copy = JSON.parse(JSON.stringify(message));
        posted.push(copy);
        bus.emit('message', copy);
        return true;
      },
    },
    onDidChangeVisibility: visibility.event,
    onDidDispose: disposeEmitter.event,
    show: (preserveFocus?: boolean) => fake.record('webviewView.show', preserveFocus),
  };
  return {
    view,
    posted,
    receive: (message: unknown) => fromPage.fire(message),
    /** Resolve with the first posted message (already posted or future) matching `predicate`. */
    waitFor(predicate: (m: any) => boolean, what: string, timeoutMs = 20_000): Promise<any> {
      const found = posted.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          bus.off('message', onMessage);
          reject(new Error(`timed out waiting for ${what}; posted: ${JSON.stringify(posted.map((m) => m.type))}`));
        }, timeoutMs);
        const onMessage = (m: any): void => {
          if (predicate(m)) {
            clearTimeout(timer);
            bus.off('message', onMessage);
            resolve(m);
          }
        };
        bus.on('message', onMessage);
      });
    },
  };
}

export function fileUri(path: string): Uri {
  return Uri.file(path);
}

export function pathOf(uri: string): string {
  return fileURLToPath(uri);
}

/**
 * The fake's controllable state (`fake`: documents, configuration, diagnostics, registrations,
 * recorded UI calls, queued answers) and its `workspace` namespace (fake-vscode/index.ts).
 */

import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import {
  type Diagnostic,
  Disposable,
  EndOfLine,
  EventEmitter,
  FileType,
  Position,
  Range,
  Selection,
  type TextEdit,
  Uri,
  WorkspaceEdit,
} from './values';

// ---- documents ---------------------------------------------------------------------------------

export class FakeTextDocument {
  version = 1;
  isDirty = false;
  isClosed = false;
  readonly eol = EndOfLine.LF;
  constructor(
    readonly uri: Uri,
    private text: string,
    readonly languageId: string,
  ) {}
  get fileName(): string {
    return this.uri.fsPath;
  }
  get isUntitled(): boolean {
    return this.uri.scheme === 'untitled';
  }
  get lineCount(): number {
    return this.text.split('\n').length;
  }
  getText(range?: Range): string {
    if (!range) return this.text;
    return this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end));
  }
  lineAt(lineOrPos: number | Position): { text: string; range: Range; lineNumber: number; isEmptyOrWhitespace: boolean } {
    const line = typeof lineOrPos === 'number' ? lineOrPos : lineOrPos.line;
    const text = (this.text.split('\n')[line] ?? '').replace(/\r$/, '');
    return { text, lineNumber: line, range: new Range(line, 0, line, text.length), isEmptyOrWhitespace: text.trim() === '' };
  }
  offsetAt(p: Position): number {
    const lines = this.text.split('\n');
    let offset = 0;
    for (let i = 0; i < p.line && i < lines.length; i += 1) offset += (lines[i] as string).length + 1;
    const lineText = lines[p.line] ?? '';
    return Math.min(this.text.length, offset + Math.min(p.character, lineText.length));
  }
  positionAt(offset: number): Position {
    const before = this.text.slice(0, Math.max(0, Math.min(offset, this.text.length)));
    const lines = before.split('\n');
    return new Position(lines.length - 1, (lines[lines.length - 1] as string).length);
  }
  validateRange(r: Range): Range {
    return r;
  }
  validatePosition(p: Position): Position {
    return p;
  }
  getWordRangeAtPosition(): Range | undefined {
    return undefined;
  }
  /** Replace text (what an edit does); returns the change event's content change. */
  applyEdit(range: Range, newText: string): { range: Range; rangeOffset: number; rangeLength: number; text: string } {
    const start = this.offsetAt(range.start);
    const end = this.offsetAt(range.end);
    this.text = this.text.slice(0, start) + newText + this.text.slice(end);
    return { range, rangeOffset: start, rangeLength: end - start, text: newText };
  }
  setTextFromDisk(text: string): void {
    this.text = text;
  }
  async save(): Promise<boolean> {
    if (this.uri.scheme === 'file') {
      fs.writeFileSync(this.uri.fsPath, this.text);
    } else {
      const provider = fake.fileSystems.get(this.uri.scheme);
      if (!provider) return false;
      await provider.writeFile(this.uri, new TextEncoder().encode(this.text), { create: true, overwrite: true });
    }
    this.isDirty = false;
    fake.emitters.didSave.fire(this);
    return true;
  }
}

const LANGS: Record<string, string> = { '.py': 'python', '.ts': 'typescript', '.js': 'javascript', '.md': 'markdown', '.json': 'json' };

// ---- the controllable state ---------------------------------------------------------------------

interface Call {
  api: string;
  args: unknown[];
}

class FakeState {
  calls: Call[] = [];
  documents: FakeTextDocument[] = [];
  configuration = new Map<string, unknown>();
  diagnostics = new Map<string, { uri: Uri; byOwner: Map<string, Diagnostic[]> }>();
  commands = new Map<string, (...args: any[]) => unknown>();
  fileSystems = new Map<string, any>();
  contentProviders = new Map<string, any>();
  codeLensProviders: { selector: unknown; provider: any }[] = [];
  /** Code action providers (the language client's): tests call them as the lightbulb would. */
  codeActionProviders: { selector: unknown; provider: any; metadata: unknown }[] = [];
  webviewProviders = new Map<string, any>();
  workspaceFolders: { uri: Uri; name: string; index: number }[] = [];
  isTrusted = true;
  activeTextEditor: any = undefined;
  clipboard = '';
  /** Answers for showInputBox / showQuickPick / show*Message, consumed in order. */
  answers: unknown[] = [];
  outputLines: string[] = [];
  tabs: { input: unknown; label: string }[] = [];
  emitters = this.newEmitters();

  private newEmitters() {
    return {
      didOpen: new EventEmitter<FakeTextDocument>(),
      didClose: new EventEmitter<FakeTextDocument>(),
      didChange: new EventEmitter<{ document: FakeTextDocument; contentChanges: unknown[]; reason: undefined }>(),
      didSave: new EventEmitter<FakeTextDocument>(),
      didChangeDiagnostics: new EventEmitter<{ uris: Uri[] }>(),
      didChangeConfiguration: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
      didGrantTrust: new EventEmitter<void>(),
      didChangeSelection: new EventEmitter<unknown>(),
      didChangeActiveEditor: new EventEmitter<unknown>(),
    };
  }

  reset(): void {
    this.calls = [];
    this.documents = [];
    this.configuration.clear();
    this.diagnostics.clear();
    this.commands.clear();
    this.fileSystems.clear();
    this.contentProviders.clear();
    this.codeLensProviders = [];
    this.codeActionProviders = [];
    this.webviewProviders.clear();
    this.workspaceFolders = [];
    this.isTrusted = true;
    this.activeTextEditor = undefined;
    this.clipboard = '';
    this.answers = [];
    this.outputLines = [];
    this.tabs = [];
    this.emitters = this.newEmitters();
  }

  record(api: string, ...args: unknown[]): void {
    this.calls.push({ api, args });
  }

  callsOf(api: string): unknown[][] {
    return this.calls.filter((c) => c.api === api).map((c) => c.args);
  }

  setConfiguration(values: Record<string, unknown>): void {
    for (const [k, v] of Object.entries(values)) this.configuration.set(k, v);
  }

  /** Open a document in the fake editor (from disk when `text` is omitted). */
  openDocument(uriOrPath: Uri | string, text?: string): FakeTextDocument {
    const uri = typeof uriOrPath === 'string' ? (uriOrPath.includes(':') && !uriOrPath.startsWith('/') ? Uri.parse(uriOrPath) : Uri.file(uriOrPath)) : uriOrPath;
    const existing = this.documents.find((d) => d.uri.toString() === uri.toString());
    if (existing) return existing;
    let content = text;
    if (content === undefined) {
      if (uri.scheme === 'file') content = fs.readFileSync(uri.fsPath, 'utf8');
      else {
        const provider = this.fileSystems.get(uri.scheme);
        const contentProvider = this.contentProviders.get(uri.scheme);
        if (provider) content = new TextDecoder().decode(provider.readFile(uri));
        else if (contentProvider) content = String(contentProvider.provideTextDocumentContent(uri) ?? '');
        else throw new Error(`cannot open ${uri.toString()}`);
      }
    }
    const doc = new FakeTextDocument(uri, content, LANGS[nodePath.extname(uri.path)] ?? 'plaintext');
    this.documents.push(doc);
    this.emitters.didOpen.fire(doc);
    return doc;
  }

  /** Make `doc` the active editor with `selection`. */
  showEditor(doc: FakeTextDocument, selection = new Selection(new Position(0, 0), new Position(0, 0))): any {
    const editor = {
      document: doc,
      selection,
      selections: [selection],
      visibleRanges: [],
      edit: async (cb: (b: { replace(r: Range, t: string): void; insert(p: Position, t: string): void }) => void) => {
        const edit = new WorkspaceEdit();
        cb({ replace: (r, t) => edit.replace(doc.uri, r, t), insert: (p, t) => edit.insert(doc.uri, p, t) });
        return workspace.applyEdit(edit);
      },
      revealRange: () => undefined,
    };
    this.activeTextEditor = editor;
    this.emitters.didChangeActiveEditor.fire(editor);
    return editor;
  }

  setDiagnostics(uri: Uri, owner: string, diagnostics: Diagnostic[]): void {
    const key = uri.toString();
    const entry = this.diagnostics.get(key) ?? { uri, byOwner: new Map<string, Diagnostic[]>() };
    entry.byOwner.set(owner, diagnostics);
    this.diagnostics.set(key, entry);
    this.emitters.didChangeDiagnostics.fire({ uris: [uri] });
  }

  answer(...values: unknown[]): void {
    this.answers.push(...values);
  }
}

export const fake = new FakeState();

// ---- the workspace namespace -------------------------------------------------------------------

export function disposable(): Disposable {
  return new Disposable(() => undefined);
}

function configurationFor(section?: string) {
  const prefix = section ? `${section}.` : '';
  return {
    get<T>(key: string, defaultValue?: T): T | undefined {
      const full = `${prefix}${key}`;
      return fake.configuration.has(full) ? (fake.configuration.get(full) as T) : defaultValue;
    },
    has(key: string): boolean {
      return fake.configuration.has(`${prefix}${key}`);
    },
    inspect(key: string) {
      return { key: `${prefix}${key}`, globalValue: fake.configuration.get(`${prefix}${key}`) };
    },
    async update(key: string, value: unknown): Promise<void> {
      fake.configuration.set(`${prefix}${key}`, value);
      const full = `${prefix}${key}`;
      fake.emitters.didChangeConfiguration.fire({ affectsConfiguration: (s: string) => full === s || full.startsWith(`${s}.`) });
    },
  };
}

function applyTextEdits(doc: FakeTextDocument, edits: TextEdit[]): void {
  // Apply from the end so earlier offsets stay valid (edits of one WorkspaceEdit don't overlap).
  const sorted = [...edits].sort((a, b) => b.range.start.compareTo(a.range.start));
  const changes = sorted.map((e) => doc.applyEdit(e.range, e.newText));
  doc.version += 1;
  doc.isDirty = true;
  fake.emitters.didChange.fire({ document: doc, contentChanges: changes, reason: undefined });
}

export const workspace = {
  get workspaceFolders() {
    return fake.workspaceFolders.length > 0 ? fake.workspaceFolders : undefined;
  },
  get name() {
    return fake.workspaceFolders[0]?.name;
  },
  get workspaceFile() {
    return undefined;
  },
  get textDocuments() {
    return fake.documents.filter((d) => !d.isClosed);
  },
  get notebookDocuments() {
    return [];
  },
  get isTrusted() {
    return fake.isTrusted;
  },
  getConfiguration: (section?: string) => configurationFor(section),
  getWorkspaceFolder: (uri: Uri) => fake.workspaceFolders.find((f) => uri.path.startsWith(`${f.uri.path}/`) || uri.path === f.uri.path),
  asRelativePath(pathOrUri: string | Uri, includeWorkspaceFolder?: boolean): string {
    const p = typeof pathOrUri === 'string' ? pathOrUri : pathOrUri.fsPath;
    for (const f of fake.workspaceFolders) {
      if (p.startsWith(`${f.uri.fsPath}/`)) {
        const rel = p.slice(f.uri.fsPath.length + 1);
        return includeWorkspaceFolder ? `${f.name}/${rel}` : rel;
      }
    }
    return p;
  },
  async openTextDocument(arg: Uri | string | { content?: string; language?: string }): Promise<FakeTextDocument> {
    if (arg instanceof Uri) return fake.openDocument(arg);
    if (typeof arg === 'string') return fake.openDocument(Uri.file(arg));
    return fake.openDocument(Uri.from({ scheme: 'untitled', path: `Untitled-${fake.documents.length + 1}` }), arg.content ?? '');
  },
  async applyEdit(edit: WorkspaceEdit): Promise<boolean> {
    fake.record('workspace.applyEdit', edit);
    for (const [uri, edits] of edit.entries()) {
      const doc = fake.documents.find((d) => d.uri.toString() === uri.toString()) ?? fake.openDocument(uri);
      applyTextEdits(doc, edits);
    }
    return true;
  },
  async findFiles(include: string, exclude?: string, max = 10_000): Promise<Uri[]> {
    const out: Uri[] = [];
    const skip = /(^|\/)(node_modules|\.git|\.venv|__pycache__)(\/|$)/;
    void include;
    void exclude;
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (out.length >= max) return;
        const full = nodePath.join(dir, entry.name);
        if (skip.test(full)) continue;
        if (entry.isDirectory()) walk(full);
        else if (entry.isFile()) out.push(Uri.file(full));
      }
    };
    for (const f of fake.workspaceFolders) walk(f.uri.fsPath);
    return out;
  },
  fs: {
    async stat(uri: Uri) {
      const s = fs.statSync(uri.fsPath);
      return { type: s.isFile() ? FileType.File : s.isDirectory() ? FileType.Directory : FileType.Unknown, size: s.size, ctime: s.ctimeMs, mtime: s.mtimeMs };
    },
    async readFile(uri: Uri): Promise<Uint8Array> {
      return new Uint8Array(fs.readFileSync(uri.fsPath));
    },
    async writeFile(uri: Uri, content: Uint8Array): Promise<void> {
      fs.writeFileSync(uri.fsPath, content);
    },
  },
  registerFileSystemProvider(scheme: string, provider: unknown): Disposable {
    fake.fileSystems.set(scheme, provider);
    return new Disposable(() => fake.fileSystems.delete(scheme));
  },
  registerTextDocumentContentProvider(scheme: string, provider: unknown): Disposable {
    fake.contentProviders.set(scheme, provider);
    return new Disposable(() => fake.contentProviders.delete(scheme));
  },
  createFileSystemWatcher() {
    return { onDidCreate: () => disposable(), onDidChange: () => disposable(), onDidDelete: () => disposable(), dispose: () => undefined };
  },
  onDidOpenTextDocument: (l: (e: FakeTextDocument) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didOpen.event(l, t, d),
  onDidCloseTextDocument: (l: (e: FakeTextDocument) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didClose.event(l, t, d),
  onDidChangeTextDocument: (l: (e: any) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didChange.event(l, t, d),
  onDidSaveTextDocument: (l: (e: FakeTextDocument) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didSave.event(l, t, d),
  onDidChangeConfiguration: (l: (e: any) => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didChangeConfiguration.event(l, t, d),
  onDidGrantWorkspaceTrust: (l: () => unknown, t?: unknown, d?: Disposable[]) => fake.emitters.didGrantTrust.event(l, t, d),
  onWillSaveTextDocument: () => disposable(),
  onDidChangeWorkspaceFolders: () => disposable(),
  onDidCreateFiles: () => disposable(),
  onDidRenameFiles: () => disposable(),
  onDidDeleteFiles: () => disposable(),
  onWillCreateFiles: () => disposable(),
  onWillRenameFiles: () => disposable(),
  onWillDeleteFiles: () => disposable(),
  onDidOpenNotebookDocument: () => disposable(),
  onDidCloseNotebookDocument: () => disposable(),
  onDidChangeNotebookDocument: () => disposable(),
  onDidSaveNotebookDocument: () => disposable(),
};

/**
 * A small, working stand-in for the `vscode` module: enough of the API for the extension and
 * for vscode-languageclient's node client to run in plain Node. Documents, edits, diagnostics,
 * configuration, commands and UI calls are real in-memory behaviour, and every UI call is
 * recorded in `fake.calls` so tests can assert on it. `fake.reset()` clears all state.
 */

import { EventEmitter as NodeEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const version = '1.99.0';

// ---- events, disposables, cancellation -----------------------------------------------------------

export class Disposable {
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  constructor(private readonly fn: () => unknown) {}
  dispose(): void {
    this.fn();
  }
}

export type Event<T> = (listener: (e: T) => unknown, thisArg?: unknown, disposables?: Disposable[]) => Disposable;

export class EventEmitter<T> {
  private listeners: ((e: T) => unknown)[] = [];
  readonly event: Event<T> = (listener, thisArg, disposables) => {
    const bound = thisArg ? listener.bind(thisArg) : listener;
    this.listeners.push(bound);
    const d = new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== bound);
    });
    disposables?.push(d);
    return d;
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationError extends Error {
  constructor() {
    super('Canceled');
    this.name = 'Canceled';
  }
}

export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  private cancelled = false;
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

// ---- geometry ----------------------------------------------------------------------------------

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
  isBefore(o: Position): boolean {
    return this.line < o.line || (this.line === o.line && this.character < o.character);
  }
  isBeforeOrEqual(o: Position): boolean {
    return this.isBefore(o) || this.isEqual(o);
  }
  isAfter(o: Position): boolean {
    return !this.isBeforeOrEqual(o);
  }
  isAfterOrEqual(o: Position): boolean {
    return !this.isBefore(o);
  }
  isEqual(o: Position): boolean {
    return this.line === o.line && this.character === o.character;
  }
  compareTo(o: Position): number {
    return this.isBefore(o) ? -1 : this.isEqual(o) ? 0 : 1;
  }
  translate(lineDelta = 0, characterDelta = 0): Position {
    return new Position(this.line + lineDelta, this.character + characterDelta);
  }
  with(line = this.line, character = this.character): Position {
    return new Position(line, character);
  }
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    const start = typeof a === 'number' ? new Position(a, b as number) : a;
    const end = typeof a === 'number' ? new Position(c as number, d as number) : (b as Position);
    [this.start, this.end] = start.isBeforeOrEqual(end) ? [start, end] : [end, start];
  }
  get isEmpty(): boolean {
    return this.start.isEqual(this.end);
  }
  get isSingleLine(): boolean {
    return this.start.line === this.end.line;
  }
  contains(p: Position | Range): boolean {
    if (p instanceof Range) return this.contains(p.start) && this.contains(p.end);
    return p.isAfterOrEqual(this.start) && p.isBeforeOrEqual(this.end);
  }
  intersection(o: Range): Range | undefined {
    const start = this.start.isAfter(o.start) ? this.start : o.start;
    const end = this.end.isBefore(o.end) ? this.end : o.end;
    return start.isAfter(end) ? undefined : new Range(start, end);
  }
  isEqual(o: Range): boolean {
    return this.start.isEqual(o.start) && this.end.isEqual(o.end);
  }
  with(start = this.start, end = this.end): Range {
    return new Range(start, end);
  }
}

export class Selection extends Range {
  readonly anchor: Position;
  readonly active: Position;
  constructor(anchor: Position, active: Position) {
    super(anchor, active);
    this.anchor = anchor;
    this.active = active;
  }
  get isReversed(): boolean {
    return this.anchor.isAfter(this.active);
  }
}

// ---- URIs --------------------------------------------------------------------------------------

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (!m) throw new Error(`[UriError]: cannot parse ${value}`);
    return new Uri(m[1] as string, m[2] ?? '', decodeURIComponent(m[3] ?? ''), m[4] ?? '', m[5] ?? '');
  }
  static file(path: string): Uri {
    return new Uri('file', '', path.replace(/\\/g, '/'), '', '');
  }
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? '', c.path ?? '', c.query ?? '', c.fragment ?? '');
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return base.with({ path: nodePath.posix.join(base.path, ...parts) });
  }
  get fsPath(): string {
    return this.path;
  }
  with(c: { scheme?: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme ?? this.scheme, c.authority ?? this.authority, c.path ?? this.path, c.query ?? this.query, c.fragment ?? this.fragment);
  }
  toString(): string {
    if (this.scheme === 'file') return pathToFileURL(this.path).toString();
    const path = this.path
      .split('/')
      .map((s) => encodeURIComponent(s))
      .join('/');
    return `${this.scheme}:${this.authority ? `//${this.authority}` : ''}${path}${this.query ? `?${this.query}` : ''}${this.fragment ? `#${this.fragment}` : ''}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path, external: this.toString() };
  }
}

// ---- enums -------------------------------------------------------------------------------------

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}
export enum DiagnosticTag {
  Unnecessary = 1,
  Deprecated = 2,
}
export enum FileType {
  Unknown = 0,
  File = 1,
  Directory = 2,
  SymbolicLink = 64,
}
export enum FileChangeType {
  Changed = 1,
  Created = 2,
  Deleted = 3,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}
export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum EndOfLine {
  LF = 1,
  CRLF = 2,
}
export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}
export enum TextDocumentSaveReason {
  Manual = 1,
  AfterDelay = 2,
  FocusOut = 3,
}
export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}
export enum UIKind {
  Desktop = 1,
  Web = 2,
}
export enum CodeActionTriggerKind {
  Invoke = 1,
  Automatic = 2,
}
export enum CompletionItemKind {
  Text = 0,
}
export enum SymbolKind {
  File = 0,
}
export enum NotebookCellKind {
  Markup = 1,
  Code = 2,
}
export enum ExtensionMode {
  Production = 1,
  Development = 2,
  Test = 3,
}

export class ThemeColor {
  constructor(readonly id: string) {}
}
export class ThemeIcon {
  constructor(readonly id: string) {}
}
export class MarkdownString {
  constructor(
    public value = '',
    public supportThemeIcons = false,
  ) {}
  appendText(t: string): this {
    this.value += t;
    return this;
  }
  appendMarkdown(t: string): this {
    this.value += t;
    return this;
  }
  appendCodeblock(t: string, lang = ''): this {
    this.value += `\n\`\`\`${lang}\n${t}\n\`\`\`\n`;
    return this;
  }
}

export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  static readonly QuickFix = new CodeActionKind('quickfix');
  static readonly Refactor = new CodeActionKind('refactor');
  static readonly Source = new CodeActionKind('source');
  constructor(readonly value: string) {}
  append(part: string): CodeActionKind {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
  contains(other: CodeActionKind): boolean {
    return this.value === '' || other.value === this.value || other.value.startsWith(`${this.value}.`);
  }
  intersects(other: CodeActionKind): boolean {
    return this.contains(other) || other.contains(this);
  }
}

export class CodeLens {
  constructor(
    public range: Range,
    public command?: { title: string; command: string; arguments?: unknown[] },
  ) {}
  get isResolved(): boolean {
    return this.command !== undefined;
  }
}

/** Classes vscode-languageclient subclasses at load time; their behaviour is not exercised. */
export class CompletionItem {
  constructor(public label: unknown, public kind?: number) {}
}
export class CallHierarchyItem {
  readonly args: unknown[];
  constructor(...args: unknown[]) {
    this.args = args;
  }
}
export class TypeHierarchyItem {
  readonly args: unknown[];
  constructor(...args: unknown[]) {
    this.args = args;
  }
}
export class DocumentLink {
  constructor(public range: Range, public target?: Uri) {}
}
export class InlayHint {
  constructor(public position: Position, public label: unknown, public kind?: number) {}
}
export class SymbolInformation {
  readonly args: unknown[];
  constructor(...args: unknown[]) {
    this.args = args;
  }
}
export class CodeAction {
  edit?: WorkspaceEdit;
  diagnostics?: Diagnostic[];
  command?: unknown;
  isPreferred?: boolean;
  constructor(public title: string, public kind?: CodeActionKind) {}
}

export class Diagnostic {
  source?: string;
  code?: string | number | { value: string | number; target: Uri };
  tags?: DiagnosticTag[];
  relatedInformation?: unknown[];
  constructor(
    public range: Range,
    public message: string,
    public severity: DiagnosticSeverity = DiagnosticSeverity.Error,
  ) {}
}

export class DiagnosticRelatedInformation {
  constructor(
    public location: Location,
    public message: string,
  ) {}
}

export class Location {
  constructor(
    public uri: Uri,
    public range: Range | Position,
  ) {}
}

export class TextEdit {
  static replace(range: Range, newText: string): TextEdit {
    return new TextEdit(range, newText);
  }
  static insert(position: Position, newText: string): TextEdit {
    return new TextEdit(new Range(position, position), newText);
  }
  static delete(range: Range): TextEdit {
    return new TextEdit(range, '');
  }
  constructor(
    public range: Range,
    public newText: string,
  ) {}
}

export class SnippetTextEdit {
  constructor(
    public range: Range,
    public snippet: { value: string },
  ) {}
}

export class WorkspaceEdit {
  private readonly edits: [Uri, TextEdit[]][] = [];
  readonly fileOps: { kind: 'create' | 'delete' | 'rename'; uri: Uri; to?: Uri }[] = [];
  private bucket(uri: Uri): TextEdit[] {
    let entry = this.edits.find(([u]) => u.toString() === uri.toString());
    if (!entry) {
      entry = [uri, []];
      this.edits.push(entry);
    }
    return entry[1];
  }
  replace(uri: Uri, range: Range, newText: string): void {
    this.bucket(uri).push(new TextEdit(range, newText));
  }
  insert(uri: Uri, position: Position, newText: string): void {
    this.bucket(uri).push(TextEdit.insert(position, newText));
  }
  delete(uri: Uri, range: Range): void {
    this.bucket(uri).push(TextEdit.delete(range));
  }
  set(uri: Uri, edits: (TextEdit | [TextEdit, unknown])[] | null): void {
    const bucket = this.bucket(uri);
    bucket.length = 0;
    for (const e of edits ?? []) bucket.push(Array.isArray(e) ? e[0] : e);
  }
  has(uri: Uri): boolean {
    return this.edits.some(([u]) => u.toString() === uri.toString());
  }
  get(uri: Uri): TextEdit[] {
    return this.edits.find(([u]) => u.toString() === uri.toString())?.[1] ?? [];
  }
  entries(): [Uri, TextEdit[]][] {
    return this.edits;
  }
  createFile(uri: Uri): void {
    this.fileOps.push({ kind: 'create', uri });
  }
  deleteFile(uri: Uri): void {
    this.fileOps.push({ kind: 'delete', uri });
  }
  renameFile(from: Uri, to: Uri): void {
    this.fileOps.push({ kind: 'rename', uri: from, to });
  }
  get size(): number {
    return this.edits.length + this.fileOps.length;
  }
}

export class FileSystemError extends Error {
  static FileNotFound(uri?: unknown): FileSystemError {
    return new FileSystemError(`FileNotFound: ${String(uri)}`, 'FileNotFound');
  }
  static NoPermissions(uri?: unknown): FileSystemError {
    return new FileSystemError(`NoPermissions: ${String(uri)}`, 'NoPermissions');
  }
  static FileExists(uri?: unknown): FileSystemError {
    return new FileSystemError(`FileExists: ${String(uri)}`, 'FileExists');
  }
  constructor(
    message: string,
    readonly code = 'Unknown',
  ) {
    super(message);
  }
}

export class TabInputText {
  constructor(readonly uri: Uri) {}
}
export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}
export class TabInputCustom {
  constructor(readonly uri: Uri) {}
}
export class TabInputNotebook {
  constructor(readonly uri: Uri) {}
}
export class RelativePattern {
  constructor(
    readonly base: unknown,
    readonly pattern: string,
  ) {}
}

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

// ---- namespaces --------------------------------------------------------------------------------

function disposable(): Disposable {
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

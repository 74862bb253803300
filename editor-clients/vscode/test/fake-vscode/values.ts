/** The `vscode` API's value types for the fake (fake-vscode/index.ts): events, disposables,
 * cancellation, positions and ranges, URIs, enums, edits and the small classes the extension and
 * vscode-languageclient construct. */

import * as nodePath from 'node:path';
import { pathToFileURL } from 'node:url';

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

/**
 * The editor side of the chat: the selection offered to the panel (and attached to a prompt),
 * and what the panel asks of the editor: insert a code block, open a location or a link.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { workspaceMentionIo } from './prompt/workspaceMentions';
import type { SelectionBlockInput } from './prompt/mentions';
import type { SelectionInfo } from './shared/messages';

/** The selection chip for `editor`: its file and 1-based lines; undefined without a selection in a file or untitled document. */
export function selectionInfo(editor: vscode.TextEditor | undefined): SelectionInfo | undefined {
  let next: SelectionInfo | undefined;
  if (editor && (editor.document.uri.scheme === 'file' || editor.document.uri.scheme === 'untitled') && !editor.selection.isEmpty) {
    const s = editor.selection;
    const endLine = s.end.character === 0 && s.end.line > s.start.line ? s.end.line : s.end.line + 1;
    next = {
      uri: editor.document.uri.toString(),
      label: `${path.basename(editor.document.uri.fsPath || editor.document.uri.path)}:${s.start.line + 1}-${endLine}`,
      startLine: s.start.line + 1,
      endLine,
    };
  }
  return next;
}

/** The editor's selection as a resource block input, if any. */
export function selectionBlock(editor: vscode.TextEditor | undefined): SelectionBlockInput | undefined {
  if (!editor || editor.selection.isEmpty) return undefined;
  const s = editor.selection;
  const doc = editor.document;
  return {
    uri: doc.uri.toString(),
    label: `${path.basename(doc.uri.fsPath || doc.uri.path)}:${s.start.line + 1}-${s.end.line + 1}`,
    text: doc.getText(s),
    range: {
      start: { line: s.start.line, character: s.start.character },
      end: { line: s.end.line, character: s.end.character },
    },
  };
}

/** Replace the selections of the active (else first visible) editor with `text`. */
export async function insertIntoEditor(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    void vscode.window.showWarningMessage('Open a file to insert the code into.');
    return;
  }
  await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, text);
  });
}

/** Show a file (a URI, or an absolute path) at a 1-based line (default 1), as a preview. */
export async function openLocation(uri: string, line?: number): Promise<void> {
  const target = /^[a-z][a-z0-9+.-]*:/i.test(uri) ? vscode.Uri.parse(uri) : vscode.Uri.file(uri);
  const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
  await vscode.window.showTextDocument(target, { preview: true, selection: new vscode.Range(position, position) });
}

/**
 * Follow a link of the transcript: web and mail links open outside; a file link (absolute, or
 * relative to a workspace folder, `#L12` for a line) opens in the editor.
 */
export async function openLink(href: string): Promise<void> {
  if (/^(https?|mailto):/i.test(href)) {
    await vscode.env.openExternal(vscode.Uri.parse(href));
    return;
  }
  const [file, fragment] = href.split('#');
  const lineMatch = /^L?(\d+)/.exec(fragment ?? '');
  const line = lineMatch ? Number(lineMatch[1]) : undefined;
  if (!file) return;
  if (file.startsWith('file:') || path.isAbsolute(file)) {
    await openLocation(file, line);
    return;
  }
  const resolved = await workspaceMentionIo().resolvePath(decodeURIComponent(file));
  if (resolved) await openLocation(resolved, line);
  else void vscode.window.showWarningMessage(`No file ${file} in the workspace.`);
}

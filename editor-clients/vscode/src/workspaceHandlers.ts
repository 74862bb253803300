/**
 * Server → client workspace requests: `lspAgent/workspace/saveDocuments` and
 * `lspAgent/workspace/didChangeFiles` (docs/protocol.md).
 */

import * as vscode from 'vscode';
import type { DidChangeFilesParams, SaveDocumentsParams, SaveDocumentsResult } from './shared/protocol';

function sameUri(a: string, b: vscode.Uri): boolean {
  try {
    return vscode.Uri.parse(a).toString() === b.toString();
  } catch {
    return false;
  }
}

/**
 * Save the open buffers among `uris` so the disk holds what the agent wrote. `saved` lists every
 * URI whose disk text now equals its buffer: saved ones, clean ones, and ones not open in the
 * editor (the disk is their only text). A buffer that failed to save is left out, and the
 * server then knows the disk is stale.
 */
export async function saveDocuments(params: SaveDocumentsParams, log: vscode.LogOutputChannel): Promise<SaveDocumentsResult> {
  const saved: string[] = [];
  for (const uri of params.uris) {
    const doc = vscode.workspace.textDocuments.find((d) => sameUri(uri, d.uri));
    if (!doc) {
      saved.push(uri);
      continue;
    }
    if (doc.isUntitled) {
      log.warn(`saveDocuments: ${uri} is untitled; not saving it (that would ask the user for a file name).`);
      continue;
    }
    if (!doc.isDirty) {
      saved.push(uri);
      continue;
    }
    try {
      if (await doc.save()) {
        saved.push(uri);
      } else {
        log.warn(`saveDocuments: VS Code did not save ${uri}.`);
      }
    } catch (error) {
      log.warn(`saveDocuments: saving ${uri} failed: ${String(error)}`);
    }
  }
  return { saved };
}

/**
 * Files changed on disk behind the editor (after a shell command). VS Code's file watcher
 * reloads clean buffers by itself and keeps dirty ones (showing a conflict on save), which is
 * what the protocol asks; so this only logs.
 */
export function didChangeFiles(params: DidChangeFilesParams, log: vscode.LogOutputChannel): void {
  log.debug(`didChangeFiles: ${params.uris.length === 0 ? 'anything under the roots' : params.uris.join(', ')}`);
}

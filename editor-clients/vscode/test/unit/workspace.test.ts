import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import * as vscode from 'vscode';
import { saveDocuments } from '../../src/workspaceHandlers';
import { fake, Uri } from '../fake-vscode/index';

const dir = mkdtempSync(join(tmpdir(), 'save-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const log = { warn: (m: string) => fake.outputLines.push(m), debug: () => undefined } as never;

beforeEach(() => fake.reset());

describe('lspAgent/workspace/saveDocuments', () => {
  it('saves dirty buffers, lists clean and unopened ones, skips untitled', async () => {
    const dirty = join(dir, 'dirty.py');
    const clean = join(dir, 'clean.py');
    writeFileSync(dirty, 'old\n');
    writeFileSync(clean, 'same\n');
    const doc = fake.openDocument(dirty);
    fake.openDocument(clean);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri as never, new vscode.Range(0, 0, 0, 3), 'new');
    await vscode.workspace.applyEdit(edit);
    assert.equal(doc.isDirty, true);
    const untitled = fake.openDocument(Uri.from({ scheme: 'untitled', path: 'Untitled-1' }), 'scratch');
    const uris = [Uri.file(dirty).toString(), Uri.file(clean).toString(), Uri.file(join(dir, 'closed.py')).toString(), untitled.uri.toString()];
    const result = await saveDocuments({ uris }, log);
    assert.deepEqual(result.saved, uris.slice(0, 3));
    assert.equal(readFileSync(dirty, 'utf8'), 'new\n');
    assert.equal(doc.isDirty, false);
    assert.match(fake.outputLines.join('\n'), /untitled; not saving it/);
  });

  it('matches URIs however the server encodes them', async () => {
    const spaced = join(dir, 'with space.py');
    writeFileSync(spaced, 'x');
    const doc = fake.openDocument(spaced);
    doc.isDirty = true;
    const result = await saveDocuments({ uris: [`file://${dir}/with%20space.py`] }, log);
    assert.equal(result.saved?.length, 1);
    assert.equal(doc.isDirty, false);
  });
});

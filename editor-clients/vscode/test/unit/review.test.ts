import '../fake-vscode/register';
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as vscode from 'vscode';
import { PermissionBroker } from '../../src/permissions/broker';
import { ORIGINAL_SCHEME, PROPOSAL_SCHEME, ProposalStore } from '../../src/review/proposalStore';
import { ReviewController } from '../../src/review/reviewController';
import type { RequestPermissionParams, RequestPermissionResult } from '../../src/shared/protocol';
import { fake, type Uri } from '../fake-vscode/index';

const OLD = 'a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n';
const NEW = 'a = 10\nb = 2\nc = 3\nd = 4\ne = 5\nf = 60\n';
const TARGET = 'file:///w/m.py';

function request(): RequestPermissionParams {
  return {
    sessionId: 's',
    toolCall: { sessionUpdate: 'tool_call', toolCallId: 't', title: 'Edit m.py', kind: 'edit', content: [{ type: 'diff', path: '/w/m.py', uri: TARGET, oldText: OLD, newText: NEW }] },
    options: [
      { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
      { optionId: 'no', name: 'Reject', kind: 'reject_once' },
    ],
  };
}

function setup(editedSupported = true) {
  const broker = new PermissionBroker();
  const store = new ProposalStore();
  store.register();
  const log = { warn: () => undefined } as never;
  const review = new ReviewController(store, broker, { log, editedProposalsSupported: () => editedSupported });
  const answer = broker.request(request());
  return { broker, store, review, answer };
}

function lensTitles(doc: unknown): string[] {
  const provider = fake.codeLensProviders[0]?.provider as { provideCodeLenses(d: unknown): { command: { title: string } }[] };
  return provider.provideCodeLenses(doc).map((l) => l.command.title);
}

beforeEach(() => fake.reset());

describe('review in the diff editor', () => {
  it('opens original ⟷ proposal as virtual documents, taking focus (the user asked)', async () => {
    const t = setup();
    assert.equal(await t.review.open('perm-1'), 1);
    const call = fake.callsOf('executeCommand').find((c) => c[0] === 'vscode.diff');
    assert.ok(call);
    const [, original, proposal, title, options] = call as [string, Uri, Uri, string, { preserveFocus: boolean }];
    assert.equal(original.scheme, ORIGINAL_SCHEME);
    assert.equal(proposal.scheme, PROPOSAL_SCHEME);
    assert.equal(proposal.path, '/perm-1/0/w/m.py', 'the path keeps the file name for the tab and language');
    assert.equal(title, 'm.py ↔ proposed by lsp-agent');
    assert.equal(options.preserveFocus, false);
    assert.equal(fake.contentProviders.get(ORIGINAL_SCHEME).provideTextDocumentContent(original), OLD);
    assert.equal(new TextDecoder().decode(fake.fileSystems.get(PROPOSAL_SCHEME).readFile(proposal)), NEW);
    assert.throws(() => fake.fileSystems.get(PROPOSAL_SCHEME).delete(proposal), /NoPermissions/);
  });

  it('shows accept/reject lenses for the proposal and each hunk', async () => {
    const t = setup();
    await t.review.open('perm-1');
    const doc = fake.documents.find((d) => d.uri.scheme === PROPOSAL_SCHEME);
    assert.deepEqual(lensTitles(doc), [
      '$(check) Accept',
      '$(close) Reject',
      '$(comment) Reject with feedback…',
      '$(check) Accept change 1/2',
      '$(discard) Reject change',
      '$(check) Accept change 2/2',
      '$(discard) Reject change',
    ]);
    t.review.acceptHunk(doc!.uri as never, 1);
    assert.equal(lensTitles(doc)[5], '$(pass-filled) Change 2 of 2 accepted');
  });

  it('accepts an untouched proposal as a plain allow and closes its tab', async () => {
    const t = setup();
    await t.review.open('perm-1');
    assert.equal(fake.tabs.length, 1);
    await vscode.commands.executeCommand('lspAgent.review.accept', fake.tabs[0] && (fake.tabs[0].input as { modified: Uri }).modified);
    assert.deepEqual(await t.answer, { outcome: { outcome: 'selected', optionId: 'yes' } } satisfies RequestPermissionResult);
    await new Promise((r) => setImmediate(r));
    assert.equal(fake.tabs.length, 0);
    assert.equal(t.store.entriesOf('perm-1').length, 0);
  });

  it('sends the edited text after a hunk was rejected and the proposal typed into', async () => {
    const t = setup();
    await t.review.open('perm-1');
    const doc = fake.documents.find((d) => d.uri.scheme === PROPOSAL_SCHEME)!;
    assert.equal(await t.review.rejectHunk(doc.uri as never, 0), true);
    assert.equal(doc.getText(), 'a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 60\n');
    const edit = new vscode.WorkspaceEdit();
    edit.insert(doc.uri as never, new vscode.Position(6, 0), '# reviewed\n');
    await vscode.workspace.applyEdit(edit);
    await t.review.accept(doc.uri as never);
    assert.deepEqual(await t.answer, {
      outcome: { outcome: 'selected', optionId: 'yes', editedText: { [TARGET]: 'a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 60\n# reviewed\n' } },
    });
    assert.equal(doc.isDirty, false, 'the edited proposal was saved to memory before its tab closed');
  });

  it('offers the original proposal when the server cannot take edits', async () => {
    const t = setup(false);
    await t.review.open('perm-1');
    const doc = fake.documents.find((d) => d.uri.scheme === PROPOSAL_SCHEME)!;
    await t.review.rejectHunk(doc.uri as never, 0);
    fake.answer('Accept original proposal');
    await t.review.accept(doc.uri as never);
    assert.deepEqual(await t.answer, { outcome: { outcome: 'selected', optionId: 'yes' } });
    assert.equal((fake.callsOf('showWarningMessage')[0]?.[1] as { modal: boolean }).modal, true);
  });

  it('rejects with feedback typed in an input box; Escape rejects nothing', async () => {
    const t = setup();
    await t.review.open('perm-1');
    const uri = fake.documents.find((d) => d.uri.scheme === PROPOSAL_SCHEME)!.uri;
    fake.answer(undefined);
    assert.equal(await t.review.reject(uri as never, true), undefined);
    assert.equal(t.broker.pending().length, 1);
    fake.answer('use a dataclass instead');
    await t.review.reject(uri as never, true);
    assert.deepEqual(await t.answer, { outcome: { outcome: 'selected', optionId: 'no', feedback: 'use a dataclass instead' } });
  });

  it('closes the review when the question is answered from the panel', async () => {
    const t = setup();
    await t.review.open('perm-1');
    t.broker.answer('perm-1', 'no');
    await new Promise((r) => setImmediate(r));
    assert.equal(fake.tabs.length, 0);
    const doc = fake.documents.find((d) => d.uri.scheme === PROPOSAL_SCHEME)!;
    assert.deepEqual(lensTitles(doc), [], 'no lenses on an answered proposal');
  });
});

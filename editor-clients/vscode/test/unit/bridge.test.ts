import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DiagnosticsBridge, toWireDiagnostic, type BridgeDeps, type DiagnosticLike } from '../../src/diagnostics/bridge';
import type { DiagnosticsDidChangeParams } from '../../src/shared/protocol';

const range = { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } };

function setup(diags: Record<string, DiagnosticLike[]>, versions: Record<string, number> = {}) {
  let listener: ((uris: { toString(): string; scheme: string }[]) => void) | undefined;
  const timers: { fn: () => void; ms: number; disposed: boolean }[] = [];
  const sent: DiagnosticsDidChangeParams[] = [];
  let enabled = true;
  let failing = false;
  const deps: BridgeDeps = {
    onDidChangeDiagnostics: (l) => {
      listener = l;
      return { dispose: () => undefined };
    },
    getDiagnostics: (uri) => diags[uri] ?? [],
    documentVersion: (uri) => versions[uri] ?? null,
    send: async (p) => {
      if (failing) throw new Error('server down');
      sent.push(p);
    },
    debounceMs: () => 300,
    enabled: () => enabled,
    setTimer: (fn, ms) => {
      const t = { fn, ms, disposed: false };
      timers.push(t);
      return { dispose: () => (t.disposed = true) };
    },
  };
  const bridge = new DiagnosticsBridge(deps);
  const change = (...uris: string[]) => listener?.(uris.map((u) => ({ toString: () => u, scheme: u.split(':')[0] as string })));
  const fire = async () => {
    const live = timers.filter((t) => !t.disposed);
    assert.equal(live.length, 1, 'exactly one pending debounce timer');
    live[0]!.disposed = true;
    live[0]!.fn();
    await new Promise((r) => setImmediate(r));
  };
  return { bridge, change, fire, sent, timers, setEnabled: (v: boolean) => (enabled = v), setFailing: (v: boolean) => (failing = v) };
}

describe('toWireDiagnostic', () => {
  it('converts severity, code objects and tags to LSP', () => {
    assert.deepEqual(toWireDiagnostic({ range, message: 'm', severity: 0, source: 'ruff', code: { value: 'F401' }, tags: [1] }), {
      range,
      severity: 1,
      message: 'm',
      code: 'F401',
      source: 'ruff',
      tags: [1],
    });
    assert.equal(toWireDiagnostic({ range, message: 'h', severity: 3 }).severity, 4);
  });
});

describe('DiagnosticsBridge', () => {
  it('debounces bursts, sends versions, skips our own diagnostics and other schemes', async () => {
    const t = setup(
      { 'file:///a.py': [{ range, message: 'E', severity: 0, source: 'pyright' }, { range, message: 'ours', severity: 1, source: 'lsp-agent' }] },
      { 'file:///a.py': 7 },
    );
    t.change('file:///a.py');
    t.change('file:///a.py', 'git:/a.py', 'output:x');
    assert.equal(t.timers.filter((x) => !x.disposed).length, 1);
    assert.equal(t.timers[0]?.disposed, true, 'the second change restarted the timer');
    await t.fire();
    assert.deepEqual(t.sent, [{ uri: 'file:///a.py', version: 7, diagnostics: [{ range, severity: 1, message: 'E', source: 'pyright' }] }]);
  });

  it('does not resend an unchanged payload, and resends after a server restart', async () => {
    const t = setup({ 'untitled:Untitled-1': [] });
    t.change('untitled:Untitled-1');
    await t.fire();
    t.change('untitled:Untitled-1');
    await t.fire();
    assert.equal(t.sent.length, 1);
    assert.deepEqual(t.sent[0], { uri: 'untitled:Untitled-1', version: null, diagnostics: [] });
    t.bridge.resend(['untitled:Untitled-1']);
    await t.fire();
    assert.equal(t.sent.length, 2);
  });

  it('sends nothing when disabled, and retries what failed to send', async () => {
    const t = setup({ 'file:///b.py': [{ range, message: 'W', severity: 1 }] });
    t.setEnabled(false);
    t.change('file:///b.py');
    assert.equal(t.timers.length, 0);
    t.setEnabled(true);
    t.setFailing(true);
    t.change('file:///b.py');
    await t.fire();
    t.setFailing(false);
    t.change('file:///b.py');
    await t.fire();
    assert.equal(t.sent.length, 1);
  });
});

/**
 * The version handshake: is the server that answered `initialize` an lsp-agent we can talk to?
 *
 * The server advertises `capabilities.experimental.lspAgent = {version, protocolVersion, loadSession}` and
 * `serverInfo = {name: "lsp-agent", version}` (docs/protocol.md, "initialize").
 */

import { MIN_SERVER_VERSION, PROTOCOL_VERSION, type ServerAgentCapabilities } from '../shared/protocol';

/**
 * Compare dotted versions (`"0.10.2"`, `"1.0.0rc1"`, `"1.0.0-beta.2"`): negative, zero or positive
 * like a sort comparator. Missing parts count as 0; a pre-release sorts before its release.
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): { nums: number[]; pre: string } => {
    const m = /^v?(\d+(?:\.\d+)*)(.*)$/.exec(v.trim());
    if (!m) return { nums: [0], pre: v };
    const rest = m[2] ?? '';
    // Build metadata ("+local") does not order; a pre-release label ("rc1", "-beta.2", ".dev0") does.
    const pre = rest.startsWith('+') ? '' : rest.replace(/^[-.]/, '');
    return { nums: (m[1] as string).split('.').map((n) => Number.parseInt(n, 10)), pre };
  };
  const pa = parse(a);
  const pb = parse(b);
  const len = Math.max(pa.nums.length, pb.nums.length);
  for (let i = 0; i < len; i += 1) {
    const d = (pa.nums[i] ?? 0) - (pb.nums[i] ?? 0);
    if (d !== 0) return d;
  }
  const preA = pa.pre;
  const preB = pb.pre;
  if (preA === preB) return 0;
  if (preA === '') return 1;
  if (preB === '') return -1;
  return preA < preB ? -1 : 1;
}

export type HandshakeResult =
  | { ok: true; agent: ServerAgentCapabilities; serverName?: string }
  | { ok: false; problem: 'notAgent' | 'tooOld' | 'protocol'; message: string; version?: string };

interface InitializeResultLike {
  capabilities?: { experimental?: unknown };
  serverInfo?: { name: string; version?: string };
}

/** Check the `initialize` result against this client's protocol version and minimum server version. */
export function checkHandshake(result: InitializeResultLike | undefined, minVersion = MIN_SERVER_VERSION): HandshakeResult {
  const experimental = result?.capabilities?.experimental;
  const raw =
    typeof experimental === 'object' && experimental !== null
      ? (experimental as Record<string, unknown>).lspAgent
      : undefined;
  const serverName = result?.serverInfo?.name;
  if (typeof raw !== 'object' || raw === null) {
    const who = serverName ? `"${serverName}"` : 'The configured server';
    return {
      ok: false,
      problem: 'notAgent',
      message: `${who} did not announce the lspAgent protocol in its capabilities; it is not lsp-agent or it is older than ${minVersion}.`,
      ...(result?.serverInfo?.version ? { version: result.serverInfo.version } : {}),
    };
  }
  const info = raw as Record<string, unknown>;
  const version = typeof info.version === 'string' ? info.version : (result?.serverInfo?.version ?? '0');
  const protocolVersion = typeof info.protocolVersion === 'number' ? info.protocolVersion : 0;
  if (protocolVersion !== PROTOCOL_VERSION) {
    const newer = protocolVersion > PROTOCOL_VERSION;
    return {
      ok: false,
      problem: 'protocol',
      version,
      message: newer
        ? `lsp-agent ${version} speaks protocol version ${protocolVersion}; this extension speaks ${PROTOCOL_VERSION}. Update the extension.`
        : `lsp-agent ${version} speaks protocol version ${protocolVersion}; this extension needs ${PROTOCOL_VERSION}. Update lsp-agent.`,
    };
  }
  if (compareVersions(version, minVersion) < 0) {
    return {
      ok: false,
      problem: 'tooOld',
      version,
      message: `lsp-agent ${version} is too old; this extension needs ${minVersion} or newer. Update your clone and reinstall it with "pipx install --force ./lsp-agent".`,
    };
  }
  return {
    ok: true,
    // Optional capabilities count only when the server says `true` (older servers omit them).
    agent: { version, protocolVersion, loadSession: info.loadSession === true },
    ...(serverName ? { serverName } : {}),
  };
}

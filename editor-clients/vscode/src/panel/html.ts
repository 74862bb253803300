/**
 * The chat webview's HTML: a strict Content Security Policy (no remote resources, scripts only
 * with this load's nonce), local stylesheet, codicon font and script.
 */

import { randomBytes } from 'node:crypto';

export interface HtmlResources {
  /** `webview.cspSource`: the origin local resources are served from. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  codiconUri: string;
  nonce: string;
}

/** 128 random bits, base64: a fresh nonce per page load. */
export function makeNonce(): string {
  return randomBytes(16).toString('base64');
}

function escapeAttr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    "connect-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function renderHtml(r: HtmlResources): string {
  const csp = contentSecurityPolicy(r.cspSource, r.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(r.codiconUri)}">
<link rel="stylesheet" href="${escapeAttr(r.styleUri)}">
<title>lsp-agent</title>
</head>
<body>
<div id="app" class="app" aria-busy="true"></div>
<script nonce="${escapeAttr(r.nonce)}" src="${escapeAttr(r.scriptUri)}"></script>
</body>
</html>`;
}

/**
 * Loads the real chat webview (built bundle + the extension's HTML with its CSP) into headless
 * Chromium, standing in for VS Code's webview host: `acquireVsCodeApi()` records what the page
 * posts, and `send()` delivers host messages the way VS Code does (a `message` event).
 */

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { makeNonce, renderHtml } from '../../src/panel/html';
import type { ToHost, ToWebview } from '../../src/shared/messages';
import { darkModern, lightModern } from './theme';

export const ROOT = join(__dirname, '..', '..', '..');
export const ARTIFACTS = join(ROOT, 'test-artifacts');
const MEDIA = join(ROOT, 'media');

/** Chromium to drive; Debian's package by default (Playwright's own downloads are not used). */
export const CHROMIUM = process.env.LSP_AGENT_CHROMIUM ?? '/usr/bin/chromium';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.ttf': 'font/ttf',
  '.map': 'application/json',
  '.html': 'text/html',
};

export interface Harness {
  browser: Browser;
  server: Server;
  origin: string;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install chromium) or set LSP_AGENT_CHROMIUM.`);
  }
  if (!existsSync(join(MEDIA, 'dist', 'webview.js'))) {
    throw new Error('media/dist/webview.js is missing: run "npm run build" first.');
  }
  const csps: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/index.html') {
      const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
      const html = renderHtml({
        cspSource: origin,
        nonce: makeNonce(),
        scriptUri: `${origin}/dist/webview.js`,
        styleUri: `${origin}/dist/webview.css`,
        codiconUri: `${origin}/dist/codicon.css`,
      });
      csps.push(html);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
      return;
    }
    if (url.pathname === '/favicon.ico') {
      // Chromium asks for one on its own; VS Code's webview host does not.
      res.writeHead(204);
      res.end();
      return;
    }
    const file = normalize(join(MEDIA, decodeURIComponent(url.pathname)));
    if (!file.startsWith(MEDIA) || !existsSync(file)) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  return {
    browser,
    server,
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      await browser.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface PanelPage {
  page: Page;
  /** Messages the page posted to the host, in order. */
  posted(): Promise<ToHost[]>;
  /** Deliver host → webview messages, then wait until the page has rendered them. */
  send(...messages: ToWebview[]): Promise<void>;
  /** Resolve once the page posted a message matching `predicate`. */
  waitForPost(predicate: (m: ToHost) => boolean, what: string): Promise<ToHost>;
  /** CSP violations and page errors seen so far. */
  problems: string[];
  screenshot(name: string): Promise<string>;
}

export async function openPanel(h: Harness, options: { theme?: 'dark' | 'light'; width?: number; height?: number } = {}): Promise<PanelPage> {
  const context = await h.browser.newContext({
    viewport: { width: options.width ?? 420, height: options.height ?? 820 },
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
  });
  const vars = options.theme === 'light' ? lightModern : darkModern;
  const bodyClass = options.theme === 'light' ? 'vscode-light' : 'vscode-dark';
  await page.addInitScript(
    ({ vars: v, bodyClass: cls }) => {
      const w = window as unknown as { __posted: unknown[]; __state: unknown; acquireVsCodeApi: () => unknown };
      w.__posted = [];
      w.__state = undefined;
      w.acquireVsCodeApi = () => ({
        postMessage: (m: unknown) => w.__posted.push(JSON.parse(JSON.stringify(m))),
        getState: () => w.__state,
        setState: (s: unknown) => {
          w.__state = s;
        },
      });
      // Runs in the page: report CSP violations where the test collects page errors.
      // eslint-disable-next-line no-console
      document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
      const apply = (): void => {
        for (const [k, val] of Object.entries(v)) document.documentElement.style.setProperty(k, val);
        document.body?.classList.add(cls);
      };
      if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', apply);
      else apply();
    },
    { vars, bodyClass },
  );
  await page.goto(`${h.origin}/index.html`);
  const posted = async (): Promise<ToHost[]> => page.evaluate(() => (window as unknown as { __posted: ToHost[] }).__posted);
  const waitForPost = async (predicate: (m: ToHost) => boolean, what: string): Promise<ToHost> => {
    for (let i = 0; i < 200; i += 1) {
      const found = (await posted()).find(predicate);
      if (found) return found;
      await page.waitForTimeout(25);
    }
    throw new Error(`the page never posted ${what}; it posted ${JSON.stringify(await posted())}`);
  };
  await waitForPost((m) => m.type === 'ready', 'ready');
  await page.evaluate(() => document.fonts.ready);
  return {
    page,
    posted,
    waitForPost,
    problems,
    send: async (...messages: ToWebview[]) => {
      await page.evaluate((msgs) => {
        for (const m of msgs) window.postMessage(m, '*');
      }, messages);
      // Two frames: one for the message events, one for the render they scheduled.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    },
    screenshot: async (name: string) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const path = join(ARTIFACTS, name);
      await page.screenshot({ path, animations: 'disabled' });
      return path;
    },
  };
}

/** The text of the first element matching `selector` ('' when it has none). */
export async function text(p: PanelPage, selector: string): Promise<string> {
  return (await p.page.locator(selector).first().textContent()) ?? '';
}

export function assertNoProblems(p: PanelPage): void {
  assert.deepEqual(p.problems, [], 'the page logged errors or CSP violations');
}

// Bundles the extension (dist/extension.js, CommonJS for the extension host) and the chat
// webview (media/dist/webview.js, an IIFE for the browser), and copies the webview's CSS and
// the codicon font next to it. Usage: node scripts/build.mjs [--watch] [--production]
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'info', absWorkingDir: root };

const extension = {
  ...common,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  external: ['vscode'],
};

const webview = {
  ...common,
  entryPoints: ['src/webview/main.ts'],
  outfile: 'media/dist/webview.js',
  platform: 'browser',
  format: 'iife',
  target: 'chrome114',
};

function copyAssets() {
  const out = join(root, 'media', 'dist');
  mkdirSync(out, { recursive: true });
  copyFileSync(join(root, 'media', 'webview.css'), join(out, 'webview.css'));
  const codicons = join(root, 'node_modules', '@vscode', 'codicons', 'dist');
  copyFileSync(join(codicons, 'codicon.css'), join(out, 'codicon.css'));
  copyFileSync(join(codicons, 'codicon.ttf'), join(out, 'codicon.ttf'));
}

copyAssets();
if (watch) {
  const contexts = await Promise.all([esbuild.context(extension), esbuild.context(webview)]);
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all([esbuild.build(extension), esbuild.build(webview)]);
}

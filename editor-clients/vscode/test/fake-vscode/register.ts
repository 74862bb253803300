/**
 * Import this first in a test: it makes `require('vscode')` load the fake API (the real module
 * exists only inside VS Code's extension host).
 */

import Module from 'node:module';

const fakePath = require.resolve('./index');
const mod = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const original = mod._resolveFilename;
mod._resolveFilename = function resolve(request: string, ...rest: unknown[]): string {
  if (request === 'vscode') return fakePath;
  return original.call(this, request, ...rest);
};

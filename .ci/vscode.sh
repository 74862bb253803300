#!/usr/bin/env bash
# VS Code extension (editor-clients/vscode): install what its build and tests need, build,
# type-check, lint, run its suites (through pytest, as the README does), and package the .vsix.
# Exits non-zero on any failure; skips nothing.
#
#   .ci/vscode.sh                 everything
#   .ci/vscode.sh --install-only  only the prerequisites (Chromium, npm ci)
#   .ci/vscode.sh --no-pytest     everything but the pytest suites (CI runs those in `make test`);
#                                 build, check and package the .vsix: no Chromium needed
#
# Chromium comes from Debian (Playwright's own browser downloads are not used); npm packages
# from the npm registry (package-lock.json).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${VENV:-.venv}"
EXT=editor-clients/vscode

need_node="the VS Code extension's build and tests need Node.js >= 20 with npm"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "error: $need_node; node or npm is not on PATH. Install Node.js 20 or newer" \
    "(https://nodejs.org, or your distribution's nodejs and npm packages if they are >= 20)" \
    "and run this again" >&2
  exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "error: $need_node; this node is $(node --version). Install Node.js 20 or newer" >&2
  exit 1
fi
node --version

# Chromium runs the chat view's tests; building and packaging the .vsix do not need it.
if [ "${1:-}" != "--no-pytest" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "error: the VS Code chat view's tests need Chromium at /usr/bin/chromium: install it" \
      "(sudo apt-get install chromium), or run make test as root to have it installed" >&2
    exit 1
  fi
fi
[ -x /usr/bin/chromium ] && /usr/bin/chromium --version 2>/dev/null || true

(cd "$EXT" && npm ci --no-audit --no-fund)

if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi

(cd "$EXT" && npm run build && npm run typecheck && npm run lint)

if [ ! -x "$VENV/bin/python" ]; then
  echo "error: $VENV/bin/python not found; run 'make test' (or .ci/run) first" >&2
  exit 1
fi
if [ "${1:-}" != "--no-pytest" ]; then
  "$VENV/bin/python" -m pytest tests/clients/vscode -v -p no:cacheprovider
fi

(cd "$EXT" && rm -f ./*.vsix && npx --no-install vsce package --no-dependencies)
vsix=$(ls "$EXT"/*.vsix)
echo "packaged $vsix: $(stat -c %s "$vsix") bytes"

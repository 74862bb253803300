#!/usr/bin/env bash
# VS Code extension (editor-clients/vscode): install what its build and tests need, build,
# type-check, lint, run its suites (through pytest, as the README does), and package the .vsix.
# Exits non-zero on any failure; skips nothing.
#
#   .ci/vscode.sh                 everything
#   .ci/vscode.sh --install-only  only the prerequisites (Chromium, npm ci)
#   .ci/vscode.sh --no-pytest     everything but the pytest suites (CI runs those in `make test`)
#
# Chromium comes from Debian (Playwright's own browser downloads are not used); npm packages
# from the npm registry (package-lock.json).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${VENV:-.venv}"
EXT=editor-clients/vscode

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "error: node and npm are required (Node.js >= 20)" >&2
  exit 1
fi
node --version

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "error: /usr/bin/chromium missing and not root: apt-get install chromium" >&2
    exit 1
  fi
fi
/usr/bin/chromium --version 2>/dev/null || true

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

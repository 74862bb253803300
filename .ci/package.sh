#!/usr/bin/env bash
# Packaging checks: build the wheel and sdist (python -m build), check them (twine check), and
# prove that a plain install works where a user would make it:
#   - the wheel in a fresh venv (no dev extra, no pytest): `lsp-agent --version` and the
#     offline demo to its end;
#   - the documented commands, `pipx install ./lsp-agent` and `uv tool install ./lsp-agent`,
#     from this checkout;
#   - the URL form the docs promise once the repository is published, with a git+file:// URL of
#     this checkout (what is committed, as a clone would have it).
# Leaves the wheel and sdist in dist/ (CI's build artifacts, with the .vsix from .ci/vscode.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
VENV="${VENV:-.venv}"
PY="$VENV/bin/python"
if [ ! -x "$PY" ]; then
  echo "error: $PY not found; run 'make .venv/.lsp-agent-installed' first" >&2
  exit 1
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1

rm -rf dist
"$PY" -m build --outdir dist . >/dev/null
ls -l dist
"$PY" -m twine check --strict dist/*

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "--- the wheel in a fresh venv"
python3 -m venv "$work/wheel-venv"
"$work/wheel-venv/bin/pip" install --quiet dist/*.whl
if "$work/wheel-venv/bin/python" -c 'import pytest' 2>/dev/null; then
  echo "error: pytest is installed in the fresh venv; the smoke test must run without it" >&2
  exit 1
fi
"$work/wheel-venv/bin/lsp-agent" --version
# The demo must pass on a plain install: no pytest, no API key, whatever the caller's env says.
env -u ANTHROPIC_API_KEY -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
  "$work/wheel-venv/bin/lsp-agent" demo --yes --offline --workdir "$work/demo" >"$work/demo.log" 2>&1 \
  || { cat "$work/demo.log"; echo "error: lsp-agent demo failed in the fresh venv" >&2; exit 1; }
tail -n 1 "$work/demo.log"

echo "--- the documented command: pipx install ./lsp-agent"
"$work/wheel-venv/bin/pip" install --quiet pipx
PIPX_HOME="$work/pipx" PIPX_BIN_DIR="$work/pipx-bin" PIPX_MAN_DIR="$work/pipx-man" \
  "$work/wheel-venv/bin/pipx" install --quiet "$ROOT"
"$work/pipx-bin/lsp-agent" --version

echo "--- the documented alternative: uv tool install ./lsp-agent"
"$work/wheel-venv/bin/pip" install --quiet uv
UV_TOOL_DIR="$work/uv-tools" UV_TOOL_BIN_DIR="$work/uv-bin" UV_CACHE_DIR="$work/uv-cache" \
  "$work/wheel-venv/bin/uv" tool install --quiet "$ROOT"
"$work/uv-bin/lsp-agent" --version

echo "--- the URL form: git+file:// of this checkout"
"$work/wheel-venv/bin/pip" install --quiet --no-deps --force-reinstall "git+file://$ROOT"
"$work/wheel-venv/bin/lsp-agent" --version
echo "packaging checks passed: $(ls dist | tr '\n' ' ')"

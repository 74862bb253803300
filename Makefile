# Two commands do all set-up on a fresh machine that has Python >= 3.11:
#   make demo   create .venv, install lsp-agent, watch it fix a bug offline
#   make test   create .venv, install lsp-agent, run the test suite (exactly what CI runs)
# Other targets: lint (what CI checks besides tests), ci (the whole CI script), bench, clean,
#   protocol (regenerate the lspAgent/* schema, TypeScript types and Lua table from the server).

# The first interpreter >= 3.11 on PATH; override with `make PYTHON=/path/to/python3.12 ...`.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3 python; do \
	command -v $$p >/dev/null 2>&1 && \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && \
	{ echo $$p; break; }; done)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.lsp-agent-installed
# The VS Code extension's tests need its npm packages and Chromium (installed with apt when run
# as root); `make test` installs them once, like the Python packages.
VSCODE_STAMP := editor-clients/vscode/node_modules/.lsp-agent-installed
# MCP servers nobody here wrote (the reference "everything" server from npm) for the
# interoperability tests; installed once from the lock file, like the extension's packages.
INTEROP_DIR := tests/mcp_servers/interop
INTEROP_STAMP := $(INTEROP_DIR)/node_modules/.lsp-agent-installed

# The test command; .ci/run calls `make test`, so CI and this target cannot drift apart.
PYTEST_ARGS ?=

.PHONY: demo test lint ci bench clean protocol

$(BIN)/python:
	@if [ -z "$(PYTHON)" ]; then \
		echo "error: no Python >= 3.11 found on PATH (set PYTHON=/path/to/python3.11)" >&2; \
		exit 1; fi
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

$(VSCODE_STAMP): editor-clients/vscode/package-lock.json
	.ci/vscode.sh --install-only
	@touch $(VSCODE_STAMP)

$(INTEROP_STAMP): $(INTEROP_DIR)/package-lock.json
	cd $(INTEROP_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $(INTEROP_STAMP)

demo: $(STAMP)
	$(BIN)/lsp-agent demo --yes --offline

test: $(STAMP) $(VSCODE_STAMP) $(INTEROP_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

ci:
	.ci/run

protocol: $(STAMP)
	$(BIN)/python -m lsp_agent.lsp.schema_gen

bench: $(STAMP)
	$(BIN)/python tools/bench_startup.py
	$(BIN)/python tools/bench_turn_overhead.py

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache

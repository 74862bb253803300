"""Generate the protocol's checked-in files from its single source.

``python -m lsp_agent.lsp.schema_gen`` (or ``make protocol``) writes, relative to the
repository root (``--root``, default the current directory):

* ``schema/schema.json`` and ``schema/meta.json``: the JSON Schema and the method table
  (:mod:`lsp_agent.lsp.schema`);
* ``editor-clients/vscode/src/shared/protocol.generated.ts``: the VS Code extension's types;
* ``editor-clients/neovim/lua/lsp_agent/protocol.lua``: the Neovim plugin's method table and
  LuaCATS annotations (:mod:`lsp_agent.lsp.codegen`).

``--check`` writes nothing and exits 1 naming every file that differs from what would be
generated (the test suite runs the same comparison). Reports go to stderr: this module lives in
the LSP door, whose stdout is the JSON-RPC wire in stdio mode.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from lsp_agent.lsp import codegen, schema

SCHEMA_JSON = Path("schema/schema.json")
META_JSON = Path("schema/meta.json")
TYPESCRIPT = Path("editor-clients/vscode/src/shared/protocol.generated.ts")
LUA = Path("editor-clients/neovim/lua/lsp_agent/protocol.lua")


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render() -> dict[Path, str]:
    """Every generated file's text by its path relative to the repository root."""
    doc = schema.json_schema()
    table = schema.meta()
    return {
        SCHEMA_JSON: _json(doc),
        META_JSON: _json(table),
        TYPESCRIPT: codegen.typescript(doc, table),
        LUA: codegen.lua(doc, table),
    }


def stale(root: Path) -> list[Path]:
    """The generated files under ``root`` that are missing or differ from :func:`render`."""
    out = []
    for rel, text in render().items():
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            out.append(rel)
    return out


def write(root: Path) -> list[Path]:
    """Write the files that changed; returns their paths (relative to ``root``)."""
    changed = []
    for rel, text in render().items():
        path = root / rel
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        changed.append(rel)
    return changed


def main(argv: Sequence[str] | None = None, *, report: TextIO | None = None) -> int:
    """Command line: generate (default) or ``--check``. Returns the exit code.

    ``report`` receives one line per stale or written file (default: stderr, never stdout).
    """
    out = sys.stderr if report is None else report
    parser = argparse.ArgumentParser(prog="python -m lsp_agent.lsp.schema_gen")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    parser.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args(argv)
    root: Path = args.root
    if not (root / "editor-clients").is_dir():
        parser.error(f"{root} is not the lsp-agent repository root (no editor-clients/)")
    if args.check:
        outdated = stale(root)
        for rel in outdated:
            out.write(f"stale: {rel} (run `make protocol`)\n")
        return 1 if outdated else 0
    for rel in write(root):
        out.write(f"wrote {rel}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The plugin's Lua unit specs (renderer, hunks, options, ...), each in its own headless Neovim."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import UNIT_SPECS, base_env, run_spec

SPECS = sorted(UNIT_SPECS.glob("*_spec.lua"))


def test_unit_specs_exist() -> None:
    assert len(SPECS) >= 3, f"expected the plugin's unit specs in {UNIT_SPECS}"


@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_unit_spec(nvim: Path, spec: Path, tmp_path: Path) -> None:
    run_spec(nvim, spec, env=base_env(tmp_path), cwd=tmp_path)

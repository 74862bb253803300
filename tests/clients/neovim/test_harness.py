"""The wrapper itself: a missing or old Neovim fails loudly; every Lua spec is wired in."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from .conftest import INTEGRATION_SPECS, find_nvim


def test_missing_nvim_fails_with_install_hint(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match=r"Neovim \(nvim\) not found: install"):
        find_nvim([str(tmp_path / "no-nvim-here"), None])


def test_old_nvim_fails(tmp_path: Path) -> None:
    fake = tmp_path / "nvim"
    fake.write_text("#!/bin/sh\necho 'NVIM v0.7.2'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(pytest.fail.Exception, match=r"is Neovim NVIM v0\.7\.2; install"):
        find_nvim([str(fake)])


def test_every_integration_spec_has_a_test() -> None:
    specs = {p.name.removesuffix("_spec.lua") for p in INTEGRATION_SPECS.glob("*_spec.lua")}
    here = Path(__file__).parent
    source = "\n".join(p.read_text() for p in sorted(here.glob("test_*.py")))
    wired = set(re.findall(r'run_integration\(\s*"(\w+)"', source))
    assert specs == wired

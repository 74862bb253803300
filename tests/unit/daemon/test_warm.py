"""A forked run recomputes what libraries took from the daemon's environment at import: each
case runs in a fresh interpreter that imports with one environment, switches ``os.environ`` to
another (as the daemon's child does) and reads the state back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, os, sys, tempfile
import pygit2
from pygit2 import option
from pygit2.enums import ConfigLevel, Option
from lsp_agent.daemon.warm import adopt_environment, freeze

tempfile.gettempdir()  # cached from the first environment, as the daemon's own calls do
freeze()
os.environ.update(json.loads(sys.argv[1]))
if sys.argv[2] == "adopt":
    adopt_environment()
print(json.dumps({
    "global": pygit2.settings.search_path[ConfigLevel.GLOBAL],
    "xdg": pygit2.settings.search_path[ConfigLevel.XDG],
    "home": option(Option.GET_HOMEDIR),
    "tmp": tempfile.gettempdir(),
}))
"""


def _probe(tmp_path: Path, *, adopt: bool) -> dict[str, str]:
    first, second = tmp_path / "first", tmp_path / "second"
    for base in (first, second):
        for sub in ("home", "config", "tmp"):
            (base / sub).mkdir(parents=True, exist_ok=True)

    def env_of(base: Path) -> dict[str, str]:
        return {
            "HOME": str(base / "home"),
            "XDG_CONFIG_HOME": str(base / "config"),
            "TMPDIR": str(base / "tmp"),
        }

    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(env_of(second)), "adopt" if adopt else "keep"],
        env={**os.environ, **env_of(first)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, str] = json.loads(done.stdout)
    return result


def test_a_child_takes_libgit2_paths_and_the_temp_dir_from_its_own_environment(
    tmp_path: Path,
) -> None:
    second = tmp_path / "second"
    assert _probe(tmp_path, adopt=True) == {
        "global": str(second / "home"),
        "xdg": str(second / "config" / "git"),
        "home": str(second / "home"),
        "tmp": str(second / "tmp"),
    }


def test_without_adopting_the_state_of_the_first_environment_stays(tmp_path: Path) -> None:
    """The case the reset exists for: the libraries do not follow ``os.environ`` by
    themselves."""
    first = tmp_path / "first"
    stale = _probe(tmp_path, adopt=False)
    assert (stale["global"], stale["home"], stale["tmp"]) == (
        str(first / "home"),
        str(first / "home"),
        str(first / "tmp"),
    )

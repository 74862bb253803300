"""The plugin against the real server in headless Neovim (see test_integration.py): the project
and its sessions: :checkhealth, Workspace trust and the project's memory, resuming after a
restart, written titles, rewinding (and its conflicts).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.testing.scenario import (
    ToolResultExpect,
    expecting,
    reply,
    scenario,
    tool_use,
)

from .conftest import RunIntegration, edit_app_version


def test_health(run_integration: RunIntegration) -> None:
    script = Path(sys.executable).parent / "lsp-agent"
    assert script.is_file(), f"the project is not installed in this venv (no {script})"
    run_integration(
        "health",
        scenario(),
        files={"main.py": "print('hi')\n"},
        env={"LSP_AGENT_TEST_SCRIPT": str(script)},
    )


def test_trust(run_integration: RunIntegration) -> None:
    run = run_integration("trust", scenario(), files={"a.py": "a = 1\n", "b.py": "b = 2\n"})
    # One server (trust changes live, never a restart): it started untrusted (no question on
    # file open) and was told each change with didChangeConfiguration.
    log = run.server_log_text()
    trusted = re.findall(
        r"initialization_options=\{'lspAgent': [^\n]*?'trusted': (True|False)", log
    )
    assert trusted == ["False"]


def test_trust_memory(run_integration: RunIntegration) -> None:
    marker = "PROJECT-MEMORY-TRUST-5d1e"
    run = run_integration(
        "trust_memory",
        scenario(
            reply("one", expect=expecting(last_user_contains="first prompt, untrusted")),
            reply("two", expect=expecting(last_user_contains="second prompt, trusted")),
            reply("three", expect=expecting(last_user_contains="third prompt, untrusted again")),
        ),
        files={"a.py": "a = 1\n", "CLAUDE.md": f"{marker}: answer briefly\n"},
    )
    seen = [marker in json.dumps(body) for body in run.scripted.requests]
    assert seen == [False, True, False]


def test_resume_after_restart(run_integration: RunIntegration) -> None:
    files = {"notes.txt": "pineapple\n"}
    run_integration(
        "resume_before",
        scenario(
            reply(tool_use("Read", {"file_path": "{{root}}/notes.txt"})),
            reply("The word is pineapple."),
        ),
        files=files,
    )
    # A new Neovim and a new server over the same data folder.
    run = run_integration(
        "resume",
        scenario(reply("It was pineapple.", expect=expecting(last_user_contains="which word"))),
        files=files,
    )
    sent = run.scripted.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert "pineapple" in json.dumps(sent[2])  # the Read result came back from the transcript


def test_written_title(run_integration: RunIntegration) -> None:
    asked = expecting(last_user_contains="please tidy up notes.txt")
    run = run_integration(
        "titles",
        scenario(
            reply("Tidied."),
            background={"title": [reply("Tidy the notes file", expect=asked)]},
        ),
        files={"notes.txt": "a, b, c\n"},
        env={BACKGROUND_ENV: "1"},
    )
    assert [e.background for e in run.scripted.exchanges].count("title") == 1


def test_rewind(run_integration: RunIntegration) -> None:
    ok = ToolResultExpect(is_error=False)
    run = run_integration(
        "rewind",
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/app.py"}, id="toolu_read"),
                tool_use("Read", {"file_path": "{{root}}/lib.py"}, id="toolu_read_lib"),
                edit_app_version(),
                tool_use(
                    "Edit",
                    {"file_path": "{{root}}/lib.py", "old_string": "X = 1", "new_string": "X = 2"},
                    id="toolu_edit_lib",
                ),
                tool_use(
                    "Bash",
                    {"command": "rm gone.txt && echo new > made.txt", "description": "Tidy"},
                    id="toolu_bash",
                ),
                expect=expecting(last_user_contains="change things"),
            ),
            reply("Changed.", expect=expecting(tool_results=[ok, ok, ok, ok, ok])),
            # After the rewind the model sees only the new prompt.
            reply("Fresh.", expect=expecting(last_user_contains="again")),
        ),
        files={
            "app.py": "VERSION = 1\n\n\nNAME = 'app'\n",
            "lib.py": "X = 1\n",
            "gone.txt": "bye\n",
        },
    )
    # Both edited files and the removed one are back; the line the user typed stays.
    assert (run.root / "lib.py").read_text() == "X = 1\n"
    assert (run.root / "gone.txt").read_text() == "bye\n"
    assert not (run.root / "made.txt").exists()
    last = run.scripted.requests[-1]["messages"]
    assert len(last) == 1, last


def test_rewind_conflict(run_integration: RunIntegration) -> None:
    ok = ToolResultExpect(is_error=False)
    run = run_integration(
        "rewind_conflict",
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/app.py"}, id="toolu_read"),
                edit_app_version(),
            ),
            reply("Changed.", expect=expecting(tool_results=[ok, ok])),
        ),
        files={"app.py": "VERSION = 1\n\n\nNAME = 'app'\n"},
    )
    # The rewind asked the user in the editor, not the model: one turn of two requests.
    assert len(run.scripted.requests) == 2

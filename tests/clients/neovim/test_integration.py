"""The plugin against the real server in headless Neovim, the scripted model playing Claude:
turns, approvals and fixes (edit review, cancel, chat, compaction, stale edits, "always allow",
Bash, :AgentAsk and :AgentFix, the memory commands, verification with ruff, the offline trial,
retries). The project and its sessions, and MCP servers, have their own files
(test_integration_project.py, test_integration_mcp.py).

Each test writes a project and a scenario, then runs one Lua spec from
``editor-clients/neovim/tests/integration`` (the spec holds the editor-side steps and asserts);
afterwards the scenario must be fully consumed and the Python side checks what only it can see
(the server's log, files on disk).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lsp_agent.testing.scenario import (
    ToolResultExpect,
    error,
    expecting,
    reply,
    scenario,
    tool_use,
)

from .conftest import RunIntegration, edit_app_version

CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
CALC_OLD = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b"
CALC_NEW = (
    'def add(a, b):\n    """Add a and b."""\n    return a + b\n\n\n'
    'def sub(a, b):\n    """Subtract b from a."""\n    return a - b'
)


def test_edit_review(run_integration: RunIntegration) -> None:
    run = run_integration(
        "edit_review",
        scenario(
            reply(
                "I will document the functions.",
                tool_use("Read", {"file_path": "{{root}}/calc.py"}, id="toolu_read"),
                tool_use(
                    "Edit",
                    {
                        "file_path": "{{root}}/calc.py",
                        "old_string": CALC_OLD,
                        "new_string": CALC_NEW,
                    },
                    id="toolu_edit",
                ),
                expect=expecting(last_user_contains="please fix both functions"),
            ),
            reply(
                "Done: one hunk applied.",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False, contains="# unsaved note"),
                        ToolResultExpect(is_error=False),
                    ]
                ),
            ),
        ),
        files={"calc.py": CALC},
    )
    # The file on disk was not written (the edit went to the unsaved buffer).
    assert (run.root / "calc.py").read_text() == CALC
    # The diagnostics bridge notification reached the server.
    assert "Notification 'lspAgent/diagnostics/didChange' received" in run.server_log_text()


def test_cancel(run_integration: RunIntegration) -> None:
    run_integration(
        "cancel",
        scenario(
            reply(
                "Thinking about it for a very long while, word after word after word.",
                expect=expecting(last_user_contains="first prompt"),
                chunk_chars=10,
                stall_after_events=5,
            ),
            reply(
                tool_use("Read", {"file_path": "{{root}}/notes.py"}, id="toolu_read"),
                tool_use(
                    "Edit",
                    {
                        "file_path": "{{root}}/notes.py",
                        "old_string": "x = 1",
                        "new_string": "x = 2",
                    },
                    id="toolu_edit",
                ),
                expect=expecting(last_user_contains="second prompt"),
            ),
            reply(
                "Fresh start.",
                expect=expecting(
                    last_user_contains="third prompt",
                ),
            ),
        ),
        files={"notes.py": "x = 1\n"},
    )


def test_memory_commands(run_integration: RunIntegration) -> None:
    run = run_integration(
        "memory_commands",
        scenario(),  # the model is never asked
        files={"a.py": "a = 1\n", "CLAUDE.md": "team notes\n", "CLAUDE.local.md": "my notes\n"},
    )
    assert run.scripted.requests == []
    assert (run.root / "CLAUDE.md").read_text() == "team notes\n"


SHOP = "def price(price):\n    return price * 0.9\n\n\ndef total():\n    return 1\n"


def test_ask_fix(run_integration: RunIntegration) -> None:
    run_integration(
        "ask_fix",
        scenario(
            reply(
                "It applies a discount.",
                expect=expecting(last_user_contains="UNSAVED_MARKER"),
            ),
            reply(
                "It multiplies the price.",
                expect=expecting(last_user_contains="(lines 2-2)"),
            ),
            reply(
                "Define tax_rate first.",
                expect=expecting(last_user_contains="undefined name tax_rate (fakecheck)"),
            ),
        ),
        files={"shop.py": SHOP},
    )


TAXED = "def total(prices):\n    subtotal = sum(prices)\n    return subtotal * (1 + tax_rate)\n"


def test_fix_action(run_integration: RunIntegration) -> None:
    run = run_integration(
        "fix_action",
        scenario(
            # :AgentFix: the server's prompt names the bridged diagnostic exactly.
            reply(
                "I will add the missing parameter.",
                tool_use("Read", {"file_path": "{{root}}/shop.py"}, id="toolu_read"),
                tool_use(
                    "Edit",
                    {
                        "file_path": "{{root}}/shop.py",
                        "old_string": "def total(prices):",
                        "new_string": "def total(prices, tax_rate=0.2):",
                    },
                    id="toolu_edit",
                ),
                expect=expecting(
                    last_user_contains=(
                        "Fix this problem in shop.py:\n"
                        "- error at shop.py:3:28 [fakecheck F821]: undefined name tax_rate"
                    )
                ),
            ),
            reply(
                "Added a default tax rate.",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=False),
                    ]
                ),
            ),
            # vim.lsp.buf.code_action(): a new session.
            reply(
                "The subtotal is fine as it is.",
                expect=expecting(
                    last_user_contains=(
                        "Fix this problem in shop.py:\n"
                        "- warning at shop.py:2:5 [fakecheck W1]: subtotal is never rounded"
                    )
                ),
            ),
            # :AgentFix again, in that session.
            reply(
                "Still fine.",
                expect=expecting(last_user_contains="subtotal is never rounded"),
            ),
        ),
        files={"shop.py": TAXED},
    )
    assert (run.root / "shop.py").read_text() == TAXED  # edited in the buffer only
    log = run.server_log_text()
    assert "Notification 'lspAgent/diagnostics/didChange' received" in log


def test_bash_save_and_reload(run_integration: RunIntegration) -> None:
    run = run_integration(
        "bash",
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/app.py"}, id="toolu_read"),
                edit_app_version(),
                tool_use(
                    "Bash",
                    {
                        "command": "grep -q 'VERSION = 2' app.py && echo regenerated > data.txt"
                        " && echo from-bash > dirty.txt",
                        "description": "Regenerate data",
                    },
                    id="toolu_bash",
                ),
                expect=expecting(last_user_contains="update and regenerate"),
            ),
            reply(
                "Regenerated.",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=False),
                    ]
                ),
            ),
        ),
        files={"app.py": "VERSION = 1\n", "data.txt": "old data\n", "dirty.txt": "on disk\n"},
    )
    assert (run.root / "app.py").read_text() == "VERSION = 2\n"
    assert (run.root / "data.txt").read_text() == "regenerated\n"
    assert (run.root / "dirty.txt").read_text() == "from-bash\n"


def test_chat(run_integration: RunIntegration) -> None:
    run_integration(
        "chat",
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/notes.md"}, id="toolu_read"),
                expect=expecting(last_user_contains="- one"),
            ),
            reply(
                "**Summary:** the notes list\n\n- one\n- two",
                expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
                chunk_chars=3,
            ),
        ),
        files={"notes.md": "# Notes\n\n- one\n- two\n"},
    )


def test_compact(run_integration: RunIntegration) -> None:
    run_integration(
        "compact",
        scenario(
            reply("It lists two items.", expect=expecting(last_user_contains="notes.md")),
            reply(
                "GOAL: describe notes.md\nPENDING: nothing",
                expect=expecting(last_user_contains="keep the list"),
            ),
            reply("Still two items.", expect=expecting(last_user_contains="and now?")),
        ),
        files={"notes.md": "# Notes\n\n- one\n- two\n"},
    )


def test_stale_edit_is_refused(run_integration: RunIntegration) -> None:
    run = run_integration(
        "stale",
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/conf.py"}, id="toolu_read"),
                tool_use(
                    "Edit",
                    {
                        "file_path": "{{root}}/conf.py",
                        "old_string": "value = 1",
                        "new_string": "value = 2",
                    },
                    id="toolu_edit",
                ),
                expect=expecting(last_user_contains="bump the value"),
            ),
            reply(
                "The buffer changed under me; I will read it again next time.",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=True),
                    ]
                ),
            ),
        ),
        files={"conf.py": "value = 1\n"},
    )
    assert (run.root / "conf.py").read_text() == "value = 1\n"


TOUCH = {"command": "touch made.txt", "description": "Create made.txt"}


def test_always_allow_in_project(run_integration: RunIntegration) -> None:
    run = run_integration(
        "always",
        scenario(
            reply(
                "Creating it.",
                tool_use("Bash", TOUCH, id="toolu_touch1"),
                expect=expecting(last_user_contains="create made.txt twice"),
            ),
            # The same call again: the rule remembered by "always allow" covers it.
            reply(
                tool_use("Bash", TOUCH, id="toolu_touch2"),
                expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
            ),
            reply(
                "Touched it twice.",
                expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
            ),
        ),
        files={"notes.py": "x = 1\n"},
    )
    settings = run.root / ".claude" / "settings.local.json"
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Bash(touch made.txt)"]}}
    assert (run.root / "made.txt").is_file()
    # The server logged which rule and source decided each call.
    log = run.server_log_text()
    assert re.search(r"permission ask for Bash .*no rule matched; default for this mode", log), log[
        -2000:
    ]
    assert re.search(r"permission allow for Bash .*; rule Bash\(touch made\.txt\)\)", log), log[
        -2000:
    ]


RUFF_CALC = (
    '"""Tiny calculator helpers."""\n\nimport os\n\n\ndef average(values):\n'
    "    total = 0\n    for v in values:\n        total += v\n"
    "    return total / len(values) - 1\n"
)


def test_verify_with_ruff(run_integration: RunIntegration) -> None:
    """ruff attached as users attach it; the agent's edit keeps its one diagnostic: the
    verdict is known at once and the model is told so (not "unknown" after a wait)."""
    run_integration(
        "verify_ruff",
        scenario(
            reply(tool_use("Read", {"file_path": "{{root}}/calc.py"}, id="r1")),
            reply(
                tool_use(
                    "Edit",
                    {
                        "file_path": "{{root}}/calc.py",
                        "old_string": "    return total / len(values) - 1",
                        "new_string": "    return total / len(values)",
                    },
                    id="e1",
                )
            ),
            reply(
                "Fixed the average.",
                expect=expecting(
                    last_user_contains="checked by editor): no new problems, 1 pre-existing"
                ),
            ),
        ),
        files={"calc.py": RUFF_CALC},
        env={"LSP_AGENT_TEST_RUFF": str(Path(sys.executable).parent / "ruff")},
    )


OFFLINE_CALC = "".join(
    [
        '"""Tiny calculator helpers."""\n',
        "\n",
        "\n",
        "def add(a, b):\n",
        "    return a + b\n",
        "\n",
        "\n",
        "def sub(a, b):\n",
        "    return a - b\n",
        "\n",
        "\n",
        "def mul(a, b):\n",
        "    return a * b\n",
        "# end\n",
    ]
)


def test_offline_trial(run_integration: RunIntegration, tmp_path: Path) -> None:
    """`lsp-agent serve --offline` needs no key: the scripted endpoint of the harness is not
    used (the environment points at a closed port with no key), the bundled trial model is."""
    from .conftest import server_command

    command = [*server_command(tmp_path / "server.log"), "--offline"]
    run = run_integration(
        "offline",
        scenario(),
        files={"calc.py": OFFLINE_CALC},
        env={
            "LSP_AGENT_TEST_CMD": json.dumps(command),
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "ANTHROPIC_API_KEY": "",
        },
    )
    assert run.scripted.server.requests == []  # the harness's scripted model saw nothing
    assert (run.root / "made.txt").exists()
    assert not (run.root / "rejected.txt").exists()


def test_retry(run_integration: RunIntegration) -> None:
    run_integration(
        "retry",
        scenario(
            error(529, "Overloaded", type="overloaded_error", retry_after_s=3),
            reply("Answered after the retry.", expect=expecting(last_user_contains="hello")),
        ),
    )

"""The ``lsp-agent run -p`` scenarios whose transcripts are kept as golden files.

Each case is a project (files, settings), the command-line arguments and the scripted model's
steps. Its transcript is what a user or a caller can observe: the exit code, stdout (parsed
when it is JSON), stderr, every request the model received (the messages; the first case also
keeps the system prompt and the tool definitions) and the project's files afterwards.
Every reply carries explicit token usage, so usage figures do not depend on path lengths.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.testing.scenario import (
    Scenario,
    ScriptedUsage,
    Step,
    ToolResultExpect,
    error,
    expecting,
    scenario,
    text,
    thinking,
    tool_use,
)
from lsp_agent.testing.scenario import reply as _reply
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.conftest import CALC, cli_env, run_process
from tests.golden.normalise import normaliser

USAGE = ScriptedUsage(input_tokens=100, output_tokens=10)


def reply(*content: Any, **options: Any) -> Step:
    """A scripted reply with fixed usage."""
    return _reply(*content, usage=USAGE, **options)


@dataclass(frozen=True, kw_only=True)
class CliCase:
    """One ``run -p`` scenario."""

    name: str
    args: list[str]
    steps: Callable[[], Scenario]
    files: dict[str, str] = field(default_factory=lambda: {"calc.py": CALC})
    settings: dict[str, Any] | None = None
    full_requests: bool = False
    """Keep the system prompt and tool definitions of the requests (once is enough)."""


def _edit(old: str, new: str, id: str) -> Any:
    return tool_use(
        "Edit", {"file_path": "{{cwd}}/calc.py", "old_string": old, "new_string": new}, id=id
    )


def _read(id: str = "toolu_read") -> Any:
    return tool_use("Read", {"file_path": "{{cwd}}/calc.py"}, id=id)


def _hook_script(tmp: Path) -> str:
    """A PreToolUse hook that blocks every Bash call (exit code 2, reason on stderr)."""
    hook = tmp / "block_bash.py"
    hook.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        "if event['tool_name'] == 'Bash':\n"
        "    print('no shell today', file=sys.stderr)\n"
        "    sys.exit(2)\n"
    )
    return f"{sys.executable} {hook}"


def _diagnostics_config(tmp: Path) -> str:
    ruff = Path(sys.executable).with_name("ruff")
    config = tmp / "diagnostics.json"
    config.write_text(
        json.dumps(
            {
                # Generous: the first check includes starting ruff (never a timing assertion).
                "verify": {"timeoutMs": 30_000},
                "servers": [
                    {
                        "name": "ruff",
                        "command": [str(ruff), "server"],
                        "filetypes": ["*.py"],
                        "languageId": "python",
                    }
                ],
            }
        )
    )
    return str(config)


STREAM = ["--output-format", "stream-json"]

CASES: list[CliCase] = [
    CliCase(
        name="text_answer",
        args=["run", "-p", "say hello", *STREAM],
        steps=lambda: scenario(reply(thinking("The user greets me."), text("Hello."))),
        full_requests=True,
    ),
    CliCase(
        name="read_edit_bypass",
        args=["run", "-p", "fix add", "--permission-mode", "bypassPermissions", *STREAM],
        steps=lambda: scenario(
            reply(text("Let me read it."), _read()),
            reply(_edit("return a - b", "return a + b", "toolu_edit")),
            reply("Fixed: add() subtracted."),
        ),
    ),
    CliCase(
        name="read_edit_text_output",
        args=["run", "-p", "fix add", "--permission-mode", "bypassPermissions"],
        steps=lambda: scenario(
            reply(_read()),
            reply(_edit("return a - b", "return a + b", "toolu_edit")),
            reply("Fixed."),
        ),
    ),
    CliCase(
        name="glob_grep_write_accept_edits",
        args=["run", "-p", "write notes", "--permission-mode", "acceptEdits", *STREAM],
        steps=lambda: scenario(
            reply(
                tool_use("Glob", {"pattern": "*.py"}, id="toolu_glob"),
                tool_use("Grep", {"pattern": "return", "output_mode": "content"}, id="toolu_grep"),
            ),
            reply(
                tool_use(
                    "Write",
                    {"file_path": "{{cwd}}/notes.md", "content": "# Notes\n\nadd subtracts.\n"},
                    id="toolu_write",
                )
            ),
            reply("Wrote notes.md."),
        ),
    ),
    CliCase(
        name="bash_runs_and_a_failure_skips_siblings",
        args=["run", "-p", "run things", "--permission-mode", "bypassPermissions", *STREAM],
        steps=lambda: scenario(
            reply(tool_use("Bash", {"command": "echo hello && printf 'x\\n' > out.txt"}, id="b1")),
            reply(
                tool_use("Bash", {"command": "echo failing >&2; exit 3"}, id="b2"),
                tool_use("Read", {"file_path": "{{cwd}}/out.txt"}, id="r2"),
            ),
            reply("One command failed."),
        ),
    ),
    CliCase(
        name="default_mode_denies_edit",
        args=["run", "-p", "fix add", "--permission-mode", "default", *STREAM],
        steps=lambda: scenario(
            reply(_read()),
            reply(_edit("a - b", "a + b", "toolu_edit")),
            reply("I could not edit."),
        ),
    ),
    CliCase(
        name="default_mode_denies_edit_json_output",
        args=["run", "-p", "fix add", "--output-format", "json"],
        steps=lambda: scenario(
            reply(_read()),
            reply(_edit("a - b", "a + b", "toolu_edit")),
            reply("I could not edit."),
        ),
    ),
    CliCase(
        name="plan_mode_denies_bash",
        args=["run", "-p", "touch a file", "--permission-mode", "plan", *STREAM],
        steps=lambda: scenario(
            reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_bash")),
            reply("Planned."),
        ),
    ),
    CliCase(
        name="settings_deny_rule_beats_bypass",
        args=["run", "-p", "fix add", "--permission-mode", "bypassPermissions", *STREAM],
        settings={"permissions": {"deny": ["Edit"]}},
        steps=lambda: scenario(
            reply(_edit("a - b", "a + b", "toolu_edit")),
            reply("Denied by the project."),
        ),
    ),
    CliCase(
        name="pre_tool_use_hook_blocks_bash",
        args=["run", "-p", "list files", "--permission-mode", "bypassPermissions", *STREAM],
        settings={"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "HOOK"}]}]}},
        steps=lambda: scenario(
            reply(tool_use("Bash", {"command": "ls"}, id="toolu_bash")),
            reply("Blocked."),
        ),
    ),
    CliCase(
        name="invalid_tool_calls",
        args=["run", "-p", "go", "--permission-mode", "bypassPermissions", *STREAM],
        steps=lambda: scenario(
            reply(
                tool_use("Read", {}, id="toolu_missing_input"),
                tool_use("Nope", {"x": 1}, id="toolu_unknown"),
                tool_use("Read", {"file_path": "relative.py"}, id="toolu_relative"),
            ),
            reply("Sorry."),
        ),
    ),
    CliCase(
        name="max_turns",
        args=["run", "-p", "fix add", "--max-turns", "1", *STREAM],
        steps=lambda: scenario(reply(_read())),
    ),
    CliCase(
        name="max_turns_text_output",
        args=["run", "-p", "fix add", "--max-turns", "1"],
        steps=lambda: scenario(reply(_read())),
    ),
    CliCase(
        name="api_error",
        args=["run", "-p", "hi", *STREAM],
        steps=lambda: scenario(
            error(400, "messages.0: invalid content", type="invalid_request_error")
        ),
    ),
    CliCase(
        name="api_overloaded_text_output",
        args=["run", "-p", "hi"],
        steps=lambda: scenario(error(529, "Overloaded", type="overloaded_error")),
    ),
    CliCase(
        name="verification_reports_unused_import",
        args=[
            "run",
            "-p",
            "add an import of os",
            "--permission-mode",
            "acceptEdits",
            "--diagnostics",
            "DIAGNOSTICS",
            *STREAM,
        ],
        steps=lambda: scenario(
            reply(_read()),
            reply(_edit("def add(a, b):", "import os\n\n\ndef add(a, b):", "toolu_import")),
            reply(
                "I added an import ruff says is unused.",
                expect=expecting(
                    last_user_contains="[Ruff F401]",
                    tool_results=[ToolResultExpect(is_error=False)],
                ),
            ),
        ),
    ),
]


def _args(case: CliCase, tmp: Path) -> list[str]:
    if "DIAGNOSTICS" in case.args:
        return [_diagnostics_config(tmp) if a == "DIAGNOSTICS" else a for a in case.args]
    return list(case.args)


def _settings(case: CliCase, tmp: Path) -> str | None:
    if case.settings is None:
        return None
    return json.dumps(case.settings).replace('"HOOK"', json.dumps(_hook_script(tmp)))


def _stdout(raw: str) -> Any:
    """One JSON document (``json``), JSON lines (``stream-json``) or text lines."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        pass
    lines = [line for line in raw.splitlines() if line.strip()]
    try:
        return [json.loads(line) for line in lines]
    except json.JSONDecodeError:
        return raw.splitlines()


def _lanes(stdout: Any) -> tuple[Any, dict[str, list[Any]]]:
    """stream-json events with each tool call's ``tool_progress`` moved to its own lane.

    Tools that may run together (read-only ones) report progress concurrently, so the
    interleaving of two calls' progress is scheduling; each call's own sequence, and every
    other event's place, is behaviour."""
    if not isinstance(stdout, list) or not all(isinstance(e, dict) for e in stdout):
        return stdout, {}
    lanes: dict[str, list[Any]] = {}
    main = []
    for event in stdout:
        if event.get("type") == "tool_progress":
            lanes.setdefault(str(event.get("tool_use_id")), []).append(event)
        else:
            main.append(event)
    return main, lanes


def _request(body: dict[str, Any], *, full: bool) -> dict[str, Any]:
    kept = {k: v for k, v in body.items() if k not in ("system", "tools")}
    if full:
        kept["system"] = body.get("system")
        kept["tools"] = body.get("tools")
    else:
        kept["tool_names"] = [t["name"] for t in body.get("tools", [])]
    return kept


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".ruff_cache" not in p.parts
    }


def run_case(case: CliCase, tmp: Path) -> dict[str, Any]:
    """Run ``case`` in a fresh project under ``tmp``; returns its normalised transcript."""
    root = tmp / "proj"
    root.mkdir()
    home = tmp / "home"
    home.mkdir()
    # A background daemon of the user's must not take the run over (its socket lives here).
    runtime = tmp / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    for rel, content in case.files.items():
        (root / rel).write_text(content)
    if (settings := _settings(case, tmp)) is not None:
        (root / ".claude").mkdir()
        (root / ".claude" / "settings.json").write_text(settings)
    args = _args(case, tmp)
    server = ScriptedServerThread(scenario=case.steps(), variables={"cwd": str(root)})
    base_url = server.start()
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    try:
        proc = run_process(
            [sys.executable, "-m", "lsp_agent", *args],
            cwd=root,
            env=cli_env(base_url, HOME=str(home), PATH=path, XDG_RUNTIME_DIR=str(runtime)),
        )
    finally:
        server.stop()
    norm = normaliser(root=root, tmp=tmp, model_url=base_url)
    stdout, progress = _lanes(_stdout(proc.stdout))
    transcript = {
        "args": args,
        "exit_code": proc.returncode,
        "stdout": stdout,
        "tool_progress": progress,
        "stderr": proc.stderr.splitlines(),
        "model_requests": [_request(b, full=case.full_requests) for b in server.requests],
        # Expectations the requests failed and steps never asked for: behaviour, not noise.
        "model_failures": server.failures,
        "model_unconsumed_steps": server.unconsumed(),
        "files": _files(root),
    }
    return dict(norm.data(transcript))

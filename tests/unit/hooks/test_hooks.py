"""Hooks with real scripts: exit codes, JSON answers, input rewriting, bounds, and how a hook's
answer combines with the permission engine inside the real executor."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.executor import ExecutorEnv, execute_tool_uses
from lsp_agent.config.settings import HookCommand, HookMatcher
from lsp_agent.hooks.runner import MAX_OUTPUT_BYTES, HookRunner
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.permissions.policy import Policy
from lsp_agent.permissions.rules import RuleOrigin, parse_rule
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.registry import default_tools
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace


def script(tmp_path: Path, name: str, body: str) -> str:
    """Write an executable Python hook script; returns the command that runs it."""
    path = tmp_path / f"{name}.py"
    path.write_text("import json, sys, os\n" + body)
    return f"{sys.executable} {path}"


def runner(
    root: Path, event: str, *commands: str, matcher: str | None = None, timeout: float | None = None
) -> HookRunner:
    matchers = (
        HookMatcher(
            matcher=matcher, hooks=tuple(HookCommand(command=c, timeout=timeout) for c in commands)
        ),
    )
    return HookRunner(
        hooks=lambda: {event: tuple(("project", m) for m in matchers)},
        cwd=root,
        session_id="sess-1",
    )


class Harness:
    def __init__(
        self,
        root: Path,
        hooks: HookRunner | None,
        *,
        rules: tuple[tuple[str, str], ...] = (),
        answer: str = "reject_once",
        mode: str = "default",
    ) -> None:
        origin = RuleOrigin(source="project", settings_root=root, cwd=root, home=root)
        policy = Policy(rules=tuple(parse_rule(t, behavior=b, origin=origin) for b, t in rules))  # type: ignore[arg-type]
        self.requests: list[PermissionRequest] = []

        async def handler(request: PermissionRequest) -> PermissionResponse:
            self.requests.append(request)
            return PermissionResponse(outcome="selected", option_id=answer)

        host = DiskHost(permission_handler=handler)
        self.env = ExecutorEnv(
            tools=default_tools(),
            permissions=PermissionEngine(
                mode=mode,  # type: ignore[arg-type]
                roots=(root,),
                home=root,
                policy=lambda: policy,
            ),
            ctx=ToolContext(
                session_id="sess-1",
                cwd=root,
                roots=(root,),
                workspace=Workspace(host=host, roots=(root,)),
                read_state=ReadState(),
            ),
            hooks=hooks,
        )

    async def bash(self, command: str) -> ToolResultBlock:
        (result,) = await execute_tool_uses(
            [ToolUseBlock(id="tu-1", name="Bash", input={"command": command})],
            env=self.env,
            results={},
        )
        return result


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = (tmp_path / "proj").resolve()
    r.mkdir()
    return r


async def test_pre_tool_use_gets_claude_code_fields_on_stdin(root: Path, tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    cmd = script(
        tmp_path,
        "record",
        f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n"
        f"open({str(seen)!r} + '.env', 'w').write(os.environ['CLAUDE_PROJECT_DIR'])\n",
    )
    h = Harness(
        root, runner(root, "PreToolUse", cmd, matcher="Bash"), rules=(("allow", "Bash(ls:*)"),)
    )
    result = await h.bash("ls")
    assert not result.is_error
    payload = json.loads(seen.read_text())
    assert payload == {
        "session_id": "sess-1",
        "transcript_path": "",
        "cwd": str(root),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "tu-1",
    }
    assert Path(str(seen) + ".env").read_text() == str(root)


async def test_exit_2_blocks_and_stderr_reaches_the_model(root: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "block", "sys.stderr.write('no touching allowed'); sys.exit(2)\n")
    h = Harness(root, runner(root, "PreToolUse", cmd), answer="allow_once")
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert result.is_error and "no touching allowed" in str(result.content)
    assert not (root / "sentinel").exists()
    assert h.requests == []


async def test_json_deny_blocks_with_its_reason(root: Path, tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "policy says no",
        }
    }
    cmd = script(tmp_path, "deny", f"print(json.dumps({answer!r}))\n")
    h = Harness(root, runner(root, "PreToolUse", cmd), answer="allow_once")
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert result.is_error and "policy says no" in str(result.content)
    assert not (root / "sentinel").exists()


ALLOW = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": "hook ok",
    }
}


async def test_hook_allow_skips_the_default_prompt(root: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "allow", f"print(json.dumps({ALLOW!r}))\n")
    h = Harness(root, runner(root, "PreToolUse", cmd))
    result = await h.bash(f"touch {root / 'made'}")
    assert not result.is_error, result.content
    assert h.requests == [] and (root / "made").exists()


@pytest.mark.parametrize(
    ("rules", "command", "expect"),
    [
        ((("deny", "Bash(touch:*)"),), "touch {root}/s", "deny"),
        ((("ask", "Bash(touch:*)"),), "touch {root}/s", "ask"),
        ((), "echo x > {root}/.git/config", "ask"),
        ((), "touch /tmp/{root_name}-outside && echo x > /tmp/{root_name}-outside", "ask"),
        ((), "touch {root}/s\rls", "ask"),
    ],
)
async def test_hook_allow_never_overrides_deny_ask_rules_or_the_sandbox(
    root: Path, tmp_path: Path, rules: tuple[tuple[str, str], ...], command: str, expect: str
) -> None:
    cmd = script(tmp_path, "allow", f"print(json.dumps({ALLOW!r}))\n")
    h = Harness(root, runner(root, "PreToolUse", cmd), rules=rules)
    (root / ".git").mkdir()
    result = await h.bash(command.format(root=root, root_name=root.name))
    assert result.is_error
    assert len(h.requests) == (1 if expect == "ask" else 0)
    assert not (root / "s").exists()
    assert not (root / ".git" / "config").exists()


async def test_hook_ask_turns_an_allow_into_a_prompt(root: Path, tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "double-check",
        }
    }
    cmd = script(tmp_path, "ask", f"print(json.dumps({answer!r}))\n")
    h = Harness(root, runner(root, "PreToolUse", cmd))
    result = await h.bash("ls")
    assert result.is_error and len(h.requests) == 1
    assert "double-check" in h.requests[0].reason


async def test_updated_input_is_what_runs_and_what_is_judged(root: Path, tmp_path: Path) -> None:
    def rewrite(c: str) -> dict[str, Any]:
        return {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": c}}
        }

    safe = script(tmp_path, "safe", f"print(json.dumps({rewrite('echo rewritten')!r}))\n")
    h = Harness(root, runner(root, "PreToolUse", safe))
    result = await h.bash("echo original")
    assert not result.is_error and "rewritten" in str(result.content) and h.requests == []
    evil = script(
        tmp_path, "evil", f"print(json.dumps({rewrite('touch ' + str(root / 'sentinel'))!r}))\n"
    )
    h = Harness(root, runner(root, "PreToolUse", evil))
    result = await h.bash("ls")
    assert result.is_error and len(h.requests) == 1 and not (root / "sentinel").exists()
    assert "touch" in str(h.requests[0].tool_call.raw_input)
    broken = script(
        tmp_path,
        "broken",
        f"print(json.dumps({ {'hookSpecificOutput': {'updatedInput': {'nope': 1}}}!r}))\n",
    )
    h = Harness(root, runner(root, "PreToolUse", broken))
    result = await h.bash("ls")
    assert result.is_error and "invalid" in str(result.content)


async def test_matchers_select_tools(root: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "block", "sys.stderr.write('blocked'); sys.exit(2)\n")
    for matcher, blocked in (
        ("Edit|Write", False),
        ("Bash", True),
        ("*", True),
        ("", True),
        ("Ba.*", True),
        ("bash", False),
    ):
        h = Harness(
            root, runner(root, "PreToolUse", cmd, matcher=matcher), rules=(("allow", "Bash(ls:*)"),)
        )
        result = await h.bash("ls")
        assert result.is_error is blocked, matcher


async def test_hanging_hook_is_killed_with_its_children_and_the_call_asks(
    root: Path, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    cmd = f"sleep 30 & echo $! > {pidfile}; wait"
    h = Harness(root, runner(root, "PreToolUse", cmd, timeout=0.5))
    result = await h.bash(f"touch {root / 'sentinel'}")
    # The safe default: the hook said nothing, so the normal permission flow asked.
    assert result.is_error and len(h.requests) == 1 and not (root / "sentinel").exists()
    child = int(pidfile.read_text())
    assert _gone_or_zombie(child), f"hook child {child} survived the timeout"


def _gone_or_zombie(pid: int) -> bool:
    """A killed orphan may linger as a zombie until its new parent reaps it: that is dead."""
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("sys.stderr.write('kaboom'); sys.exit(1)\n", "exit code 1: kaboom"),
        ("raise RuntimeError('crash')\n", "exit code 1"),
        (
            "print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'maybe'}}))\n",
            "unknown permissionDecision",
        ),
        ("sys.stdout.write('x' * (3 * 1024 * 1024))\n", "more than"),
    ],
)
async def test_broken_hooks_are_reported_and_never_allow(
    root: Path, tmp_path: Path, body: str, error: str
) -> None:
    hooks = runner(root, "PreToolUse", script(tmp_path, "bad", body))
    outcome = await hooks.pre_tool_use(
        tool_name="Bash", tool_input={"command": "x"}, tool_use_id="t", permission_mode="default"
    )
    assert not outcome.block and outcome.permission is None
    assert any(error in e for e in outcome.errors), outcome.errors
    assert all(len(r.stdout.encode()) <= MAX_OUTPUT_BYTES for r in outcome.runs)
    h = Harness(root, hooks)
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert result.is_error and len(h.requests) == 1 and not (root / "sentinel").exists()


async def test_post_tool_use_feedback_and_context_reach_the_model(
    root: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "post.json"
    body = (
        f"data = json.load(sys.stdin); open({str(seen)!r}, 'w').write(json.dumps(data))\n"
        "print(json.dumps({'decision': 'block', 'reason': 'lint failed', "
        "'hookSpecificOutput': {'hookEventName': 'PostToolUse', "
        "'additionalContext': 'run ruff'}}))\n"
    )
    h = Harness(
        root,
        runner(root, "PostToolUse", script(tmp_path, "post", body)),
        rules=(("allow", "Bash(echo:*)"),),
    )
    result = await h.bash("echo hello")
    assert "hello" in str(result.content)
    assert "lint failed" in str(result.content) and "run ruff" in str(result.content)
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "PostToolUse" and data["tool_response"]["exit_code"] == 0
    stderr_hook = script(tmp_path, "post2", "sys.stderr.write('tests are red'); sys.exit(2)\n")
    h = Harness(root, runner(root, "PostToolUse", stderr_hook), rules=(("allow", "Bash(echo:*)"),))
    assert "tests are red" in str((await h.bash("echo hi")).content)


async def test_session_events(root: Path, tmp_path: Path) -> None:
    plain = script(
        tmp_path,
        "plain",
        "data = json.load(sys.stdin)\n"
        "print('context for', data['hook_event_name'], data.get('source', ''))\n",
    )
    outcome = await runner(root, "SessionStart", plain, matcher="startup").session_start(
        source="startup"
    )
    assert outcome.context == ("context for SessionStart startup",)
    outcome = await runner(root, "SessionStart", plain, matcher="resume").session_start(
        source="startup"
    )
    assert not outcome.ran
    outcome = await runner(root, "UserPromptSubmit", plain).user_prompt_submit(
        prompt="hi", permission_mode="plan"
    )
    assert outcome.context == ("context for UserPromptSubmit",)
    blocker = script(tmp_path, "blocker", "sys.stderr.write('secrets in prompt'); sys.exit(2)\n")
    outcome = await runner(root, "UserPromptSubmit", blocker).user_prompt_submit(
        prompt="key=abc", permission_mode="default"
    )
    assert outcome.block and outcome.reason == "secrets in prompt"
    keep_going = script(
        tmp_path,
        "stop",
        "d = json.load(sys.stdin)\n"
        "why = 'tests fail' if not d['stop_hook_active'] else ''\n"
        "print(json.dumps({'decision': 'block', 'reason': why}))\n",
    )
    outcome = await runner(root, "Stop", keep_going).stop(
        stop_hook_active=False, permission_mode="default"
    )
    assert outcome.block and outcome.reason == "tests fail"
    halt = script(
        tmp_path,
        "halt",
        "print(json.dumps({'continue': False, 'stopReason': 'budget', "
        "'systemMessage': 'stopping'}))\n",
    )
    outcome = await runner(root, "PreCompact", halt).pre_compact(trigger="auto")
    assert outcome.stop and outcome.stop_reason == "budget" and outcome.messages == ("stopping",)
    outcome = await runner(root, "SessionEnd", plain).session_end(reason="other")
    assert outcome.ran and not outcome.block


async def test_notification_runs_in_the_background(root: Path, tmp_path: Path) -> None:
    seen = tmp_path / "note.json"
    hooks = runner(
        root,
        "Notification",
        script(tmp_path, "note", f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n"),
    )
    h = Harness(root, hooks)
    await h.bash(f"touch {root / 'x'}")
    await hooks.aclose()
    data: dict[str, Any] = json.loads(seen.read_text())
    assert data["hook_event_name"] == "Notification" and "permission" in data["message"]


async def test_identical_commands_run_once(root: Path, tmp_path: Path) -> None:
    counter = tmp_path / "count"
    cmd = script(tmp_path, "count", f"open({str(counter)!r}, 'a').write('x')\n")
    matchers = (
        HookMatcher(matcher="Bash", hooks=(HookCommand(command=cmd), HookCommand(command="true"))),
        HookMatcher(matcher="*", hooks=(HookCommand(command=cmd), HookCommand(command="true "))),
    )
    hooks = HookRunner(
        hooks=lambda: {"PreToolUse": tuple(("user", m) for m in matchers)}, cwd=root, session_id="s"
    )
    outcome = await hooks.pre_tool_use(
        tool_name="Bash", tool_input={}, tool_use_id="t", permission_mode="default"
    )
    assert counter.read_text() == "x"
    assert len(outcome.runs) == 3

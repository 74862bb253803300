"""Bash: output, exit codes, timeouts and cancellation that leave no process behind."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
from pathlib import Path

import pytest

from lsp_agent.protocol.events import ContentItem
from lsp_agent.tools.base import ToolError
from lsp_agent.tools.bash import MAX_OUTPUT_CHARS, MAX_TIMEOUT_MS, BashTool

from .conftest import Env

BASH = BashTool()


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (zombies count as dead: they run nothing and are
    reaped by whoever adopted them)."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and Path("/proc/self").exists():
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state not in {"Z", "X"}
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def assert_all_gone(pids: list[int]) -> None:
    """Wait (bounded) until none of ``pids`` runs; SIGKILL delivery is asynchronous."""
    for _ in range(200):
        if not any(running(pid) for pid in pids):
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"still running: {[pid for pid in pids if running(pid)]}")


def pids_in(text: str) -> list[int]:
    return [int(match) for match in re.findall(r"pid=(\d+)", text)]


async def test_output_and_exit_code_zero(env: Env) -> None:
    out = await env.run(BASH, {"command": "echo hello; echo err >&2", "description": "Greet"})
    assert out.text == "hello\nerr"
    assert not out.is_error
    assert out.raw_output == {"exit_code": 0, "timed_out": False, "truncated": False}
    assert out.content == (ContentItem.model_validate({"content": {"text": "hello\nerr"}}),)


async def test_runs_in_cwd_with_non_interactive_env(env: Env) -> None:
    out = await env.run(BASH, {"command": 'pwd; echo "$GIT_TERMINAL_PROMPT $PAGER"'})
    assert out.text == f"{env.root}\n0 cat"


async def test_non_zero_exit_is_an_error_result(env: Env) -> None:
    out = await env.run(BASH, {"command": "echo partial; exit 3"})
    assert out.is_error
    assert out.text == "partial\nExit code 3"
    assert out.raw_output is not None and out.raw_output["exit_code"] == 3


async def test_no_output(env: Env) -> None:
    out = await env.run(BASH, {"command": "true"})
    assert out.text == "(no output)"


async def test_stdin_is_closed(env: Env) -> None:
    # With an open stdin, cat would wait forever; the timeout is the test's safety net.
    out = await env.run(BASH, {"command": "cat; echo done", "timeout": 60_000})
    assert out.text == "done"
    assert out.raw_output is not None and not out.raw_output["timed_out"]


async def test_timeout_kills_the_whole_process_group(env: Env) -> None:
    command = "sleep 100 & echo pid=$!; sleep 100 & echo pid=$!; echo pid=$$; wait"
    out = await env.run(BASH, {"command": command, "timeout": 500})
    assert out.is_error
    assert "Command timed out after 500 ms" in out.text
    assert out.raw_output == {"exit_code": None, "timed_out": True, "truncated": False}
    pids = pids_in(out.text)
    assert len(pids) == 3
    await assert_all_gone(pids)


async def test_cancel_kills_the_whole_process_group(env: Env) -> None:
    command = "sleep 100 & echo pid=$!; echo pid=$$; sleep 100"
    task = asyncio.create_task(env.run(BASH, {"command": command}))
    for _ in range(400):
        if len(pids_in("".join(env.progress))) == 2:
            break
        await asyncio.sleep(0.025)
    pids = pids_in("".join(env.progress))
    assert len(pids) == 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_all_gone(pids)


async def test_background_processes_do_not_outlive_the_command(env: Env) -> None:
    out = await env.run(BASH, {"command": "sleep 100 & echo pid=$!"})
    pids = pids_in(out.text)
    assert len(pids) == 1
    assert "background processes started by the command were stopped" in out.text
    await assert_all_gone(pids)


async def test_output_is_capped_keeping_head_and_tail(env: Env) -> None:
    command = "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST"
    out = await env.run(BASH, {"command": command})
    assert out.text.startswith("FIRST\n")
    assert out.text.endswith("LAST")
    assert "characters of output truncated" in out.text
    assert len(out.text) < MAX_OUTPUT_CHARS + 200
    assert out.raw_output is not None and out.raw_output["truncated"] is True


async def test_progress_receives_streamed_lines(env: Env) -> None:
    out = await env.run(BASH, {"command": "echo one; echo two; printf three"})
    assert "".join(env.progress) == "one\ntwo\nthree"
    assert out.text == "one\ntwo\nthree"


async def test_progress_streams_before_the_command_ends(env: Env) -> None:
    # The command waits until the first line was delivered to progress (a file flag set by
    # the test), so it can only finish if streaming happens while it runs.
    flag = env.root / "seen"
    command = (
        f"echo ready; for i in $(seq 400); do [ -e '{flag}' ] && echo seen && exit 0; "
        "sleep 0.025; done; exit 9"
    )

    def on_progress(text: str) -> None:
        env.progress.append(text)
        if "ready" in text:
            flag.touch()

    env.ctx = dataclasses.replace(env.ctx, progress=on_progress)
    out = await env.run(BASH, {"command": command})
    assert out.text == "ready\nseen"


async def test_timeout_above_maximum_is_clamped_with_a_note(env: Env) -> None:
    out = await env.run(BASH, {"command": "echo ok", "timeout": MAX_TIMEOUT_MS + 1})
    assert out.text.startswith("ok\n")
    assert f"used {MAX_TIMEOUT_MS} ms" in out.text


async def test_crlf_output_is_normalised(env: Env) -> None:
    out = await env.run(BASH, {"command": "printf 'a\\r\\nb\\r\\n'"})
    assert out.text == "a\nb"


async def test_invalid_utf8_output_is_replaced(env: Env) -> None:
    out = await env.run(BASH, {"command": "printf 'caf\\351\\n'"})
    assert out.text == "caf\ufffd"


async def test_empty_command_is_refused(env: Env) -> None:
    with pytest.raises(ToolError, match="empty"):
        await env.run(BASH, {"command": "   "})


async def test_prepared_shows_the_full_command(env: Env) -> None:
    command = "echo one\necho two"
    prepared = await env.prepare(BASH, {"command": command})
    assert prepared.title == "echo one…"
    assert prepared.content == (ContentItem.model_validate({"content": {"text": command}}),)


def test_flags() -> None:
    assert BASH.kind == "execute"
    assert not BASH.read_only and not BASH.concurrency_safe
    assert BASH.reads_disk and BASH.writes_disk
    assert set(BASH.spec().input_schema["properties"]) == {"command", "timeout", "description"}


async def test_process_escaping_the_group_cannot_hang_the_call(env: Env) -> None:
    # setsid leaves the process group but keeps the output pipe open; the call must still end.
    out = await env.run(BASH, {"command": "setsid sleep 30 & echo pid=$!", "timeout": 60_000})
    (pid,) = pids_in(out.text)
    try:
        assert not out.is_error
        assert out.raw_output is not None and not out.raw_output["timed_out"]
    finally:
        os.kill(pid, 9)

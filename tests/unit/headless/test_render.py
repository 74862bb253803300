"""The three output formats of ``lsp-agent run``: what goes to stdout and stderr."""

from __future__ import annotations

import asyncio
import io
import json
import os
from typing import Any, TextIO, cast

import pytest

from lsp_agent.headless.exit_codes import classify
from lsp_agent.headless.render import (
    init_event,
    make_renderer,
    message_event,
    result_event,
)
from lsp_agent.headless.runner import _Output


def result(*, stop: str = "end_turn", error: str | None = None, text: str = "All done.") -> dict:
    return result_event(
        outcome=classify(stop_reason=stop, error=error, interrupted=False, max_turns=1),
        result=text,
        session_id="s1",
        num_turns=2,
        duration_ms=12,
        duration_api_ms=5,
        usage={"input_tokens": 10, "output_tokens": 3},
        stop_reason=stop,
        permission_denials=[],
    )


def feed(fmt: str, *, verbose: bool = False, res: dict | None = None) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    renderer = make_renderer(fmt, out=out, err=err, verbose=verbose)
    renderer.init(
        init_event(
            session_id="s1",
            cwd="/p",
            tools=["Read"],
            model="m",
            permission_mode="default",
            api_key_source="none",
            version="0.1.0",
        )
    )
    renderer.message(
        message_event(
            message={"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
            session_id="s1",
        )
    )
    renderer.progress(
        {
            "type": "tool_progress",
            "tool_use_id": "t1",
            "tool_name": "Read",
            "status": "completed",
            "title": "Read a.py",
        }
    )
    renderer.result(res if res is not None else result())
    return out.getvalue(), err.getvalue()


def test_text_prints_only_the_final_answer() -> None:
    out, err = feed("text")
    assert out == "All done.\n"
    assert err == ""


def test_text_verbose_shows_progress_on_stderr() -> None:
    out, err = feed("text", verbose=True)
    assert out == "All done.\n"
    assert err == "[tool] Read a.py … completed\n"


def test_progress_lines_remember_titles() -> None:
    err = io.StringIO()
    renderer = make_renderer("text", out=io.StringIO(), err=err, verbose=True)
    for event in (
        {"tool_use_id": "t", "tool_name": "Bash", "status": "pending", "title": "Bash"},
        {"tool_use_id": "t", "tool_name": "Bash", "title": "pytest -q"},
        {"tool_use_id": "t", "tool_name": "Bash", "status": "in_progress"},
        {"tool_use_id": "t", "tool_name": "Bash", "output": "..."},
        {"tool_use_id": "t", "tool_name": "Bash", "status": "failed"},
    ):
        renderer.progress({"type": "tool_progress", **event})
    assert err.getvalue() == "[tool] pytest -q … in_progress\n[tool] pytest -q … failed\n"


def test_text_error_goes_to_stderr() -> None:
    out, err = feed("text", res=result(stop="max_turn_requests", text=""))
    assert out == ""
    assert err == "lsp-agent: error: reached the maximum number of turns (1)\n"


def test_json_prints_one_result_object() -> None:
    out, err = feed("json")
    obj = json.loads(out)
    assert obj["type"] == "result"
    assert obj["subtype"] == "success"
    assert obj["is_error"] is False
    assert obj["result"] == "All done."
    assert obj["num_turns"] == 2
    assert obj["session_id"] == "s1"
    assert obj["usage"] == {"input_tokens": 10, "output_tokens": 3}
    assert obj["stop_reason"] == "end_turn"
    assert "errors" not in obj
    assert err == ""


def test_json_error_result_lists_errors() -> None:
    out, _ = feed("json", res=result(error="the endpoint is unreachable"))
    obj = json.loads(out)
    assert (obj["subtype"], obj["is_error"]) == ("error_during_execution", True)
    assert obj["errors"] == ["the endpoint is unreachable"]


def test_stream_json_is_one_object_per_line_in_order() -> None:
    out, err = feed("stream-json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(e["type"], e.get("subtype")) for e in lines] == [
        ("system", "init"),
        ("assistant", None),
        ("tool_progress", None),
        ("result", "success"),
    ]
    init = lines[0]
    assert init["tools"] == ["Read"] and init["permissionMode"] == "default"
    assert lines[1]["message"]["content"][0]["text"] == "hi"
    assert all(len(line) > 2 and "\n" not in line for line in out.splitlines())
    assert err == ""


def test_message_event_rejects_other_roles() -> None:
    with pytest.raises(ValueError, match="role"):
        message_event(message={"role": "system", "content": []}, session_id="s")


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown output format"):
        make_renderer("xml", out=io.StringIO(), err=io.StringIO(), verbose=False)


class Flushes(io.StringIO):
    """A stdout that records what each flush made visible (the text up to that flush), and can
    be told to fail its flushes as a pipe whose reader went away does."""

    def __init__(self) -> None:
        super().__init__()
        self.visible: list[str] = []
        self.broken = False

    def flush(self) -> None:
        if self.broken:
            raise BrokenPipeError("the reader went away")
        self.visible.append(self.getvalue())


def progress(n: int) -> dict:
    return {"type": "tool_progress", "tool_use_id": f"t{n}", "status": "in_progress"}


def test_stream_json_flushes_a_burst_of_lines_once_when_the_loop_steps() -> None:
    out = Flushes()
    renderer = make_renderer("stream-json", out=out, err=io.StringIO(), verbose=False)
    seen: list[list[str]] = []

    async def run() -> None:
        for n in range(3):
            renderer.progress(progress(n))
        seen.append(list(out.visible))  # nothing flushed inside the burst
        await asyncio.sleep(0)
        seen.append(list(out.visible))
        renderer.progress(progress(3))
        renderer.result(result())  # the last line is flushed at once
        seen.append(list(out.visible))
        await asyncio.sleep(0)

    asyncio.run(run())
    assert seen[0] == []
    assert [len(v.splitlines()) for v in seen[1]] == [3]
    assert [len(v.splitlines()) for v in seen[2]] == [3, 5]
    assert out.visible[-1] == out.getvalue()
    assert json.loads(out.getvalue().splitlines()[-1])["type"] == "result"


class CountedPipe(io.FileIO):
    """The write end of a real pipe that counts its system calls (``write``)."""

    writes = 0

    def write(self, data: Any) -> int:
        self.writes += 1
        return super().write(data)


@pytest.mark.parametrize("wrapped", [False, True], ids=["stream", "run output"])
def test_stream_json_writes_a_burst_once_even_on_an_unbuffered_stdout(wrapped: bool) -> None:
    # PYTHONUNBUFFERED gives a write-through stdout over the raw descriptor: without the
    # renderer's care every line is its own system call. ``run -p`` hands the renderer its
    # output wrapper, which must not hide the stream.
    read_end, write_end = os.pipe()
    raw = CountedPipe(write_end, "w")
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # type: ignore[type-var]
    given = cast(TextIO, _Output(out)) if wrapped else out
    renderer = make_renderer("stream-json", out=given, err=io.StringIO(), verbose=False)

    async def run() -> None:
        for n in range(3):
            renderer.progress(progress(n))
        await asyncio.sleep(0)

    try:
        asyncio.run(run())
        assert raw.writes == 1
        lines = os.read(read_end, 65536).decode().splitlines()
        assert [json.loads(line)["tool_use_id"] for line in lines] == ["t0", "t1", "t2"]
        renderer.result(result())  # flushed at once, as before
        assert json.loads(os.read(read_end, 65536))["type"] == "result"
    finally:
        out.close()
        os.close(read_end)


def test_stream_json_leaves_an_in_memory_write_through_stream_as_it_is() -> None:
    # A test's captured stdout is such a stream: text left in its buffer would be missing
    # from what the capture reads.
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    make_renderer("stream-json", out=out, err=io.StringIO(), verbose=False)
    assert out.write_through


def test_stream_json_without_an_event_loop_flushes_every_line() -> None:
    out = Flushes()
    renderer = make_renderer("stream-json", out=out, err=io.StringIO(), verbose=False)
    renderer.progress(progress(0))
    renderer.progress(progress(1))
    assert [len(v.splitlines()) for v in out.visible] == [1, 2]


def test_stream_json_raises_a_failed_deferred_flush_at_the_next_line() -> None:
    out = Flushes()
    renderer = make_renderer("stream-json", out=out, err=io.StringIO(), verbose=False)

    async def run() -> None:
        out.broken = True
        renderer.progress(progress(0))
        await asyncio.sleep(0)  # the deferred flush fails here, inside the loop's callback
        with pytest.raises(BrokenPipeError):
            renderer.progress(progress(1))

    asyncio.run(run())

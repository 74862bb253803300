"""``python -m lsp_agent.testing`` as a subprocess, talked to by AnthropicModel."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import lsp_agent
from lsp_agent.model.types import ResponseDone
from tests.unit.model.conftest import MakeModel, collect, simple_request

PROJECT_ROOT = str(Path(lsp_agent.__file__).resolve().parent.parent)

SCENARIO = {
    "name": "two_turns",
    "steps": [
        {
            "expect": {"tools_include": ["Read"]},
            "response": {
                "content": [
                    {"type": "tool_use", "name": "Read", "input": {"file_path": "{{cwd}}/a.py"}}
                ]
            },
        },
        {"response": {"content": [{"type": "text", "text": "done"}]}, "note": "final answer"},
    ],
}


async def _start(*args: str) -> asyncio.subprocess.Process:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PROJECT_ROOT, env.get("PYTHONPATH")]))
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lsp_agent.testing",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def _wait_for_file(path: Path, proc: asyncio.subprocess.Process) -> str:
    async with asyncio.timeout(20):
        while not path.exists():
            assert proc.returncode is None, "the scripted server exited early"
            await asyncio.sleep(0.02)
    return path.read_text(encoding="utf-8")


async def _terminate(proc: asyncio.subprocess.Process) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGTERM)
    async with asyncio.timeout(20):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_port_file_mode_plays_the_script_and_exits_clean(
    tmp_path: Path, make_model: MakeModel
) -> None:
    scenario_file = tmp_path / "two_turns.json"
    scenario_file.write_text(json.dumps(SCENARIO), encoding="utf-8")
    port_file = tmp_path / "port"
    proc = await _start(
        "--scenario",
        str(scenario_file),
        "--port",
        "0",
        "--port-file",
        str(port_file),
        "--var",
        "cwd=/work/space",
    )
    try:
        port = int(await _wait_for_file(port_file, proc))
        model = make_model(f"http://127.0.0.1:{port}")
        first = (await collect(model, simple_request()))[-1]
        assert isinstance(first, ResponseDone)
        assert first.response.message().tool_uses()[0].input == {"file_path": "/work/space/a.py"}
        second = (await collect(model, simple_request()))[-1]
        assert isinstance(second, ResponseDone)
        await model.aclose()
    finally:
        code, out, err = await _terminate(proc)
    assert code == 0, err
    assert out == ""
    assert "2/2 steps consumed, 0 failures" in err


async def test_without_port_file_prints_the_port_and_fails_on_unconsumed_steps(
    tmp_path: Path, make_model: MakeModel
) -> None:
    scenario_file = tmp_path / "two_turns.json"
    scenario_file.write_text(json.dumps(SCENARIO), encoding="utf-8")
    proc = await _start("--scenario", str(scenario_file))
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(20):
            line = await proc.stdout.readline()
        port = int(line)
        model = make_model(f"http://127.0.0.1:{port}")
        await collect(model, simple_request())
        await model.aclose()
    finally:
        code, out, err = await _terminate(proc)
    assert code == 1
    assert out == ""  # the port was printed once, and nothing else
    assert "1/2 steps consumed" in err
    assert "step 1 was not consumed (final answer)" in err


async def test_bad_scenario_exits_with_a_clear_message(tmp_path: Path) -> None:
    proc = await _start("--scenario", str(tmp_path / "nope.json"))
    async with asyncio.timeout(20):
        out, err = await proc.communicate()
    assert proc.returncode == 2
    assert out == b""
    assert b"no such scenario file" in err

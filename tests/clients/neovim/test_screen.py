"""What the user SEES: real Neovim in a pseudo-terminal, its output read by a VT100 emulator.

The integration specs check the plugin's state; these tests check the screen. Neovim runs with
a terminal UI (not ``--headless``) in a pty, the plugin starts the real server against the
scripted model, and the bytes Neovim writes are fed to ``pyte``. The prompt is sent from the
init file once the client is up. While the model works the user sits on the command line, where
Neovim does not repaint the windows after a server message by itself: the review float and the
streamed answer show there only through the plugin's forced redraws, with no key press or
``:redraw``.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyte
import pytest

from lsp_agent.testing.scenario import (
    Scenario,
    ToolResultExpect,
    expecting,
    reply,
    scenario,
    tool_use,
)
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

from .conftest import PLUGIN, base_env, server_command

COLUMNS, ROWS = 100, 30
DEADLINE_S = 60.0
"""Bound on waiting for one screen state (s): stops a hung run; never a timing assertion."""

CALC = "def add(a, b):\n    return a + b\n"
CALC_OLD = "def add(a, b):\n    return a + b"
CALC_NEW = 'def add(a, b):\n    """Add a and b."""\n    return a + b'
ANSWER = "Documented add: one docstring."

INIT = """
vim.opt.runtimepath:prepend(vim.env.LSP_AGENT_PLUGIN)
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.cmd('runtime! plugin/lsp_agent.lua')
require('lsp_agent').setup({
  cmd = vim.json.decode(vim.env.LSP_AGENT_TEST_CMD),
  trust = { default = true },
})
vim.cmd.edit(vim.env.LSP_AGENT_TEST_ROOT .. '/calc.py')
-- The prompt goes out from a timer once the client is ready: no key reaches Neovim.
local timer = vim.uv.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local client = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
  if client and client.initialized and not timer:is_closing() then
    timer:stop()
    timer:close()
    vim.cmd('AgentChat ' .. vim.env.LSP_AGENT_TEST_PROMPT)
  end
end))
"""


class Screen:
    """Neovim in a pty, its output kept on a ``pyte`` screen of COLUMNS x ROWS cells."""

    def __init__(self, *, fd: int, proc: subprocess.Popen[bytes]) -> None:
        self.fd = fd
        self.proc = proc
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)

    def pump(self, timeout_s: float) -> None:
        """Feed what Neovim wrote within ``timeout_s`` (s) to the emulator."""
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if ready:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b""
            self.stream.feed(data)

    def rows(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.rows())

    def wait(self, what: str, check: Callable[[list[str]], bool]) -> list[str]:
        """Pump until ``check(rows)`` holds; fails with the screen after DEADLINE_S."""
        end = time.monotonic() + DEADLINE_S
        while time.monotonic() < end:
            if check(self.rows()):
                return self.rows()
            if self.proc.poll() is not None:
                break
            self.pump(0.2)
        pytest.fail(f"the screen never showed {what}:\n{self.text()}")

    def send(self, keys: bytes) -> None:
        os.write(self.fd, keys)


@pytest.fixture
def screen(nvim: Path, tmp_path: Path) -> Iterator[Callable[..., Screen]]:
    started: list[tuple[Screen, ScriptedServerThread]] = []

    def start(steps: Scenario, prompt: str) -> Screen:
        root = tmp_path / "project"
        (root / ".git").mkdir(parents=True)
        (root / "calc.py").write_text(CALC)
        init = tmp_path / "init.lua"
        init.write_text(INIT)
        scripted = ScriptedServerThread(scenario=steps, variables={"root": str(root)})
        scripted.__enter__()
        env = scripted_env(scripted.base_url, base_env(tmp_path))
        env.update(
            TERM="xterm-256color",
            LSP_AGENT_PLUGIN=str(PLUGIN),
            LSP_AGENT_TEST_ROOT=str(root),
            LSP_AGENT_TEST_CMD=json.dumps(server_command(tmp_path / "server.log")),
            LSP_AGENT_TEST_PROMPT=prompt,
        )
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        proc = subprocess.Popen(
            [str(nvim), "--clean", "-n", "-u", str(init)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=root,
            start_new_session=True,
        )
        os.close(slave)
        view = Screen(fd=master, proc=proc)
        started.append((view, scripted))
        return view

    yield start
    for view, scripted in started:
        if view.proc.poll() is None:
            os.killpg(view.proc.pid, signal.SIGTERM)
            try:
                view.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(view.proc.pid, signal.SIGKILL)
                view.proc.wait()
        os.close(view.fd)
        scripted.__exit__(None, None, None)


def test_review_float_and_streamed_answer_show_without_a_key(
    screen: Callable[..., Screen],
) -> None:
    view = screen(
        scenario(
            reply(
                "I will document add.",
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
                delay_ms=2000,
            ),
            reply(
                ANSWER,
                delay_ms=2000,
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=False),
                    ]
                ),
            ),
        ),
        "document add",
    )
    view.wait("the prompt in the chat", lambda rows: any("document add" in row for row in rows))
    # The user starts typing a command while the model thinks. On the command line Neovim does
    # not repaint the windows after a server message by itself: only the plugin's forced
    # redraw can show what arrives meanwhile.
    view.send(b":")
    view.wait("the command line", lambda rows: rows[-1].startswith(":"))
    rows = view.wait(
        "the review float with the proposed docstring",
        lambda rows: any('"""Add a and b."""' in row for row in rows),
    )
    assert any("lsp-agent: permission" in row for row in rows), "\n".join(rows)
    assert any("permission(s) pending" in row for row in rows), "\n".join(rows)
    assert not any(ANSWER in row for row in rows), "the answer came before the approval"

    view.send(b"\x1b")  # leave the command line; the review float has the focus
    view.wait("the command line closed", lambda rows: not rows[-1].startswith(":"))
    view.send(b"a")  # allow once
    view.wait(
        "the accepted edit in calc.py",
        lambda rows: any('"""Add a and b."""' in row.split("│")[0] for row in rows),
    )

    # On the command line again while the answer is on its way.
    view.send(b":")
    view.wait("the command line", lambda rows: rows[-1].startswith(":"))
    view.wait("the streamed answer", lambda rows: any(ANSWER in row for row in rows))
    # The winbar shows the finished turn: no longer running, nothing pending.
    view.wait(
        "the finished state in the winbar",
        lambda rows: any(
            "agent default" in row and "running" not in row and "pending" not in row for row in rows
        ),
    )


def test_long_tool_output_wraps_under_its_text(screen: Callable[..., Screen]) -> None:
    view = screen(
        scenario(
            reply(
                "Trying.",
                tool_use(
                    "Edit",
                    {
                        "file_path": "{{root}}/calc.py",
                        "old_string": CALC_OLD,
                        "new_string": CALC_NEW,
                    },
                    id="toolu_edit",
                ),
            ),
            reply(ANSWER),
        ),
        "document add",
    )
    view.wait("the review float", lambda rows: any("lsp-agent: permission" in row for row in rows))
    view.send(b"a")
    rows = view.wait("the streamed answer", lambda rows: any(ANSWER in row for row in rows))
    chat = [row.split("│", 1)[1] if "│" in row else "" for row in rows]
    first = next(i for i, row in enumerate(chat) if "│ File has not been read" in row)
    text_column = chat[first].index("File")
    following = chat[first + 1]
    # The tool output is longer than the chat window: its next screen row starts in the text's
    # column, not at the window's edge or under the gutter.
    assert following.strip(), "\n".join(rows)
    assert len(following) - len(following.lstrip(" ")) == text_column, "\n".join(rows)

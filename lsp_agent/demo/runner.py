"""``lsp-agent demo``: the agent fixes a real bug in a bundled project, through the LSP door.

Steps: copy the bundled project (``lsp_agent/demo/project``, package data) to a fresh
directory; start ``lsp-agent serve`` as a subprocess and drive it as an editor would
(:mod:`lsp_agent.demo.editor`); open the buggy file and type an unsaved comment into it; ask the
agent to fix the failing tests; answer its permission prompts; show the transcript and the
final diff; save the editor's buffers; run the project's tests for real. The exit code is 0
only when the tests pass (and, offline, the scripted run went exactly as written).

Model: Claude when ``ANTHROPIC_API_KEY`` is set (and ``--offline`` is not), else the bundled
scenario (``lsp_agent/demo/scenario.json``) played by the scripted Messages-API server on
127.0.0.1 in a thread of this process.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import difflib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from lsp_agent import __version__
from lsp_agent.headless.exit_codes import ExitCode
from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.store.paths import DATA_DIR_ENV

if TYPE_CHECKING:
    from lsp_agent.demo.transcript import Transcript
    from lsp_agent.testing.thread import ScriptedServerThread

PROMPT = "The tests fail; find the bug and fix it."
BUGGY_FILE = "inventory/money.py"
UNSAVED_COMMENT = (
    "# Prices are integer cents everywhere (unsaved edit made in the demo's editor buffer).\n"
)
OFFLINE_NOTICE = "offline: using the bundled scripted model (set ANTHROPIC_API_KEY to use Claude)"
SCENARIO_RESOURCE = "scenario.json"
TEST_COMMAND = ("python", "-m", "unittest")
"""How the demo runs the bundled project's tests: the standard library's runner, so a plain
install of lsp-agent (no pytest) runs the demo to the end."""

_INIT_TIMEOUT_S = 60.0
_OFFLINE_PROMPT_TIMEOUT_S = 300.0
_CLAUDE_PROMPT_TIMEOUT_S = 1800.0
_SHUTDOWN_TIMEOUT_S = 10.0
_TEST_TIMEOUT_S = 300.0
_STDERR_LINES_KEPT = 200


@dataclass(frozen=True, kw_only=True)
class DemoOptions:
    """What ``lsp-agent demo`` was told.

    ``yes``: approve every permission request. ``keep``: keep the temporary project.
    ``workdir``: copy the project there instead (kept; must be empty or missing).
    ``offline``: use the scripted model even with an API key. ``model``: Claude model name.
    """

    yes: bool = False
    keep: bool = False
    workdir: Path | None = None
    offline: bool = False
    model: str | None = None


class DemoError(Exception):
    """The demo could not run to the end; the message says what went wrong."""


def run_demo(options: DemoOptions, *, out: TextIO | None = None) -> int:
    """Run the demo; returns the exit code (0 tests pass, 1 failure, 130 interrupted)."""
    from lsp_agent.demo.transcript import Transcript

    stream = out if out is not None else sys.stdout
    transcript = Transcript(out=stream, color=stream.isatty() and "NO_COLOR" not in os.environ)
    with _project_dir(options) as root:
        try:
            return asyncio.run(_Demo(options=options, root=root, transcript=transcript).run())
        except DemoError as exc:
            transcript.warning(str(exc))
            return ExitCode.ERROR


@contextlib.contextmanager
def _project_dir(options: DemoOptions) -> Iterator[Path]:
    """A fresh copy of the bundled project; removed afterwards unless kept."""
    if options.workdir is not None:
        options.workdir.mkdir(parents=True, exist_ok=True)
        root = options.workdir.resolve()
        copy_project(root)
        yield root
        return
    temp = Path(tempfile.mkdtemp(prefix="lsp-agent-demo-")).resolve()
    try:
        root = temp / "inventory-project"
        copy_project(root)
        yield root
    finally:
        if not options.keep:
            shutil.rmtree(temp, ignore_errors=True)


def copy_project(dest: Path) -> None:
    """Copy the bundled demo project into ``dest`` (created if missing; existing files with
    the same names are overwritten). Works from a wheel: the project is package data."""
    source = resources.files("lsp_agent.demo").joinpath("project")
    with resources.as_file(source) as src:
        shutil.copytree(
            src,
            dest,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"),
        )


def snapshot(root: Path) -> dict[str, str]:
    """Every text file under ``root`` (relative POSIX path → text), caches skipped."""
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or any(
            part in ("__pycache__", ".pytest_cache") for part in path.parts
        ):
            continue
        try:
            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    return files


def project_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """A unified diff (``a/``/``b/`` paths) of two :func:`snapshot` results; empty if equal."""
    chunks: list[str] = []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{name}" if old is not None else "/dev/null",
                tofile=f"b/{name}" if new is not None else "/dev/null",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


def _allow() -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def _reject(feedback: str | None = None) -> dict[str, Any]:
    """A rejection; ``feedback`` is what the user told the agent (none: the bare rejection,
    so the model is not handed the same sentence twice)."""
    outcome: dict[str, Any] = {"outcome": "selected", "optionId": "reject_once"}
    if feedback is not None:
        outcome["feedback"] = feedback
    return {"outcome": outcome}


def permission_summary(params: dict[str, Any]) -> tuple[str, str]:
    """The title and the diff (may be empty) of a ``requestPermission`` params object."""
    call = params.get("toolCall") or {}
    title = str(call.get("title") or "a tool call")
    diffs: list[str] = []
    for item in call.get("content") or ():
        if isinstance(item, dict) and item.get("type") == "diff":
            diffs.append(str(item.get("unifiedDiff") or ""))
    command = (call.get("rawInput") or {}).get("command")
    if not diffs and isinstance(command, str):
        diffs.append(f"$ {command}")
    return title, "\n".join(d for d in diffs if d)


class _Demo:
    """One run of the demo (one event loop)."""

    def __init__(self, *, options: DemoOptions, root: Path, transcript: Transcript) -> None:
        self.options = options
        self.root = root
        self.transcript = transcript
        self.interrupted = False
        self.offline = False
        self.rejections = 0
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES_KEPT)
        self.verdicts: list[dict[str, Any]] = []
        """``rawOutput.verification`` of every verification the server reported."""
        self.buggy_version: int | None = None
        """Editor version of the buggy file's buffer when the turn ended."""
        transcript.root = root

    async def run(self) -> int:
        from lsp_agent.testing.scenario import load_scenario
        from lsp_agent.testing.scripted import scripted_env
        from lsp_agent.testing.thread import ScriptedServerThread

        t = self.transcript
        before = snapshot(self.root)
        t.heading("lsp-agent demo")
        kept = self.options.keep or self.options.workdir is not None
        t.info(
            f"project: {self.root} (a copy of the bundled 'inventory' library; "
            + ("kept afterwards)" if kept else "removed afterwards unless --keep)")
        )
        from lsp_agent.demo.verification import (
            diagnostics_options,
            find_ruff,
            ruff_install_hint,
            scenario_variables,
        )

        ruff = find_ruff()
        if ruff is None:
            t.warning(
                f"verification unavailable: no ruff next to {sys.executable} or on PATH, so the "
                f"agent's edits are not checked against diagnostics ({ruff_install_hint()}); "
                "going on"
            )
        else:
            t.info(
                f"verification: a managed `ruff server` ({ruff}) checks the exact buffer "
                "version of every edit the agent makes (verify mode: fix)"
            )
        use_claude = bool(os.environ.get("ANTHROPIC_API_KEY")) and not self.options.offline
        env = dict(os.environ)
        scripted: ScriptedServerThread | None = None
        if use_claude:
            from lsp_agent.model.anthropic import resolve_model_name

            model = resolve_model_name(self.options.model)
            t.info(f"model: Claude ({model}) via the Messages API")
            if self.options.model:
                env["ANTHROPIC_MODEL"] = self.options.model
        else:
            self.offline = True
            t.info(OFFLINE_NOTICE)
            scenario_file = resources.files("lsp_agent.demo").joinpath(SCENARIO_RESOURCE)
            with resources.as_file(scenario_file) as path:
                scenario = load_scenario(path)
            variables = {
                "cwd": str(self.root),
                **scenario_variables(buggy_file=BUGGY_FILE, verified=ruff is not None),
            }
            scripted = ScriptedServerThread(scenario=scenario, variables=variables)
            env = scripted_env(scripted.start())
            # The scenario scripts the turn only: a background request (the session's title)
            # would reach the scripted server unscripted and fail the run as not as written.
            env[BACKGROUND_ENV] = "0"
        # The agent's Bash tool runs `python -m unittest`: make `python` this interpreter.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        # A project deleted at the end leaves no saved session (nor checkpoints) behind: the
        # server saves into a data folder deleted with it.
        data = None if kept else Path(tempfile.mkdtemp(prefix="lsp-agent-demo-data-"))
        if data is not None:
            env[DATA_DIR_ENV] = str(data)
        try:
            code = await self._drive(
                env,
                timeout_s=(_CLAUDE_PROMPT_TIMEOUT_S if use_claude else _OFFLINE_PROMPT_TIMEOUT_S),
                diagnostics=diagnostics_options(ruff) if ruff is not None else None,
            )
        finally:
            if scripted is not None:
                scripted.stop()
            if data is not None:
                shutil.rmtree(data, ignore_errors=True)
        if code is not None:
            return code
        after = snapshot(self.root)
        t.heading("what changed on disk")
        diff = project_diff(before, after)
        if diff:
            t.block(diff, diff=True)
        else:
            t.info("nothing changed")
        ok = self._check_run(after, scripted=scripted, verifying=ruff is not None)
        t.heading(f"running the project's tests: {' '.join(TEST_COMMAND)}")
        passed = await self._run_tests()
        if passed and ok:
            t.heading("demo finished: the tests pass")
            return ExitCode.OK
        t.heading("demo failed" + ("" if passed else ": the tests still fail"))
        return ExitCode.ERROR

    def _check_run(
        self, after: dict[str, str], *, scripted: ScriptedServerThread | None, verifying: bool
    ) -> bool:
        """Report what backs the run's claims (the unsaved comment kept, the last edit
        verified, the scripted model's run as written); returns whether all of them hold."""
        t = self.transcript
        ok = True
        comment_kept = UNSAVED_COMMENT in after.get(BUGGY_FILE, "")
        if comment_kept:
            t.info("✓ the comment typed into the unsaved buffer survived the agent's edit")
        elif scripted is not None:
            t.warning("the unsaved comment typed into the buffer was lost")
            ok = False
        else:
            t.info("note: the unsaved comment is no longer in the file (the agent changed it)")
        # A rejection ends the scripted model's run early (it answers and stops, as a model
        # would): the steps after it are not played and the edit was never verified.
        stopped = scripted is not None and self.rejections > 0
        if stopped:
            t.info(
                f"you rejected {self.rejections} tool call(s), so the agent stopped and the bug "
                "is not fixed; approve every step (or run `lsp-agent demo --yes`) to see the fix"
            )
        if verifying and not stopped:
            verified = self._verified_line()
            if verified is not None:
                t.info(f"✓ {verified}")
            elif scripted is not None:
                t.warning("ruff did not verify the version of the file the agent left")
                ok = False
            else:
                t.info("note: ruff did not verify the last version of the file the agent edited")
        if scripted is not None:
            from lsp_agent.testing.scripted import summary_problems

            problems = summary_problems(
                scripted.failures,
                [] if stopped else scripted.unconsumed(),
                scripted.server.scenario,
            )
            if problems:
                ok = False
                t.warning("the scripted model's run did not go as written:")
                t.block("\n".join(problems))
        return ok

    def _verified_line(self) -> str | None:
        """What backs the agent's claim: the last verdict on the buggy file, when it is about
        the buffer version the turn ended with, complete and without new errors."""
        path = str(self.root / BUGGY_FILE)
        for verdict in reversed(self.verdicts):
            for file in verdict.get("files") or ():
                if file.get("path") != path:
                    continue
                if (
                    verdict.get("complete")
                    and verdict.get("newErrors") == 0
                    and file.get("version") == self.buggy_version
                    and not file.get("new")
                ):
                    return (
                        f"ruff checked the exact text the agent left in the buffer "
                        f"({BUGGY_FILE}, version {self.buggy_version}): no new problems"
                    )
                return None
        return None

    async def _drive(
        self, env: dict[str, str], *, timeout_s: float, diagnostics: dict[str, Any] | None
    ) -> int | None:
        """Start the server, run the prompt, shut down. Returns an exit code to stop with, or
        ``None`` to go on to the diff and the tests."""
        from lsprotocol import types
        from pygls.exceptions import JsonRpcException

        from lsp_agent.demo.editor import (
            DemoClientProtocol,
            DemoLanguageClient,
            Editor,
            initialize_params,
        )
        from lsp_agent.lsp import methods

        t = self.transcript
        client = DemoLanguageClient("lsp-agent-demo", __version__, protocol_cls=DemoClientProtocol)
        editor = Editor(
            client=client,
            root=self.root,
            transcript=t,
            approve=self._approve,
            on_verification=self.verdicts.append,
        )
        t.heading("starting the language server: lsp-agent serve (stdio)")
        # A session of its own: Ctrl-C reaches only the demo, which cancels the turn cleanly.
        await client.start_io(
            sys.executable,
            "-m",
            "lsp_agent",
            "serve",
            env=env,
            cwd=str(self.root),
            start_new_session=True,
        )
        stderr_task = asyncio.ensure_future(self._drain_stderr(client))
        loop = asyncio.get_running_loop()
        prompt_task: asyncio.Future[Any] | None = None
        session_id: str | None = None

        def on_sigint() -> None:
            if self.interrupted or session_id is None:
                if prompt_task is not None:
                    prompt_task.cancel()
                self.interrupted = True
                return
            self.interrupted = True
            t.warning("interrupted: cancelling the agent's turn (Ctrl-C again to stop at once)")
            client.protocol.notify(methods.SESSION_CANCEL, {"sessionId": session_id})

        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            try:
                result = await asyncio.wait_for(
                    client.initialize_async(
                        initialize_params(
                            self.root, permission_mode="default", diagnostics=diagnostics
                        )
                    ),
                    _INIT_TIMEOUT_S,
                )
            except (TimeoutError, RuntimeError) as exc:
                raise DemoError(
                    f"the server did not initialize: {exc}{self._stderr_tail()}"
                ) from exc
            server_info = result.server_info
            t.info(
                f"initialized: {server_info.name if server_info else 'server'} "
                f"{server_info.version if server_info and server_info.version else ''}".rstrip()
            )
            client.initialized(types.InitializedParams())

            buggy = editor.open(self.root / BUGGY_FILE)
            editor.type_text(buggy, line=0, text=UNSAVED_COMMENT)
            t.editor(f"opened {BUGGY_FILE} and typed a comment on line 1, without saving:")
            t.block(UNSAVED_COMMENT)

            new = await asyncio.wait_for(
                client.protocol.send_request_async(
                    methods.SESSION_NEW, {"cwd": str(self.root), "mode": "default"}
                ),
                _INIT_TIMEOUT_S,
            )
            session_id = str(_result(new)["sessionId"])
            t.heading(f"prompt: {PROMPT}")
            prompt_task = asyncio.ensure_future(
                client.protocol.send_request_async(
                    methods.SESSION_PROMPT,
                    {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT}]},
                )
            )
            try:
                answer = _result(await asyncio.wait_for(prompt_task, timeout_s))
            except asyncio.CancelledError:
                if self.interrupted:
                    return ExitCode.INTERRUPTED
                raise
            except TimeoutError:
                raise DemoError(f"the agent's turn did not end within {timeout_s:.0f} s") from None
            except JsonRpcException as exc:
                # The server answered with an error (the model failed): its log adds nothing.
                raise DemoError(f"the prompt request failed: {exc}{self._hint()}") from exc
            except Exception as exc:
                raise DemoError(f"the prompt request failed: {exc}{self._stderr_tail()}") from exc
            stop = answer.get("stopReason")
            self.buggy_version = buggy.version
            t.info(f"\nturn ended: stopReason={stop}")
            if self.interrupted or stop == "cancelled":
                return ExitCode.INTERRUPTED
            if stop != "end_turn":
                t.warning(f"the turn did not end normally (stopReason={stop})")
            for buffer in list(editor.buffers.values()):
                if buffer.dirty:
                    editor.save(buffer)
                    t.editor(f"saved {editor.relative(buffer.uri)} before running the tests")
            return None
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
            await self._shutdown(client)
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task

    async def _approve(self, params: dict[str, Any]) -> dict[str, Any]:
        t = self.transcript
        title, diff = permission_summary(params)
        t.info(f"permission requested: {title}")
        if diff:
            t.block(diff, diff=True)
        if self.options.yes:
            t.info("  → allowed (--yes)")
            return _allow()
        if not sys.stdin.isatty():
            t.info("  → rejected: not on a terminal and --yes not given")
            self.rejections += 1
            return _reject(
                "The demo is not running on a terminal, so nobody can approve this; "
                "rerun `lsp-agent demo --yes` to approve tool calls automatically."
            )
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(None, input, "  allow? [y/N] ")
        if answer.strip().lower() in ("y", "yes"):
            return _allow()
        self.rejections += 1
        return _reject()

    async def _drain_stderr(self, client: Any) -> None:
        process = client.server_process
        if process is None or process.stderr is None:
            return
        while True:
            line = await process.stderr.readline()
            if not line:
                return
            self.stderr_lines.append(line.decode("utf-8", "replace").rstrip("\n"))

    def _hint(self) -> str:
        if self.offline and self.rejections:
            return (
                "\nhint: the bundled offline script expects every tool call to be approved; "
                "run `lsp-agent demo --yes`, or answer y on a terminal"
            )
        return ""

    def _stderr_tail(self) -> str:
        if not self.stderr_lines:
            return ""
        return "\nserver stderr (last lines):\n" + "\n".join(list(self.stderr_lines)[-40:])

    async def _shutdown(self, client: Any) -> None:
        process = client.server_process
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_async(None), _SHUTDOWN_TIMEOUT_S)
            client.exit(None)
        if process is not None:
            try:
                await asyncio.wait_for(process.wait(), _SHUTDOWN_TIMEOUT_S)
            except TimeoutError:
                process.kill()
                await process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), _SHUTDOWN_TIMEOUT_S)

    async def _run_tests(self) -> bool:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *TEST_COMMAND[1:],
            cwd=str(self.root),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), _TEST_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
            self.transcript.warning(f"the tests did not finish within {_TEST_TIMEOUT_S:.0f} s")
            return False
        self.transcript.block(output.decode("utf-8", "replace"))
        return process.returncode == 0


def _result(response: Any) -> dict[str, Any]:
    """The ``result`` dict of a raw response to one of our custom requests."""
    result = getattr(response, "result", response)
    if not isinstance(result, dict):
        raise DemoError(f"unexpected answer from the server: {result!r}")
    return result

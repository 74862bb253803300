"""``lsp-agent run -p``: one prompt, run against the files on disk, then exit.

The session works on the disk through ``DiskHost``; nobody can answer a permission prompt, so
``AgentConfig.unattended`` (:func:`~lsp_agent.headless.host.refuse_unattended`) denies what the
engine would ask about (the denial tells the model how the user could allow it). Settings come
from the usual files (managed, ``--settings FILE``, the project's ``.claude/settings*.json`` —
the run trusts its directory, as Claude Code's ``-p`` does — and ``~/.claude/settings.json``);
their problems are printed to stderr, their hooks run. With ``--diagnostics FILE`` the run
verifies its edits with managed language servers (:mod:`lsp_agent.headless.diagnostics`). SIGINT
cancels the turn cleanly (every tool_use still gets its tool_result) and the process exits 130;
a second SIGINT stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO, cast

from lsp_agent import __version__
from lsp_agent.headless.cost import Budget, model_usage, total_cost_usd
from lsp_agent.headless.exit_codes import ExitCode, Outcome, classify
from lsp_agent.headless.input import InputError, prompts
from lsp_agent.headless.log_lines import RunLogFormatter
from lsp_agent.headless.options import HeadlessOptions
from lsp_agent.headless.render import init_event, make_renderer, result_event
from lsp_agent.model.retry import max_retries_from

if TYPE_CHECKING:
    from pathlib import Path

    from lsp_agent.config.loader import LoadedSettings
    from lsp_agent.config.store import SettingsStore
    from lsp_agent.context.memory.approvals import ImportApprovals
    from lsp_agent.headless.bg_approval import EditorApprover
    from lsp_agent.headless.diagnostics import HeadlessDiagnostics
    from lsp_agent.mcp.service import McpService
    from lsp_agent.model.base import Model
    from lsp_agent.model.tls import PreparedTls
    from lsp_agent.protocol.permissions import PermissionMode
    from lsp_agent.sessions.manager import Session

log = logging.getLogger(__name__)


def api_key_source(environ: Mapping[str, str]) -> str:
    """Which credential the model client will use, for the init event (never its value):
    ``none`` for an offline run, whose key only opens the bundled trial endpoint."""
    if environ.get("LSP_AGENT_OFFLINE_RUN"):
        return "none"
    if environ.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_API_KEY"
    if environ.get("ANTHROPIC_AUTH_TOKEN"):
        return "ANTHROPIC_AUTH_TOKEN"
    return "none"


def run_headless(
    options: HeadlessOptions,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    inp: TextIO | None = None,
    tls: PreparedTls | None = None,
) -> int:
    """Run one prompt; returns the exit code (see :mod:`lsp_agent.headless.exit_codes`).

    ``out``/``err``/``inp`` default to ``sys.stdout``/``sys.stderr``/``sys.stdin`` (``inp``
    is read only with ``--input-format stream-json``); ``environ`` (default ``os.environ``)
    supplies ``ANTHROPIC_*`` and ``LSP_AGENT_MAX_RETRIES``; ``tls``: a TLS context the
    daemon built ahead, for the model client (:mod:`lsp_agent.model.tls`).
    """
    inp = inp if inp is not None else sys.stdin
    if out is None:
        # A closed stdout (``>&-``) leaves sys.stdout None: the run's output goes nowhere.
        out = sys.stdout if sys.stdout is not None else open(os.devnull, "w")  # noqa: SIM115
    stdout = out
    out = cast(TextIO, _Output(out))
    if err is None:
        err = sys.stderr if sys.stderr is not None else open(os.devnull, "w")  # noqa: SIM115
    env = os.environ if environ is None else environ
    handler = logging.StreamHandler(err)
    handler.setFormatter(RunLogFormatter())
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    if options.verbose:
        # Our own decisions (permissions, tools, settings) are readable; the SDK's and the HTTP
        # client's debug logs (the whole request, about 10 KB each) stay out: each request is
        # one [model] line instead (lsp_agent.headless.responses).
        logging.getLogger("lsp_agent").setLevel(logging.INFO)
    try:
        retries = max_retries_from(env)
    except ValueError as exc:
        err.write(f"lsp-agent: error: {exc}\n")
        return ExitCode.USAGE
    try:
        return asyncio.run(
            _run(options, out=out, err=err, inp=inp, environ=env, max_retries=retries, tls=tls)
        )
    except KeyboardInterrupt:
        err.write("lsp-agent: interrupted\n")
        return ExitCode.INTERRUPTED
    except OutputError as exc:
        err.write(f"lsp-agent: error: cannot write the output: {exc.strerror}\n")
        if stdout is sys.stdout:
            # What it still buffers would fail again when the process flushes it at exit.
            with contextlib.suppress(OSError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stdout.fileno())
                os.close(devnull)
        return ExitCode.ERROR


class OutputError(OSError):
    """Writing the run's output failed, other than by its reader going away (that stays a
    ``BrokenPipeError``: the CLI ends quietly): a full disk, an I/O error."""


class _Output:
    """The run's output stream whose failed writes raise :class:`OutputError` (so that the
    run ends with one line naming it, not with a traceback from wherever it wrote)."""

    def __init__(self, out: TextIO) -> None:
        self.wrapped = out  # the stream-json renderer sets its buffering (render.py)

    def write(self, text: str) -> int:
        try:
            return self.wrapped.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.errno, exc.strerror) from exc

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.errno, exc.strerror) from exc


async def _run(
    options: HeadlessOptions,
    *,
    out: TextIO,
    err: TextIO,
    inp: TextIO,
    environ: Mapping[str, str],
    max_retries: int,
    tls: PreparedTls | None,
) -> int:
    from lsp_agent.agent.env import DEFAULT_MAX_MODEL_REQUESTS, AgentConfig
    from lsp_agent.headless.events import EventStream
    from lsp_agent.headless.host import HeadlessHost, refuse_unattended
    from lsp_agent.headless.mcp_notices import McpFailureNotices
    from lsp_agent.headless.prompt_size import prompt_too_long
    from lsp_agent.headless.responses import ResponseLog, TimedModel
    from lsp_agent.headless.session_open import discard_transcript, new_session, open_session
    from lsp_agent.model.anthropic import AnthropicModel, apply_settings_env, resolve_model_name
    from lsp_agent.protocol.prompt import PromptText
    from lsp_agent.sessions.compose import build_sessions, session_tools
    from lsp_agent.sessions.manager import SessionError
    from lsp_agent.tools.warm import SEARCH_TOOLS, start_search_warm_up
    from lsp_agent.workspace.disk_host import DiskHost

    started = time.perf_counter()
    settings = _settings(options, err=err)
    renderer = make_renderer(
        options.output_format,
        out=out,
        err=err,
        verbose=options.verbose,
        broken_settings=settings.loaded.broken_places(),
    )
    if options.permission_mode is None:
        _warn_project_mode(settings.loaded, cwd=options.cwd, err=err)
    elif options.permission_mode == "bypassPermissions" and settings.loaded.disable_bypass():
        _warn_bypass_off(settings.loaded, err=err)
    diagnostics: HeadlessDiagnostics | None = None
    if options.diagnostics_file is not None:
        from lsp_agent.headless.diagnostics import (
            DiagnosticsFileError,
            HeadlessDiagnostics,
            load_diagnostics_file,
        )

        try:
            verify_settings = load_diagnostics_file(options.diagnostics_file)
        except DiagnosticsFileError as exc:
            err.write(f"lsp-agent: error: {exc}\n")
            return ExitCode.USAGE
        diagnostics = HeadlessDiagnostics.create(settings=verify_settings, cwd=options.cwd)
    # Claude Code's order: --model, then ANTHROPIC_MODEL, then the settings' model.
    model_name = resolve_model_name(
        options.model or environ.get("ANTHROPIC_MODEL") or settings.loaded.model(), environ
    )
    too_long = prompt_too_long(options.prompt, model=model_name)
    if too_long is not None:
        err.write(f"lsp-agent: error: {too_long}\n")
        if diagnostics is not None:
            await diagnostics.aclose()
        return ExitCode.ERROR
    # dontAsk (Claude Code: deny whatever is not pre-approved) is the engine's own mode; a
    # background run in it does not ask the editor either.
    requested_mode = options.permission_mode
    responses = ResponseLog(model=model_name)
    budget: Budget | None = None
    if options.max_budget_usd is not None:
        budget = Budget(
            limit_usd=options.max_budget_usd, model=model_name, responses=responses.responses
        )
    approver = _editor_approver(environ, err=err) if requested_mode != "dontAsk" else None
    mode: PermissionMode | None = requested_mode  # type: ignore[assignment]
    config = AgentConfig(
        model=model_name,
        allowed_tools=options.allowed_tools,
        disallowed_tools=options.disallowed_tools,
        max_turns=options.max_turns or DEFAULT_MAX_MODEL_REQUESTS,
        unattended=refuse_unattended if approver is None else approver.unattended,
        persist=options.persist,
        append_system_prompt=options.append_system_prompt,
        system_prompt=options.system_prompt,
        tools=options.tools,
        budget_spent=budget.spent if budget is not None else None,
    )
    if diagnostics is not None:
        config = diagnostics.agent_config(config)
    unknown = _unknown_tools(
        options.tools, session_tools(diagnostics.service if diagnostics else None).names()
    )
    if unknown is not None:
        err.write(f"lsp-agent: error: {unknown}\n")
        if diagnostics is not None:
            await diagnostics.aclose()
        return ExitCode.USAGE
    models: list[TimedModel] = []
    stream: EventStream | None = None
    held: list[str] = []  # lines shown only once the run asks the model (MCP approvals)

    def show_held() -> None:
        # Called as the run's first model request goes out (before_first below).
        err.write("".join(held))
        held.clear()
        if options.tools is None or SEARCH_TOOLS.intersection(options.tools):
            start_search_warm_up()  # while the answer is awaited, not in the first search

    def on_switch(primary: str, fallback: str, error: Exception) -> None:
        err.write(f"lsp-agent: {primary} is overloaded ({error}); using {fallback} instead\n")

    def model_factory() -> TimedModel:
        # The settings' env names the timeouts too, and beats the environment (Claude Code).
        anthropic_model = AnthropicModel.from_env(environ, max_retries=max_retries, tls=tls)
        apply_settings_env(anthropic_model, settings.env())
        if options.include_partial_messages:
            anthropic_model.raw_events = lambda event: stream.partial(event) if stream else None
        inner: Model = anthropic_model
        if options.fallback_model:
            from lsp_agent.model.fallback import FallbackModel

            inner = FallbackModel(inner=inner, fallback=options.fallback_model, on_switch=on_switch)
        model = TimedModel(
            inner, log=responses, err=err, verbose=options.verbose, before_first=show_held
        )
        # Tool results are committed after the batch's last update: out before the next answer.
        model.before_each = lambda: stream.flush() if stream is not None else None
        models.append(model)
        return model

    def on_update(session_id: str, update: Any) -> None:
        if stream is not None:
            stream.on_update(session_id, update)

    notices = McpFailureNotices()
    notices.install()
    mcp = _mcp(options, settings=settings, environ=environ, err=err)
    manager = build_sessions(
        host=HeadlessHost(inner=DiskHost(), on_update=on_update, approve=approver),
        model_factory=model_factory,
        config=config,
        diagnostics=diagnostics.service if diagnostics is not None else None,
        settings=lambda _cwd: settings,
        mcp=lambda _cwd: mcp,
        import_approvals=_import_approvals(options),
    )
    try:
        session = open_session(manager, options, mode, err=err, environ=environ)
    except (ValueError, SessionError) as exc:  # a malformed rule, an unknown session
        err.write(f"lsp-agent: error: {exc}\n")
        notices.remove()
        if diagnostics is not None:
            await diagnostics.aclose()
        # Like every subcommand's "no such session/run/checkpoint/server": 1, not usage.
        return ExitCode.ERROR if isinstance(exc, SessionError) else ExitCode.USAGE
    # The servers start in parallel; the model sees the tools of those ready in time.
    mcp_tools = [t.name for t in await mcp.tools()]
    notices.problems_shown(p.message for p in mcp.problems)
    for status in mcp.statuses():
        if status["state"] not in ("ready", "disabled"):  # disabled: the user's own choice
            line = notices.line(status["name"], status["state"], status["error"])
            # A `#` note or /cost never uses MCP: an unapproved server waits for a model turn.
            (held.append if status["state"] == "needs_approval" else err.write)(line)
    notices.started = True
    _print_memory_notices(session, err=err)
    stream = EventStream(
        renderer=renderer,
        session_id=session.id,
        history=lambda: session.history,
        skip=len(session.history) + 1,
        responses=responses,
    )
    renderer.init(
        init_event(
            session_id=session.id,
            cwd=str(session.cwd),
            tools=[*session.tools.names(), *mcp_tools],
            model=model_name,
            permission_mode=session.mode,
            api_key_source=api_key_source(environ),
            version=__version__,
            mcp_servers=[
                {"name": s["name"], "status": _init_status(s["state"])} for s in mcp.statuses()
            ],
            slash_commands=list(session.commands.names()),
        )
    )

    loop = asyncio.get_running_loop()
    interrupts = 0
    current: asyncio.Future[Any] | None = None

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            err.write("lsp-agent: interrupted; cancelling the turn (Ctrl-C again to quit now)\n")
            session.cancel()
        elif current is not None:
            current.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    code = ExitCode.OK
    turn_started = started
    try:
        async for text in prompts(options, stdin=inp, err=err):
            stream.begin_turn()
            before = len(responses.responses)
            stop_reason = "cancelled"
            error: str | None = None
            num_turns = 0
            usage: dict[str, int] = {}
            result_text = ""
            current = asyncio.ensure_future(session.prompt([PromptText(text=text)]))
            try:
                result = await current
                stop_reason = result.stop_reason
                error = result.error
                num_turns = result.requests
                usage = result.usage.model_dump()
                result_text = result.final_text or ""
            except asyncio.CancelledError:
                error = "interrupted: the turn was cancelled"
            except Exception as exc:  # a bug must still end in a result object and exit 1
                log.debug("the turn failed", exc_info=True)
                stop_reason = "error"  # not "cancelled": that would exit 130 as if interrupted
                error = f"internal error: {type(exc).__name__}: {exc}"
            stream.finish()
            outcome: Outcome = classify(
                stop_reason=stop_reason,
                error=_with_hint(error),
                interrupted=interrupts > 0,
                max_turns=options.max_turns or DEFAULT_MAX_MODEL_REQUESTS,
                budget_exceeded=budget is not None and budget.exceeded,
            )
            turn = responses.responses[before:]
            turn_ended = time.perf_counter()
            renderer.result(
                result_event(
                    outcome=outcome,
                    result=result_text or stream.last_assistant_text(),
                    session_id=session.id,
                    num_turns=num_turns,
                    duration_ms=round((turn_ended - turn_started) * 1000),
                    duration_api_ms=round(responses.api_ms_between(turn_started, turn_ended)),
                    usage=usage,
                    # The API's stop reason of the turn's last response (Claude Code's field);
                    # null when the turn failed before any response.
                    stop_reason=turn[-1].stop_reason if turn else None,
                    permission_denials=stream.permission_denials(),
                    total_cost_usd=total_cost_usd(responses.responses, model=model_name),
                    model_usage=model_usage(responses.responses, model=model_name),
                )
            )
            code = outcome.exit_code
            turn_started = time.perf_counter()
            if interrupts:
                break
    except InputError as exc:
        stream.finish()
        outcome = classify(stop_reason="end_turn", error=str(exc), interrupted=False)
        renderer.result(
            result_event(
                outcome=outcome,
                result="",
                session_id=session.id,
                num_turns=0,
                duration_ms=round((time.perf_counter() - turn_started) * 1000),
                duration_api_ms=0,
                usage={},
                stop_reason=None,
                permission_denials=[],
                total_cost_usd=total_cost_usd(responses.responses, model=model_name),
                model_usage=model_usage(responses.responses, model=model_name),
            )
        )
        code = ExitCode.USAGE
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        try:
            await session.end()  # SessionEnd hooks, bounded by their timeouts
        except Exception:
            log.debug("SessionEnd hooks failed", exc_info=True)
        if code != ExitCode.OK and not responses.responses and new_session(options):
            discard_transcript(session)
        for model in models:
            with contextlib.suppress(Exception):
                await model.aclose()
        if diagnostics is not None:
            try:
                await diagnostics.aclose()  # managed language servers, bounded
            except Exception:
                log.debug("stopping the managed language servers failed", exc_info=True)
        try:
            await mcp.aclose()  # MCP servers, bounded
        except Exception:
            log.debug("stopping the MCP servers failed", exc_info=True)
        notices.remove()
    return int(code)


_NO_KEY = "No credentials for the model endpoint"


def _with_hint(error: str | None) -> str | None:
    """``error``, with the ways to try lsp-agent without a key when it is the no-key error."""
    if error is not None and _NO_KEY in error:  # also a /compact whose summary request failed
        return f"{error}; no key? `lsp-agent -p --offline PROMPT` or `lsp-agent demo` work without"
    return error


def _unknown_tools(wanted: tuple[str, ...] | None, known: tuple[str, ...]) -> str | None:
    """The usage error for ``--tools`` names that are no built-in tool (``None``: all known)."""
    unknown = [name for name in wanted or () if name not in known]
    if not unknown:
        return None
    return f"--tools: unknown tool {', '.join(unknown)} (built-in tools: {', '.join(known)})"


_INIT_STATUS = {
    "ready": "connected",
    "starting": "pending",
    "idle": "pending",
    "needs_login": "needs-auth",
}
"""Claude Code's names for MCP server states in the init event (its SDK's
``McpServerStatus.status``: ``connected``, ``failed``, ``needs-auth``, ``pending``,
``disabled``); our other states keep their names, spelt with hyphens like Claude Code's
(``needs_approval`` is ``needs-approval``)."""


def _init_status(state: str) -> str:
    """A server's state as the init event's ``mcp_servers[].status`` (:data:`_INIT_STATUS`)."""
    return _INIT_STATUS.get(state, state.replace("_", "-"))


def _mcp(
    options: HeadlessOptions,
    *,
    settings: SettingsStore,
    environ: Mapping[str, str],
    err: TextIO,
) -> McpService:
    """The run's MCP servers (not started yet); configuration problems go to ``err``."""
    from lsp_agent.mcp.limits import limits_from_env
    from lsp_agent.mcp.service import McpService
    from lsp_agent.mcp.sources import McpSources

    service = McpService(
        sources=McpSources(
            cwd=options.cwd,
            home=settings.loader.home,
            trusted=options.trusted,
            environ=dict(environ),
            settings_files={str(k): v for k, v in settings.loader.files().items()},
            cli_configs=options.mcp_configs,
            strict=options.strict_mcp_config,
        ),
        limits=limits_from_env(environ),
        roots=lambda: (options.cwd,),
    )
    from lsp_agent.headless.mcp_commands import problem_line

    for problem in service.problems:
        err.write(f"lsp-agent: {problem.severity}: {problem_line(problem)}\n")
    return service


def _import_approvals(options: HeadlessOptions) -> ImportApprovals:
    """The run's answer about memory imports from outside the project: only the command line
    (the user) can approve them, never a file of the project; nothing is remembered."""
    from lsp_agent.context.memory.approvals import ImportApprovals

    approvals = ImportApprovals(path=None)
    if options.approve_memory_imports:
        approvals.set(options.cwd, "approved")
    return approvals


def _settings(options: HeadlessOptions, *, err: TextIO) -> SettingsStore:
    """The run's settings store; every problem is printed to ``err`` (one line each)."""
    from lsp_agent.config.store import SettingsStore

    loader_log = logging.getLogger("lsp_agent.config.loader")
    level = loader_log.level
    if not options.verbose:
        # The loader logs problems too; print them once, below, in a stable shape.
        loader_log.setLevel(logging.CRITICAL)
    try:
        settings = SettingsStore(
            cwd=options.cwd, flag_settings_path=options.settings_file, trusted=options.trusted
        )
    finally:
        loader_log.setLevel(level)
    for problem in settings.loaded.problems:
        err.write(f"lsp-agent: settings: {problem.log_line()}\n")
    return settings


def _editor_approver(environ: Mapping[str, str], *, err: TextIO) -> EditorApprover | None:
    """A background run's editor approval (the daemon names the run in its environment), else
    ``None``: a foreground run denies what would be asked."""
    from lsp_agent.store.runs import RUN_ENV, is_run_id

    run_id = environ.get(RUN_ENV, "")
    # Consumed here: a run -p the agent starts through Bash is not this background run.
    os.environ.pop(RUN_ENV, None)
    if not is_run_id(run_id):
        return None
    from lsp_agent.headless.bg_approval import EditorApprover
    from lsp_agent.store.private import runs_dir

    return EditorApprover(folder=runs_dir(environ), run_id=run_id, environ=environ, err=err)


def _warn_bypass_off(loaded: LoadedSettings, *, err: TextIO) -> None:
    """Say why ``--permission-mode bypassPermissions`` is not honoured: a broken settings file
    (named where it fails) or ``disableBypassPermissionsMode``."""
    broken = loaded.broken_places()
    why = (
        f"{', '.join(broken)} is broken (fix it to use that mode)"
        if broken
        else 'settings set "disableBypassPermissionsMode": "disable"'
    )
    err.write(f"lsp-agent: --permission-mode bypassPermissions is off: {why}; using default\n")


def _warn_project_mode(loaded: LoadedSettings, *, cwd: Path, err: TextIO) -> None:
    """A repository's ``defaultMode`` that needs confirming is not used headless (nobody can
    confirm it): say so, and which flag applies it."""
    from lsp_agent.sessions.project_mode import pending_project_mode

    pending = pending_project_mode(loaded, cwd=cwd.resolve())
    if pending is not None:
        err.write(
            f"lsp-agent: {pending.file} sets permissions.defaultMode to {pending.mode}; a "
            "repository's settings cannot switch off permission prompts by themselves, so it is "
            f"not used: pass --permission-mode {pending.mode} to use it\n"
        )


def _print_memory_notices(session: Session, *, err: TextIO) -> None:
    """Each problem of the memory files that load (unreadable, not UTF-8, too large, a missing
    import…) as one line on ``err``, as settings problems are: the editor shows them as
    diagnostics on the file, a run has only stderr."""
    if session.memory is None:
        return
    for notice in session.memory.load().notices:
        message = notice.message
        where = "" if str(notice.path) in message else f"{notice.path}: "
        err.write(f"lsp-agent: memory: {where}{message}\n")

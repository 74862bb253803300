"""The ``lsp-agent`` command: ``serve`` (the language server), ``run -p`` (headless), ``daemon``
and the background runs (``run -p --bg``, ``ps``, ``logs``, ``attach``, ``kill``:
:mod:`lsp_agent.cli.bg`), ``rewind`` and ``demo``.

The parsers of the subcommands and of their flag values are in :mod:`lsp_agent.cli.parser`;
this module dispatches. Only :mod:`argparse` and the standard library are imported at module
level: every subcommand imports what it needs when it runs, so ``lsp-agent --version`` starts
in a few milliseconds and never loads pygls, lsprotocol, anthropic or pydantic.

Exit codes (the same for every subcommand; ``run`` documents them in ``--help``):

====  ==========================================================================
0     success
1     error during execution (model unreachable or refused the request, tool
      machinery failed, demo tests still failing)
2     usage error (bad flags, unknown permission rule, missing directory)
3     ``run``: the turn stopped at ``--max-turns``
130   interrupted by SIGINT (the turn was cancelled cleanly)
====  ==========================================================================
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsp_agent.cli.bg_parser import BACKGROUND_COMMANDS
from lsp_agent.cli.parser import (
    COMMANDS,
    INPUT_FORMATS,
    LOG_LEVELS,
    OUTPUT_FORMATS,
    PERMISSION_MODES,
    PRINT_FLAGS,
    UsageError,
    build_parser,
    route_print_mode,
    split_rules,
    unknown_arguments_error,
)

__all__ = [
    "COMMANDS",
    "INPUT_FORMATS",
    "LOG_LEVELS",
    "OUTPUT_FORMATS",
    "PERMISSION_MODES",
    "PRINT_FLAGS",
    "UsageError",
    "build_parser",
    "main",
    "route_print_mode",
    "split_rules",
]

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from lsp_agent.headless.options import HeadlessOptions
    from lsp_agent.model.base import Model
    from lsp_agent.model.tls import PreparedTls

# Exit codes (the same values as lsp_agent.headless.exit_codes.ExitCode, which this module does
# not import so that `--version` loads nothing beyond argparse).
_EXIT_USAGE = 2
_EXIT_INTERRUPTED = 130
_EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell reports for a command whose reader went away."""


def main(argv: Sequence[str] | None = None, *, tls: PreparedTls | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the subcommand, return its exit code.
    ``tls``: a TLS context built ahead for ``run``'s model client (the daemon's).

    Called without ``argv`` (a process of its own), ``run`` is handed over to the background
    daemon when one runs; with an explicit ``argv`` (the daemon's own child, tests, embedding)
    it runs here.

    Called without ``argv`` (the console script, ``python -m lsp_agent``), a finished ``run``
    ends the process at once after flushing its output (:func:`_exit_now`): tearing down
    the interpreter after the model SDK was imported costs about a quarter of a second,
    which a headless run spends on every call. With an explicit ``argv`` (tests, embedding)
    it returns normally.

    A reader that goes away (``lsp-agent ps | head -2``) ends the command quietly with
    :data:`_EXIT_BROKEN_PIPE`, without a traceback.
    """
    try:
        code = _main(argv, tls=tls)
        # A closed reader shows here for output still buffered; `serve --stdio` closed
        # stdout itself when the client said exit.
        if sys.stdout is not None and not sys.stdout.closed:
            sys.stdout.flush()
    except BrokenPipeError:
        import os

        # Nothing more can reach the reader; point stdout at /dev/null so the flush at exit
        # does not report the same broken pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return _EXIT_BROKEN_PIPE
    return code


def _main(argv: Sequence[str] | None, *, tls: PreparedTls | None) -> int:
    """:func:`main` without the broken-pipe handling."""
    parser = build_parser()
    routed = route_print_mode(sys.argv[1:] if argv is None else argv)
    args, extras = parser.parse_known_args(routed)
    if extras:
        prog = "lsp-agent run" if args.command == "run" else "lsp-agent"
        print(unknown_arguments_error(extras, prog=prog), file=sys.stderr)
        return _EXIT_USAGE
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "run" and args.bg:
            from lsp_agent.cli.bg import run_in_background

            return run_in_background(routed, args)
        if args.command == "run":
            handed = _hand_over(routed) if argv is None else None
            code = _run(args, tls=tls) if handed is None else handed
            if argv is None:
                _exit_now(code)
            return code
        simple = {
            "daemon": _daemon,
            "demo": _demo,
            "rewind": _rewind,
            "sessions": _sessions,
            "mcp": _mcp,
        }
        if args.command in simple:
            return simple[args.command](args)
        if args.command in BACKGROUND_COMMANDS:
            from lsp_agent.cli.bg import command

            return command(args)
    except UsageError as exc:
        parser.exit(_EXIT_USAGE, f"lsp-agent: error: {exc}\n")
    except KeyboardInterrupt:
        print("lsp-agent: interrupted", file=sys.stderr)
        return _EXIT_INTERRUPTED
    parser.print_help(sys.stderr)
    return _EXIT_USAGE


def _exit_now(code: int) -> None:
    """Flush stdout, stderr and the log handlers, then end the process with ``code`` without
    interpreter teardown. Only for the end of a command whose work is complete: files are
    written, subprocesses reaped and the event loop closed by then."""
    import contextlib
    import logging
    import os

    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with the descriptor closed
            continue
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    logging.shutdown()
    os._exit(code)


def _serve(args: argparse.Namespace) -> int:
    if not args.daemon:
        return _serve_editor(args)
    import os

    from lsp_agent.cli.serve_daemon import EditorDaemon

    beside = EditorDaemon(environ=dict(os.environ))
    beside.start()
    try:
        return _serve_editor(args)
    finally:
        beside.stop()


def _serve_editor(args: argparse.Namespace) -> int:
    import logging
    from pathlib import Path

    # serve() sends logs to stderr or the log file: stdout is the LSP wire in stdio mode.
    from lsp_agent.lsp.server import serve

    settings_file = _settings_file(args.settings)
    log_file = Path(args.log_file) if args.log_file else None
    if args.offline and args.fallback_model:
        raise UsageError(
            "--offline plays the bundled scripted model; --fallback-model does not apply"
        )
    if args.offline:
        from lsp_agent.agent.env import AgentConfig
        from lsp_agent.demo.trial import TRIAL_MODEL, trial_endpoint, trial_model_factory

        with trial_endpoint() as base_url:
            return serve(
                tcp=args.tcp,
                log_file=log_file,
                log_level=getattr(logging, args.log_level),
                settings_file=settings_file,
                model_factory=trial_model_factory(base_url),
                config=AgentConfig(model=TRIAL_MODEL),
            )
    return serve(
        tcp=args.tcp,
        log_file=log_file,
        log_level=getattr(logging, args.log_level),
        settings_file=settings_file,
        model_factory=_fallback_factory(args.fallback_model) if args.fallback_model else None,
    )


def _fallback_factory(fallback: str) -> Callable[[], Model]:
    """``serve --fallback-model``: each session's Anthropic client (from the environment),
    moving to ``fallback`` after an overload; the switch is logged."""
    import logging

    from lsp_agent.model.anthropic import AnthropicModel
    from lsp_agent.model.base import ModelError
    from lsp_agent.model.fallback import FallbackModel

    log = logging.getLogger("lsp_agent.model.fallback")

    def on_switch(primary: str, to: str, error: ModelError) -> None:
        log.warning("%s is overloaded (%s); using %s instead", primary, error, to)

    def make() -> Model:
        return FallbackModel(
            inner=AnthropicModel.from_env(), fallback=fallback, on_switch=on_switch
        )

    return make


def _settings_file(value: str | None) -> Path | None:
    """``--settings FILE`` as an absolute path; raises :class:`UsageError` if it is missing."""
    return _existing_file(value, flag="--settings")


def _existing_file(value: str | None, *, flag: str) -> Path | None:
    """``flag FILE`` as an absolute path; raises :class:`UsageError` if it is missing."""
    from pathlib import Path

    if value is None:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_file():
        raise UsageError(f"{flag} {value!r}: no such file")
    return path


def _hand_over(argv: list[str]) -> int | None:
    import os

    from lsp_agent.daemon.client import hand_over

    try:
        cwd = os.getcwd()
    except FileNotFoundError:
        return None  # the current folder was removed: the run says so (or uses --cwd)
    return hand_over(argv, environ=os.environ, cwd=cwd)


def _daemon(args: argparse.Namespace) -> int:
    import os

    from lsp_agent.daemon import client

    if not client.supported():
        raise UsageError("the daemon needs Linux (Unix sockets with peer credentials)")
    if args.action == "serve":
        from lsp_agent.cli.preload import Prepared, preload_run
        from lsp_agent.daemon.paths import socket_path
        from lsp_agent.daemon.server import DaemonConfig, DaemonRunningError, serve
        from lsp_agent.store.private import runs_dir

        prepared = Prepared()
        config = DaemonConfig(
            socket_path=socket_path(os.environ),
            runs_dir=runs_dir(os.environ),
            idle_timeout_s=float(args.idle_timeout),
            main=lambda argv: main(argv, tls=prepared.tls),
            preload=lambda: preload_run(prepared),
        )
        try:
            return serve(config)
        except (DaemonRunningError, PermissionError) as exc:
            print(f"lsp-agent: error: {exc}", file=sys.stderr)
            return 1
    if args.action in ("status", "stop"):
        from lsp_agent.cli.daemon_commands import daemon_status, daemon_stop

        return (daemon_status if args.action == "status" else daemon_stop)(os.environ)
    from lsp_agent.cli.bg import start_daemon

    return start_daemon(args.idle_timeout, environ=os.environ)


def _run(args: argparse.Namespace, *, tls: PreparedTls | None = None) -> int:
    from pathlib import Path

    from lsp_agent.headless.stdin import prompt_text

    if args.include_partial_messages and args.output_format != "stream-json":
        raise UsageError("--include-partial-messages needs --output-format stream-json")
    if args.input_format == "stream-json" and args.output_format != "stream-json":
        raise UsageError("--input-format stream-json needs --output-format stream-json")
    mode = args.permission_mode
    if args.dangerously_skip_permissions:
        if mode not in (None, "bypassPermissions"):
            raise UsageError(f"--dangerously-skip-permissions contradicts --permission-mode {mode}")
        mode = "bypassPermissions"
    try:
        prompt = prompt_text(args.prompt, stdin=sys.stdin, read_stdin=args.input_format == "text")
    except ValueError as exc:
        raise UsageError(str(exc) + _swallowed_prompt_hint(args)) from None
    try:
        cwd = Path(args.cwd or ".").resolve()
    except FileNotFoundError:  # no current folder to resolve against
        raise UsageError(
            "the current folder no longer exists (it was removed); run from an existing "
            "folder or pass --cwd DIR"
        ) from None
    if not cwd.is_dir():
        raise UsageError(f"--cwd {args.cwd!r} is not a directory")
    add_dirs: list[Path] = []
    for value in (value for group in args.add_dirs for value in group):
        directory = (cwd / Path(value).expanduser()).resolve()
        if not directory.is_dir():
            raise UsageError(f"--add-dir {value!r} is not a directory")
        add_dirs.append(directory)
    # Splitting happens here; the rule grammar is checked when the session's permission engine
    # parses them (a malformed rule is a usage error, exit 2).
    allowed = split_rules(args.allowed_tools)
    disallowed = split_rules(args.disallowed_tools)
    system_prompt = _text_flag(args.system_prompt, args.system_prompt_file, flag="--system-prompt")
    append = _text_flag(
        args.append_system_prompt, args.append_system_prompt_file, flag="--append-system-prompt"
    )
    mcp_configs = tuple(value for group in args.mcp_config for value in group)
    for value in mcp_configs:
        _check_mcp_config(value, cwd=cwd)

    from lsp_agent.headless.responses import pause_collector

    pause_collector()  # until the run's first answer: start-up makes no garbage worth a pass
    from lsp_agent.headless.options import HeadlessOptions
    from lsp_agent.headless.runner import run_headless

    options = HeadlessOptions(
        prompt=prompt,
        output_format=args.output_format,
        permission_mode=mode,
        allowed_tools=allowed,
        disallowed_tools=disallowed,
        max_turns=args.max_turns,
        model=args.model,
        cwd=cwd,
        verbose=args.verbose,
        settings_file=_settings_file(args.settings),
        diagnostics_file=_existing_file(args.diagnostics, flag="--diagnostics"),
        mcp_configs=mcp_configs,
        strict_mcp_config=args.strict_mcp_config,
        fallback_model=args.fallback_model,
        **_session_flags(args),
        append_system_prompt=append,
        system_prompt=system_prompt,
        tools=_tools_flag(args.tools),
        max_budget_usd=args.max_budget_usd,
        add_dirs=tuple(add_dirs),
        input_format=args.input_format,
        include_partial_messages=args.include_partial_messages,
        approve_memory_imports=args.approve_memory_imports,
    )
    if args.offline:
        return _run_offline(options, args)
    return run_headless(options, tls=tls)


def _run_offline(options: HeadlessOptions, args: argparse.Namespace) -> int:
    """``run -p --offline``: the run against the bundled trial model, served on 127.0.0.1 for
    the length of the run (the same model as ``serve --offline``)."""
    import dataclasses
    import os

    from lsp_agent.demo.trial import TRIAL_MODEL, offline_environ, trial_endpoint
    from lsp_agent.headless.runner import run_headless

    for flag, value in (("--model", args.model), ("--fallback-model", args.fallback_model)):
        if value:
            raise UsageError(f"--offline plays the bundled scripted model; {flag} does not apply")
    with trial_endpoint("cli") as base_url:
        return run_headless(
            dataclasses.replace(options, model=TRIAL_MODEL),
            environ=offline_environ(os.environ, base_url=base_url),
        )


def _text_flag(text: str | None, file: str | None, *, flag: str) -> str | None:
    """``FLAG TEXT`` or ``FLAG-file FILE`` (the file's text); both at once is a usage error,
    as is a missing or unreadable file."""
    if file is None:
        return text
    if text is not None:
        raise UsageError(f"{flag} and {flag}-file cannot be used together")
    path = _existing_file(file, flag=f"{flag}-file")
    assert path is not None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{flag}-file {file!r}: {exc}") from None


def _tools_flag(values: list[str] | None) -> tuple[str, ...] | None:
    """``--tools`` as tool names (``None``: not given or ``default``, every built-in tool;
    ``()``: none), as Claude Code reads it."""
    if values is None:
        return None
    names = split_rules([values])
    if names == ("default",):
        return None
    if "default" in names:
        raise UsageError('--tools "default" cannot be combined with tool names')
    return names


def _check_mcp_config(value: str, *, cwd: Path) -> None:
    """An ``--mcp-config`` value must be a JSON object, given inline or as a file; raises
    :class:`UsageError` naming the problem otherwise (the run must not start without the
    servers it was told to use)."""
    import json
    from pathlib import Path

    if value.lstrip().startswith("{"):
        where, text = "--mcp-config (inline JSON)", value
    else:
        path = (cwd / Path(value).expanduser()).resolve()
        where = f"--mcp-config {value!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(f"{where}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{where}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{where}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise UsageError(f"{where}: invalid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise UsageError(f'{where}: expected a JSON object ({{"mcpServers": {{...}}}})')


def _session_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The session flags of ``run``, checked as Claude Code checks them."""
    resuming = args.continue_session or args.resume is not None
    if args.fork_session and not resuming:
        raise UsageError("--fork-session needs --continue or --resume")
    if args.session_id is not None:
        import uuid

        try:
            uuid.UUID(args.session_id)
        except ValueError:
            raise UsageError(f"--session-id must be a UUID, got {args.session_id!r}") from None
        if resuming and not args.fork_session:
            raise UsageError("--session-id with --continue/--resume needs --fork-session")
    return {
        "continue_session": args.continue_session,
        "resume": args.resume,
        "fork_session": args.fork_session,
        "session_id": args.session_id,
        "persist": args.persist,
    }


def _rewind(args: argparse.Namespace) -> int:
    from pathlib import Path

    from lsp_agent.headless.rewind import RewindOptions, run_rewind

    options = RewindOptions(
        session_id=args.session, message_id=args.to, restore=args.restore, cwd=Path(args.cwd)
    )
    return run_rewind(options)


def _sessions(args: argparse.Namespace) -> int:
    from pathlib import Path

    from lsp_agent.headless.sessions import SessionsOptions, run_sessions

    if args.action == "list" and args.session is not None:
        raise UsageError(f"unexpected argument {args.session!r} (sessions rm ID removes one)")
    options = SessionsOptions(
        action=args.action,
        session_id=args.session,
        as_json=args.json,
        all_projects=args.all_projects,
        yes=args.yes,
        cwd=Path(args.cwd),
    )
    return run_sessions(options)


def _mcp(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from lsp_agent.cli.mcp_parser import LOGIN_WAIT_S
    from lsp_agent.headless.mcp_commands import LIST_WAIT_S, McpCommandOptions, run_mcp

    if (args.action == "list") != (args.name is None):
        raise UsageError(
            "mcp list takes no NAME" if args.action == "list" else f"mcp {args.action} needs NAME"
        )
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    cwd = Path(args.cwd).resolve()
    if not cwd.is_dir():
        raise UsageError(f"--cwd {args.cwd!r} is not a directory")
    default = LOGIN_WAIT_S if args.action == "login" else LIST_WAIT_S
    options = McpCommandOptions(
        action=args.action,
        name=args.name,
        cwd=cwd,
        as_json=args.json,
        timeout_s=default if args.timeout is None else args.timeout,
        environ=os.environ,
    )
    return run_mcp(options)


def _demo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from lsp_agent.demo.runner import DemoOptions, run_demo

    workdir = Path(args.workdir).resolve() if args.workdir else None
    if workdir is not None and workdir.exists() and any(workdir.iterdir()):
        raise UsageError(f"--workdir {args.workdir!r} is not empty")
    return run_demo(
        DemoOptions(
            yes=args.yes,
            keep=args.keep,
            workdir=workdir,
            model=args.model,
        )
    )


def _swallowed_prompt_hint(args: argparse.Namespace) -> str:
    """When a run has no prompt, the flag that may have taken it as a value (flags that take
    several values, and ``--resume``'s optional id, read on past the prompt as Claude Code's
    do): a hint naming it, or ``""``."""
    if args.prompt is not None:
        return ""
    flags = [
        flag
        for flag, value in (
            ("--mcp-config", args.mcp_config),
            ("--allowedTools", args.allowed_tools),
            ("--disallowedTools", args.disallowed_tools),
            ("--add-dir", args.add_dirs),
        )
        if value
    ]
    if args.resume:
        return (
            f" (--resume took {args.resume!r} as the session id: give the id, "
            "or put the prompt first)"
        )
    if not flags:
        return ""
    return (
        f" ({flags[-1]} takes several values and may have taken it: put the prompt first, "
        "or end the flags with --)"
    )

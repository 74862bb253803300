"""The ``lsp-agent`` command: ``serve`` (the language server), ``run -p`` (headless) and ``demo``.

Only :mod:`argparse` and the standard library are imported at module level: every subcommand
imports what it needs when it runs, so ``lsp-agent --version`` starts in a few milliseconds
and never loads pygls, lsprotocol, anthropic or pydantic.

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

from lsp_agent import __version__

if TYPE_CHECKING:
    from pathlib import Path

# Exit codes (the same values as lsp_agent.headless.exit_codes.ExitCode, which this module does
# not import so that `--version` loads nothing beyond argparse).
_EXIT_USAGE = 2
_EXIT_INTERRUPTED = 130

OUTPUT_FORMATS = ("text", "json", "stream-json")
INPUT_FORMATS = ("text", "stream-json")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
COMMANDS = ("serve", "run", "daemon", "demo")
PRINT_FLAGS = ("-p", "--print")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

_RUN_EPILOG = """\
exit codes:
  0    success
  1    error during execution (e.g. the model endpoint is unreachable)
  2    usage error
  3    the turn stopped at --max-turns
  130  interrupted (SIGINT); the turn was cancelled cleanly

environment:
  ANTHROPIC_API_KEY   API key for the Messages API
  ANTHROPIC_BASE_URL  endpoint (any server speaking the Messages API)
  ANTHROPIC_MODEL     model name or alias (opus, sonnet, haiku) when --model is not given
  ANTHROPIC_DEFAULT_OPUS_MODEL / _SONNET_MODEL / _HAIKU_MODEL  what each alias stands for
  CLAUDE_CODE_USE_BEDROCK=1 (AWS_REGION)  Amazon Bedrock (extra: bedrock)
  CLAUDE_CODE_USE_VERTEX=1 (CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID)  Vertex AI (extra: vertex)
  HTTPS_PROXY, SSL_CERT_FILE  proxy and trusted certificates
  LSP_AGENT_MAX_RETRIES  retries of a failed model request (default 4)
"""


class UsageError(Exception):
    """Bad command-line input found after parsing; the message names the problem (exit 2)."""


def build_parser() -> argparse.ArgumentParser:
    """The complete argument parser (no side effects; cheap to build)."""
    parser = argparse.ArgumentParser(
        prog="lsp-agent",
        description="A coding agent that lives inside a language server. "
        "`lsp-agent -p [flags] PROMPT` is `lsp-agent run -p [flags] PROMPT` (Claude Code's -p).",
    )
    parser.add_argument("--version", action="version", version=f"lsp-agent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="run the language server (stdio by default)",
        description="Run the lsp-agent language server. In stdio mode stdout is the LSP wire: "
        "logs go to stderr or --log-file.",
    )
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)"
    )
    transport.add_argument(
        "--tcp", metavar="HOST:PORT", type=_host_port, help="listen on a TCP socket instead"
    )
    serve.add_argument("--log-file", metavar="FILE", help="write the log to FILE")
    serve.add_argument(
        "--offline",
        action="store_true",
        help="try it without an API key: a bundled scripted model answers (questions about "
        "a file, a two-hunk edit, a command), not Claude",
    )
    serve.add_argument(
        "--settings",
        metavar="FILE",
        help="an extra settings file (Claude Code's settings.json shape), above the project "
        "and user settings",
    )
    serve.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=LOG_LEVELS,
        help="log level (default: INFO)",
    )

    run = commands.add_parser(
        "run",
        help="run one prompt headless and exit (like `claude -p`)",
        description="Run one prompt against the files on disk and print the result.",
        epilog=_RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "-p",
        "--print",
        dest="print_mode",
        action="store_true",
        help="print mode, as in Claude Code (`run` always is; the flag may come anywhere)",
    )
    run.add_argument(
        "prompt",
        nargs="?",
        metavar="PROMPT",
        help="the prompt; piped stdin is appended to it; with no PROMPT (or -) the prompt is "
        "read from stdin",
    )
    run.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="text",
        help="text: final answer; json: one result object; "
        "stream-json: one JSON event per line (default: text)",
    )
    run.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        default=None,
        help="default: only read-only tools run (asks become denials); "
        "acceptEdits: edits inside the project run too; plan: read-only; "
        "bypassPermissions: everything runs (default: permissions.defaultMode of the "
        "settings, else default)",
    )
    run.add_argument(
        "--settings",
        metavar="FILE",
        help="an extra settings file (Claude Code's settings.json shape), above the project "
        "and user settings; the project's .claude/settings*.json apply too (a headless run "
        "trusts its directory)",
    )
    run.add_argument(
        "--diagnostics",
        metavar="FILE",
        help="verify the run's edits with the language servers configured in FILE (JSON: "
        "the diagnostics settings, e.g. a managed `ruff server`); after each edit the model "
        "sees the diagnostics of the exact text it wrote (docs/verification.md)",
    )
    run.add_argument(
        "--mcp-config",
        dest="mcp_config",
        action="append",
        nargs="+",
        default=[],
        metavar="CONFIG",
        help='MCP servers from JSON files or strings ({"mcpServers": {...}}, the .mcp.json '
        "shape), added to the configured ones; allow their tools with --allowedTools "
        "mcp__<server> (docs/mcp.md)",
    )
    run.add_argument(
        "--strict-mcp-config",
        action="store_true",
        help="use only the MCP servers of --mcp-config (ignore .mcp.json and ~/.claude.json)",
    )
    run.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        nargs="+",
        default=[],
        metavar="RULE",
        help='rules allowed without asking, e.g. "Edit" "Bash(pytest:*)" '
        "(comma or space separated, repeatable)",
    )
    run.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        nargs="+",
        default=[],
        metavar="RULE",
        help="rules always denied (comma or space separated, repeatable)",
    )
    run.add_argument(
        "--max-turns",
        type=_positive_int,
        metavar="N",
        help="stop after N model requests (exit code 3)",
    )
    run.add_argument(
        "--model",
        help="model name or alias (opus, sonnet, haiku; default: $ANTHROPIC_MODEL or the "
        "built-in default)",
    )
    run.add_argument(
        "--fallback-model",
        metavar="MODEL",
        help="switch to MODEL when the model is overloaded (HTTP 529 after the retries)",
    )
    run.add_argument("--cwd", metavar="DIR", help="project directory (default: the current one)")
    run.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="continue the newest saved session of the directory (docs/sessions.md)",
    )
    run.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="resume a saved session by id (without ID: the newest of the directory)",
    )
    run.add_argument(
        "--fork-session",
        action="store_true",
        help="with --continue/--resume: continue in a new session, leaving the original as is",
    )
    run.add_argument("--session-id", metavar="UUID", help="the id of the new session (a UUID)")
    run.add_argument(
        "--no-session-persistence",
        dest="persist",
        action="store_false",
        help="do not save the session (no transcript is written)",
    )
    run.add_argument(
        "--verbose",
        action="store_true",
        help="on stderr: one line per model request (status, tokens, ms), per tool call and "
        "per permission decision",
    )
    _add_print_mode_flags(run)

    daemon = commands.add_parser(
        "daemon",
        help="start, stop or query the background process that gives `run -p` a warm start",
        description="A per-user background process (Unix socket, private to this user) that "
        "runs `lsp-agent run -p` invocations with everything already loaded. While it runs, "
        "`run -p` hands its whole invocation (arguments, directory, environment, stdin/stdout/"
        "stderr) to it and the result is the same as running in-process; with no daemon, or "
        "one that does not answer within a second, `run -p` runs in-process. Set "
        "LSP_AGENT_NO_DAEMON=1 to never use it.",
    )
    daemon.add_argument("action", choices=("start", "stop", "status", "serve"))
    daemon.add_argument(
        "--idle-timeout",
        type=_positive_int,
        default=1800,
        metavar="S",
        help="exit after S seconds without a run (default 1800)",
    )

    rewind = commands.add_parser(
        "rewind",
        help="undo the file changes of a session's prompts, from one prompt on",
        description="Restore the files a session's turns changed, from the prompt MESSAGE_ID "
        "on (its id from /rewind or lspAgent/session/checkpoints; a unique prefix of 6+ "
        "characters will do), keeping changes made since by three-way merge (conflict "
        "markers where they overlap; exit status 3). Created files are removed, deleted ones "
        "come back; nothing else is touched.",
    )
    rewind.add_argument("--session", required=True, metavar="ID", help="the session's id")
    rewind.add_argument(
        "--to", metavar="MESSAGE_ID", help="the prompt's id (without it: list the prompts)"
    )
    rewind.add_argument(
        "--restore",
        choices=("code", "conversation", "both"),
        default="code",
        help="what to restore (the command line restores code; default code)",
    )
    rewind.add_argument(
        "--cwd", default=".", metavar="DIR", help="the session's project folder (default: .)"
    )

    demo = commands.add_parser(
        "demo",
        help="watch the agent fix a bug in a bundled project through the LSP door",
        description="Copy a small buggy project to a temporary directory, start `lsp-agent "
        "serve`, drive it like an editor and run the project's tests at the end. Uses Claude "
        "when ANTHROPIC_API_KEY is set, else a bundled scripted model (offline).",
    )
    demo.add_argument(
        "--yes", "-y", action="store_true", help="approve every permission request without asking"
    )
    demo.add_argument("--keep", action="store_true", help="keep the temporary project")
    demo.add_argument(
        "--workdir", metavar="DIR", help="copy the project into DIR (must be empty or missing)"
    )
    demo.add_argument(
        "--offline",
        action="store_true",
        help="use the bundled scripted model even if ANTHROPIC_API_KEY is set",
    )
    demo.add_argument("--model", help="model name when using Claude")
    return parser


def _add_print_mode_flags(run: argparse.ArgumentParser) -> None:
    """The flags of Claude Code's ``-p`` mode beyond the first set (README: "Claude Code's -p
    flags")."""
    run.add_argument(
        "--append-system-prompt",
        metavar="TEXT",
        help="text appended to the system prompt",
    )
    run.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="replace the built-in system prompt (memory files such as CLAUDE.md still apply)",
    )
    run.add_argument(
        "--add-dir",
        dest="add_dirs",
        action="append",
        nargs="+",
        default=[],
        metavar="DIR",
        help="more directories the agent may work in (each must exist)",
    )
    run.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        help="the same as --permission-mode bypassPermissions: every tool call runs unasked",
    )
    run.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default="text",
        help="text: the prompt (and piped stdin); stream-json: user messages as JSON lines on "
        "stdin, one turn each (default: text)",
    )
    run.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="with --output-format stream-json: also the model's streaming events, as "
        '{"type": "stream_event", "event": ...} lines',
    )


def route_print_mode(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``run`` put in front when it is Claude Code's form ``-p [flags] PROMPT``
    (a ``-p``/``--print`` anywhere and no subcommand first); otherwise unchanged."""
    args = list(argv)
    if args and args[0] in COMMANDS:
        return args
    if any(arg in PRINT_FLAGS for arg in args):
        return ["run", *args]
    return args


def split_rules(groups: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Flatten ``--allowedTools`` values into single rules.

    Each value may hold several rules separated by commas or whitespace; separators inside
    parentheses belong to the rule (``"Bash(git log:*), Edit"`` is two rules). Raises
    :class:`UsageError` for unbalanced parentheses.
    """
    rules: list[str] = []
    for group in groups:
        for value in group:
            rules.extend(_split_rule_text(value))
    return tuple(dict.fromkeys(rules))


def _split_rule_text(text: str) -> list[str]:
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise UsageError(f"unbalanced ')' in tool rule list: {text!r}")
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                rules.append("".join(current))
                current = []
            continue
        current.append(char)
    if depth != 0:
        raise UsageError(f"unbalanced '(' in tool rule list: {text!r}")
    if current:
        rules.append("".join(current))
    return rules


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (e.g. 127.0.0.1:2087), got {text!r}")
    return host.strip("[]"), int(port)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the subcommand, return its exit code.

    Called without ``argv`` (a process of its own), ``run`` is handed over to the background
    daemon when one runs; with an explicit ``argv`` (the daemon's own child, tests, embedding)
    it runs here.

    Called without ``argv`` (the console script, ``python -m lsp_agent``), a finished ``run``
    ends the process at once after flushing its output (:func:`_exit_now`): tearing down
    the interpreter after the model SDK was imported costs about a quarter of a second,
    which a headless run spends on every call. With an explicit ``argv`` (tests, embedding)
    it returns normally.
    """
    parser = build_parser()
    routed = route_print_mode(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(routed)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "run":
            handed = _hand_over(routed) if argv is None else None
            code = _run(args) if handed is None else handed
            if argv is None:
                _exit_now(code)
            return code
        if args.command == "daemon":
            return _daemon(args)
        if args.command == "demo":
            return _demo(args)
        if args.command == "rewind":
            return _rewind(args)
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
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    logging.shutdown()
    os._exit(code)


def _serve(args: argparse.Namespace) -> int:
    import logging
    from pathlib import Path

    # serve() sends logs to stderr or the log file: stdout is the LSP wire in stdio mode.
    from lsp_agent.lsp.server import serve

    settings_file = _settings_file(args.settings)
    log_file = Path(args.log_file) if args.log_file else None
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
    )


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

    return hand_over(argv, environ=os.environ, cwd=os.getcwd())


def _daemon(args: argparse.Namespace) -> int:
    import os

    from lsp_agent.daemon import client

    if not client.supported():
        raise UsageError("the daemon needs Linux (Unix sockets with peer credentials)")
    if args.action == "serve":
        from lsp_agent.daemon.paths import socket_path
        from lsp_agent.daemon.server import DaemonConfig, DaemonRunningError, serve

        config = DaemonConfig(
            socket_path=socket_path(os.environ),
            idle_timeout_s=float(args.idle_timeout),
            main=main,
            preload=_preload_run,
        )
        try:
            return serve(config)
        except (DaemonRunningError, PermissionError) as exc:
            print(f"lsp-agent: {exc}", file=sys.stderr)
            return 1
    if args.action == "status":
        info = client.status(os.environ)
        if info is None:
            print("lsp-agent daemon: not running")
            return 1
        print(
            f"lsp-agent daemon: running (pid {info['pid']}, {info['running']} running, "
            f"{info['served']} served)"
        )
        return 0
    if args.action == "stop":
        stopped = client.stop(os.environ)
        print("lsp-agent daemon: stopped" if stopped else "lsp-agent daemon: not running")
        return 0
    return _start_daemon(args.idle_timeout)


def _start_daemon(idle_timeout: int) -> int:
    import os
    import subprocess
    import time

    from lsp_agent.daemon import client
    from lsp_agent.daemon.paths import ensure_private_dir, socket_path

    info = client.status(os.environ)
    if info is not None:
        print(f"lsp-agent daemon: already running (pid {info['pid']})")
        return 0
    path = socket_path(os.environ)
    try:
        ensure_private_dir(path.parent)
    except PermissionError as exc:
        print(f"lsp-agent: {exc}", file=sys.stderr)
        return 1
    log_path = client.daemon_log(os.environ)
    with open(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as log:
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lsp_agent",
                "daemon",
                "serve",
                "--idle-timeout",
                str(idle_timeout),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            start_new_session=True,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = client.status(os.environ)
        if info is not None:
            print(f"lsp-agent daemon: started (pid {info['pid']}, socket {path})")
            return 0
        time.sleep(0.05)
    print(f"lsp-agent: the daemon did not start; see {log_path}", file=sys.stderr)
    return 1


def _preload_run() -> None:
    """Import what a ``run -p`` loads before its first model request."""
    import anthropic  # noqa: F401

    import lsp_agent.headless.runner
    import lsp_agent.model.anthropic
    import lsp_agent.sessions.manager  # noqa: F401
    from lsp_agent.tools.registry import default_tools

    default_tools().specs()


def _run(args: argparse.Namespace) -> int:
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
        raise UsageError(str(exc)) from None
    cwd = Path(args.cwd or ".").resolve()
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
        mcp_configs=tuple(value for group in args.mcp_config for value in group),
        strict_mcp_config=args.strict_mcp_config,
        fallback_model=args.fallback_model,
        **_session_flags(args),
        append_system_prompt=args.append_system_prompt,
        system_prompt=args.system_prompt,
        add_dirs=tuple(add_dirs),
        input_format=args.input_format,
        include_partial_messages=args.include_partial_messages,
    )
    return run_headless(options)


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
            offline=args.offline,
            model=args.model,
        )
    )

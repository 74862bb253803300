"""The ``lsp-agent`` command line: the argument parser of every subcommand (``serve``,
``run``, ``daemon``, ``demo``; ``rewind`` and ``sessions`` in
:mod:`lsp_agent.cli.session_commands`), Claude Code's ``-p`` routing, and the parsing of
flag values (permission rules, ``HOST:PORT``, positive integers). Only :mod:`argparse` and the
standard library are imported, so ``lsp-agent --version`` stays light.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

from lsp_agent import __version__
from lsp_agent.cli.bg_parser import BACKGROUND_COMMANDS, add_background_commands, positive_int
from lsp_agent.cli.mcp_parser import add_mcp_parser
from lsp_agent.cli.session_commands import add_rewind_parser, add_sessions_parser

OUTPUT_FORMATS = ("text", "json", "stream-json")


INPUT_FORMATS = ("text", "stream-json")


PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


COMMANDS = ("serve", "run", "daemon", "demo", "rewind", "sessions", "mcp", *BACKGROUND_COMMANDS)


PRINT_FLAGS = ("-p", "--print")


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


_RUN_EPILOG = """\
exit codes:
  0    success
  1    error during execution (e.g. the model endpoint is unreachable), or not found
       (no such session for --resume/--continue, or it is in use)
  2    usage error (the command line itself is wrong)
  3    the turn stopped at --max-turns
  130  interrupted (SIGINT); the turn was cancelled cleanly

environment (every variable lsp-agent reads; a settings file's "env" beats the process's
where a session reads it, but the endpoint, its credentials and a proxy come from the
process only):
  ANTHROPIC_API_KEY     API key for the Messages API (x-api-key)
  ANTHROPIC_AUTH_TOKEN  bearer token instead of an API key (Authorization header)
  ANTHROPIC_BASE_URL    endpoint (any server speaking the Messages API)
  ANTHROPIC_MODEL       model name or alias (opus, sonnet, haiku) when --model is not given
  ANTHROPIC_DEFAULT_OPUS_MODEL / _SONNET_MODEL / _HAIKU_MODEL  what each alias stands for
  CLAUDE_CODE_USE_BEDROCK=1  Amazon Bedrock (extra: bedrock): AWS_REGION or
                        AWS_DEFAULT_REGION, ANTHROPIC_BEDROCK_BASE_URL,
                        CLAUDE_CODE_SKIP_BEDROCK_AUTH=1 (unsigned, for a gateway)
  CLAUDE_CODE_USE_VERTEX=1   Vertex AI (extra: vertex): CLOUD_ML_REGION,
                        VERTEX_REGION_CLAUDE_<MODEL> (one model's region),
                        ANTHROPIC_VERTEX_PROJECT_ID, ANTHROPIC_VERTEX_BASE_URL,
                        CLAUDE_CODE_SKIP_VERTEX_AUTH=1 (no Google credentials, for a gateway)
  HTTPS_PROXY, SSL_CERT_FILE  proxy and trusted certificates
  API_TIMEOUT_MS        read timeout of a model request (ms)
  LSP_AGENT_CONNECT_TIMEOUT_MS  connect timeout of a model request (ms)
  LSP_AGENT_MAX_RETRIES retries of a failed model request (default 4)
  LSP_AGENT_DATA_DIR    where sessions and checkpoints are saved (default: the user data
                        folder)
  LSP_AGENT_NO_DAEMON=1 never hand the run to the background daemon
  LSP_AGENT_LEAN_HTTP=0 the SDK's default HTTP transport instead of the lean one
  LSP_AGENT_BACKGROUND_REQUESTS=0  no model requests off the turn (session titles,
                        summaries prepared ahead; the backgroundRequests setting)
  XDG_RUNTIME_DIR       where the daemon's socket lives
  MCP_TIMEOUT, MCP_TOOL_TIMEOUT, MAX_MCP_OUTPUT_TOKENS  MCP server start-up and call
                        timeouts (ms), largest MCP tool result (tokens)
  BASH_MAX_OUTPUT_LENGTH  Bash output kept inline (characters)
  DISABLE_AUTO_COMPACT, DISABLE_COMPACT, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE  compaction
  CLAUDE_CODE_DISABLE_AUTO_MEMORY=1  no auto memory folder

no API key? `lsp-agent run -p --offline PROMPT` answers with a bundled scripted model, and
`lsp-agent demo` shows the agent fixing a bug through the editor door.
"""


class UsageError(Exception):
    """Bad command-line input found after parsing; the message names the problem (exit 2)."""


UNSUPPORTED_CLAUDE_CODE_FLAGS = frozenset(
    {
        "--allow-dangerously-skip-permissions",
        "--setting-sources",
        "--permission-prompt-tool",
        "--json-schema",
        "--replay-user-messages",
        "--agents",
        "--agent",
        "--betas",
        "--debug",
        "--debug-file",
        "--effort",
        "--bare",
        "--disable-slash-commands",
        "--plugin-dir",
        "--chrome",
        "--ide",
        "--name",
        "--append-subagent-system-prompt",
    }
)
"""Flags of Claude Code's CLI reference that lsp-agent does not have (README: "Claude Code's
-p flags" says why, flag by flag)."""


class CliParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line naming the problem and where help is,
    not the whole usage (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``lsp-agent: error: MESSAGE (see PROG --help)`` to stderr and exit 2 (every
        error of every subcommand starts ``lsp-agent: error:``)."""
        self.exit(2, f"lsp-agent: error: {message} (see {self.prog} --help)\n")


def unknown_arguments_error(extras: Sequence[str], *, prog: str) -> str:
    """The one-line error for arguments no parser took (``extras`` of ``parse_known_args``):
    the first unknown option by name (a Claude Code flag lsp-agent lacks says so), else the
    stray argument."""
    options = [arg for arg in extras if arg.startswith("-") and arg != "-"]
    if options:
        name = options[0].split("=", 1)[0]
        if name in UNSUPPORTED_CLAUDE_CODE_FLAGS:
            return (
                f"lsp-agent: error: {name} is a Claude Code flag lsp-agent does not support "
                '(README: "Claude Code\'s -p flags")'
            )
        return f"lsp-agent: error: unknown option {name} (see {prog} --help)"
    return (
        f"lsp-agent: error: unexpected argument {extras[0]!r}: the prompt is one argument "
        f"(quote it; see {prog} --help)"
    )


def build_parser() -> argparse.ArgumentParser:
    """The complete argument parser (no side effects; cheap to build)."""
    parser = CliParser(
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
    _add_serve_model_flags(serve)
    serve.add_argument(
        "--settings",
        metavar="FILE",
        help="an extra settings file (Claude Code's settings.json shape), above the project "
        "and user settings",
    )
    serve.add_argument(
        "--daemon",
        action="store_true",
        help="while this server runs, keep a warm daemon for `run -p` in the terminal "
        "(started unless one runs, stopped when the server exits; see `lsp-agent daemon`)",
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
        "bypassPermissions: everything runs; dontAsk: only what a rule allows (and read-only "
        "tools) runs, nothing asks (default: permissions.defaultMode of the "
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
        type=positive_int,
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
        "--approve-memory-imports",
        action="store_true",
        help="load @imports of the project's memory files (CLAUDE.md, rules) that leave the "
        "project, for this run (docs/memory.md; a project's own settings cannot approve them)",
    )
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
    _add_tool_and_budget_flags(run)

    add_rewind_parser(commands)
    add_sessions_parser(commands)
    add_mcp_parser(commands)

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
    add_background_commands(commands, run=run)
    return parser


def _add_serve_model_flags(serve: argparse.ArgumentParser) -> None:
    """``serve --offline`` and ``serve --fallback-model``."""
    serve.add_argument(
        "--offline",
        action="store_true",
        help="try it without an API key: a bundled scripted model answers (questions about "
        "a file, a two-hunk edit, a command), not Claude",
    )
    serve.add_argument(
        "--fallback-model",
        metavar="MODEL",
        help="switch a session to MODEL when its model is overloaded (HTTP 529 after the "
        "retries), as `run -p --fallback-model` does",
    )


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


def _add_tool_and_budget_flags(run: argparse.ArgumentParser) -> None:
    """Claude Code's ``--tools``, ``--max-budget-usd`` and the system prompt file flags, and
    ``--offline`` (lsp-agent's own)."""
    run.add_argument(
        "--tools",
        dest="tools",
        action="append",
        default=None,
        metavar="TOOLS",
        help='the built-in tools the model may use, e.g. "Bash,Edit,Read" (comma or space '
        'separated); "" for none, "default" for all (MCP tools are not affected)',
    )
    run.add_argument(
        "--max-budget-usd",
        type=_positive_float,
        metavar="USD",
        help="stop the run once its model requests cost more than USD dollars (list "
        "prices of the model table; result subtype error_max_budget_usd, exit code 1)",
    )
    run.add_argument(
        "--system-prompt-file",
        metavar="FILE",
        help="replace the built-in system prompt with the text of FILE",
    )
    run.add_argument(
        "--append-system-prompt-file",
        metavar="FILE",
        help="append the text of FILE to the system prompt",
    )
    run.add_argument(
        "--offline",
        action="store_true",
        help="try it without an API key: a bundled scripted model answers (not Claude; it "
        "knows a few questions about a file, an edit and a command)",
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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value

"""Argument parsing of ``lsp-agent``: subcommands, flags, rule lists and usage errors (exit 2)."""

from __future__ import annotations

import argparse

import pytest

from lsp_agent.cli import UsageError, build_parser, main, split_rules
from lsp_agent.cli.parser import COMMANDS, route_print_mode


def parse(*argv: str) -> object:
    return build_parser().parse_args(list(argv))


def test_version_prints_name_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == "lsp-agent 0.1.0\n"


def test_run_defaults() -> None:
    args = parse("run", "-p", "fix it")
    assert args.prompt == "fix it"
    assert args.output_format == "text"
    assert args.permission_mode is None  # the settings' defaultMode, else "default"
    assert args.settings is None
    assert args.allowed_tools == [] and args.disallowed_tools == []
    assert args.max_turns is None and args.model is None and args.cwd is None
    assert args.verbose is False


def test_run_claude_code_flags() -> None:
    args = parse(
        "run",
        "-p",
        "x",
        "--output-format",
        "stream-json",
        "--permission-mode",
        "bypassPermissions",
        "--allowedTools",
        "Edit,Read",
        "Bash(git log:*)",
        "--allowedTools",
        "Glob",
        "--disallowedTools",
        "Write",
        "--max-turns",
        "7",
        "--model",
        "claude-x",
        "--cwd",
        "/tmp",
        "--verbose",
    )
    assert args.output_format == "stream-json"
    assert args.permission_mode == "bypassPermissions"
    assert split_rules(args.allowed_tools) == ("Edit", "Read", "Bash(git log:*)", "Glob")
    assert split_rules(args.disallowed_tools) == ("Write",)
    assert (args.max_turns, args.model, args.cwd, args.verbose) == (7, "claude-x", "/tmp", True)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([["Edit Read"]], ("Edit", "Read")),
        ([["Edit,  Read,"]], ("Edit", "Read")),
        ([["Bash(npm run test:*), Edit(src/**)"]], ("Bash(npm run test:*)", "Edit(src/**)")),
        ([["Edit"], ["Edit", "Read"]], ("Edit", "Read")),
        ([[""]], ()),
    ],
)
def test_split_rules(values: list[list[str]], expected: tuple[str, ...]) -> None:
    assert split_rules(values) == expected


@pytest.mark.parametrize("bad", ["Bash(ls", "Edit)", "Bash((x)"])
def test_split_rules_rejects_unbalanced_parentheses(bad: str) -> None:
    with pytest.raises(UsageError, match="unbalanced"):
        split_rules([[bad]])


def test_serve_flags() -> None:
    args = parse("serve", "--tcp", "127.0.0.1:2087", "--log-file", "x.log", "--log-level", "debug")
    assert args.tcp == ("127.0.0.1", 2087)
    assert args.log_file == "x.log"
    assert args.log_level == "DEBUG"
    assert parse("serve").tcp is None


def test_demo_flags() -> None:
    args = parse("demo", "--yes", "--keep", "--workdir", "w", "--offline")
    assert (args.yes, args.keep, args.workdir, args.offline) == (True, True, "w", True)


@pytest.mark.parametrize(
    "argv",
    [
        ["run"],  # -p is required
        ["run", "-p", "x", "--output-format", "xml"],
        ["run", "-p", "x", "--permission-mode", "yolo"],
        ["run", "-p", "x", "--max-turns", "0"],
        ["run", "-p", "x", "--max-turns", "many"],
        ["serve", "--tcp", "2087"],
        ["serve", "--tcp", "host:99999"],
        ["serve", "--stdio", "--tcp", "127.0.0.1:1"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: lsp-agent" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "-p", "   "], "the prompt is empty"),
        (["run", "-p", "x", "--allowedTools", "Bash(ls"], "unbalanced"),
        (["run", "-p", "x", "--cwd", "/definitely/not/here"], "is not a directory"),
    ],
)
def test_checked_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_demo_workdir_must_be_empty(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    workdir = Path(str(tmp_path))
    (workdir / "something").write_text("x")
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--workdir", str(workdir)])
    assert exc.value.code == 2
    assert "is not empty" in capsys.readouterr().err


def test_every_subcommand_is_left_alone_by_print_mode_routing() -> None:
    """``-p`` anywhere routes to ``run`` only when no subcommand comes first; a subcommand the
    list misses (``rewind``, ``sessions`` once did) would be run as a prompt instead."""
    parser = build_parser()
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(COMMANDS) == set(subparsers.choices)
    for name in subparsers.choices:
        assert route_print_mode([name, "-p", "x"]) == [name, "-p", "x"]
    assert route_print_mode(["-p", "x"]) == ["run", "-p", "x"]

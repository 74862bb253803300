"""Read-only proofs beyond the corpus: getopt_long-style option parsing (abbreviations,
optional values, clusters), platform differences and the secret-variable heuristic."""

from __future__ import annotations

import pytest

from lsp_agent.permissions.getopt import UnsafeError, opts, parse_options
from lsp_agent.permissions.readonly import check_read_only, secret_variable

TABLE = opts(
    flags="-a --all",
    with_arg="-n --lines --exclude --exclude-dir",
    reads="-X --exclude-from",
    optional="-w --width --color --colour",
    lists="--files0-from",
    unsafe="-o --output",
)


def test_values_of_read_options_are_reads_in_every_spelling() -> None:
    for args in (
        ["-X", "f"],
        ["-Xf"],
        ["--exclude-from", "f"],
        ["--exclude-from=f"],
        ["--exclude-f=f"],
        ["-aXf"],
    ):
        assert parse_options([*args, "op"], TABLE).reads == ["f"], args


def test_optional_values_are_only_attached() -> None:
    parsed = parse_options(["-w", "op", "--width", "op2", "-w16", "--width=8"], TABLE)
    assert parsed.positionals == ["op", "op2"]
    assert parsed.values("-w", "--width") == ["16", "8"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--files0-from=x"], "files named inside"),
        (["--files0=x"], "--files0-from"),
        (["--out=x"], "--output"),
        (["-o", "x"], "writes files"),
        (["--excl=x"], "ambiguous"),  # --exclude/--exclude-dir (values) vs --exclude-from (read)
        (["--frob"], "unknown option --frob"),
        (["-q"], "unknown option -q"),
        (["-n"], "needs a value"),
    ],
)
def test_dangerous_unknown_and_ambiguous_options_raise(args: list[str], message: str) -> None:
    with pytest.raises(UnsafeError, match=message):
        parse_options(args, TABLE)


def test_an_ambiguous_prefix_of_options_of_one_kind_resolves() -> None:
    # getopt_long would refuse or pick one; either way the analysis is the same.
    parsed = parse_options(["--col", "op"], TABLE)
    assert parsed.positionals == ["op"]
    assert parse_options(["--exclude-d=x"], TABLE).options == [("--exclude-dir", "x")]


def test_permissive_tables_still_know_their_dangerous_options() -> None:
    table = opts(reads="--ignore-file", unsafe="--pre", permissive=True)
    assert parse_options(["--whatever=x", "-Q"], table).options == [
        ("--whatever", "x"),
        ("-Q", None),
    ]
    with pytest.raises(UnsafeError):
        parse_options(["--pr=x"], table)
    assert parse_options(["--ignore-f", "x"], table).reads == ["x"]


def test_posix_tables_stop_at_the_first_operand() -> None:
    table = opts(flags="-v", posix=True)
    assert parse_options(["-v", "cmd", "-x"], table).positionals == ["cmd", "-x"]


@pytest.mark.parametrize(
    ("argv", "platform", "ok"),
    [
        (["ps", "-ef"], "linux", True),
        (["ps", "-ef"], "darwin", False),  # BSD -e shows the environment
        (["ps", "-E"], "darwin", False),
        (["ps", "aux"], "linux", True),
        (["ps", "e"], "linux", False),
        (["ps", "-o", "pid,user", "-p", "1"], "linux", True),
        (["stat", "-f", "%z", "x"], "darwin", True),  # %z is read as an operand: checked
    ],
)
def test_platform_differences(argv: list[str], platform: str, ok: bool) -> None:
    assert check_read_only(argv, trusted=True, platform=platform).ok is ok


def test_bsd_option_with_a_value_never_hides_an_operand() -> None:
    verdict = check_read_only(["stat", "-f", "/etc/shadow"], trusted=True, platform="darwin")
    assert verdict.ok and "/etc/shadow" in verdict.reads
    verdict = check_read_only(["grep", "--context", "x", "/etc/shadow"], trusted=True)
    assert verdict.ok and "/etc/shadow" in verdict.reads


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ANTHROPIC_API_KEY", True),
        ("GITHUB_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("DB_PASSWORD", True),
        ("npm_config__auth", True),
        ("MYAPIKEY", True),
        ("HOME", False),
        ("PATH", False),
        ("PWD", False),
        ("BYPASS_CACHE", False),
        ("KEYBOARD_LAYOUT", False),
    ],
)
def test_secret_variable_names(name: str, secret: bool) -> None:
    assert secret_variable(name) is secret

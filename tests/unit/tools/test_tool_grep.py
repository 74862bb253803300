"""Grep: ripgrep content search, its modes and flags."""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from lsp_agent.tools.base import ToolError
from lsp_agent.tools.grep import GrepTool

from .conftest import Env

GREP = GrepTool()


@pytest.fixture
def project(env: Env) -> Env:
    env.write_text("src/app.py", "import os\n\ndef main():\n    print('Hello')\n    return 0\n")
    env.write_text("src/util.py", "def helper():\n    return 'hello world'\n")
    env.write_text("README.md", "Hello readers\n")
    os.utime(env.path("src/app.py"), (1_000, 1_000))
    os.utime(env.path("src/util.py"), (3_000, 3_000))
    os.utime(env.path("README.md"), (2_000, 2_000))
    return env


async def test_files_with_matches_is_default_newest_first(project: Env) -> None:
    out = await project.run(GREP, {"pattern": "ello", "-i": True})
    assert out.text.split("\n") == [
        "Found 3 files",
        str(project.path("src/util.py")),
        str(project.path("README.md")),
        str(project.path("src/app.py")),
    ]


async def test_case_sensitive_by_default(project: Env) -> None:
    out = await project.run(GREP, {"pattern": "Hello"})
    assert out.text.split("\n")[1:] == [
        str(project.path("README.md")),
        str(project.path("src/app.py")),
    ]


async def test_content_mode_with_line_numbers(project: Env) -> None:
    out = await project.run(GREP, {"pattern": "return", "output_mode": "content"})
    assert out.text.split("\n") == [
        f"{project.path('src/app.py')}:5:    return 0",
        f"{project.path('src/util.py')}:2:    return 'hello world'",
    ]


async def test_content_mode_without_line_numbers(project: Env) -> None:
    out = await project.run(GREP, {"pattern": "return 0", "output_mode": "content", "-n": False})
    assert out.text == f"{project.path('src/app.py')}:    return 0"


async def test_context_lines(project: Env) -> None:
    app = project.path("src/app.py")
    out = await project.run(
        GREP, {"pattern": "print", "output_mode": "content", "-B": 1, "-A": 1, "path": "src/app.py"}
    )
    assert out.text.split("\n") == [
        f"{app}-3-def main():",
        f"{app}:4:    print('Hello')",
        f"{app}-5-    return 0",
    ]
    out = await project.run(
        GREP, {"pattern": "print", "output_mode": "content", "-C": 2, "-A": 0, "path": str(app)}
    )
    assert out.text.split("\n") == [
        f"{app}-2-",
        f"{app}-3-def main():",
        f"{app}:4:    print('Hello')",
    ]


async def test_count_mode(project: Env) -> None:
    out = await project.run(GREP, {"pattern": "e", "output_mode": "count", "glob": "*.py"})
    lines = out.text.split("\n")
    assert lines[:2] == [f"{project.path('src/app.py')}:3", f"{project.path('src/util.py')}:2"]
    assert lines[-1] == "Found 5 matching lines in 2 files."
    assert out.raw_output == {"mode": "count", "count": 5}


async def test_head_limit(project: Env) -> None:
    out = await project.run(
        GREP, {"pattern": ".", "output_mode": "content", "path": "src/app.py", "head_limit": 2}
    )
    lines = out.text.split("\n")
    assert lines[:2] == [
        f"{project.path('src/app.py')}:1:import os",
        f"{project.path('src/app.py')}:3:def main():",
    ]
    assert lines[2] == "(showing the first 2 of 4 lines)"
    out = await project.run(GREP, {"pattern": "e", "head_limit": 1})
    assert out.text.split("\n")[:2] == ["Found 3 files", str(project.path("src/util.py"))]
    assert "showing the first 1 of 3" in out.text


async def test_glob_and_type_filters(project: Env) -> None:
    out = await project.run(GREP, {"pattern": "Hello", "glob": "*.md"})
    assert out.text.split("\n")[1:] == [str(project.path("README.md"))]
    out = await project.run(GREP, {"pattern": "Hello", "type": "py"})
    assert out.text.split("\n")[1:] == [str(project.path("src/app.py"))]
    out = await project.run(GREP, {"pattern": "Hello", "glob": "*.md *.py"})
    assert out.text.startswith("Found 2 files")


async def test_pattern_starting_with_dash_is_not_a_flag(env: Env) -> None:
    env.write_text("opts.txt", "use --files here\n-v is verbose\n")
    out = await env.run(GREP, {"pattern": "--files", "output_mode": "content"})
    assert out.text == f"{env.path('opts.txt')}:1:use --files here"
    out = await env.run(GREP, {"pattern": "-v", "output_mode": "content"})
    assert out.text == f"{env.path('opts.txt')}:2:-v is verbose"


async def test_no_matches_is_not_an_error(project: Env) -> None:
    out = await project.run(GREP, {"pattern": "zzz_nothing"})
    assert out.text == "No files found"
    assert not out.is_error
    out = await project.run(GREP, {"pattern": "zzz_nothing", "output_mode": "content"})
    assert out.text == "No matches found"


async def test_bad_regex_is_a_tool_error_with_ripgreps_message(project: Env) -> None:
    with pytest.raises(ToolError, match="regex parse error"):
        await project.run(GREP, {"pattern": "(unclosed"})


async def test_unknown_type_is_a_tool_error(project: Env) -> None:
    with pytest.raises(ToolError, match="unrecognized file type"):
        await project.run(GREP, {"pattern": "x", "type": "nosuchtype"})


async def test_gitignore_is_respected(env: Env) -> None:
    (env.root / ".git").mkdir()
    (env.root / ".git" / "HEAD").write_text("needle\n")
    env.write_text(".gitignore", "dist/\n")
    env.write_text("dist/bundle.js", "needle\n")
    env.write_text("src/a.js", "needle\n")
    env.write_text(".config/settings.js", "needle\n")
    out = await env.run(GREP, {"pattern": "needle"})
    assert set(out.text.split("\n")[1:]) == {
        str(env.path("src/a.js")),
        str(env.path(".config/settings.js")),
    }


async def test_multiline(env: Env) -> None:
    env.write_text("s.go", "type T struct {\n\tname string\n}\n")
    out = await env.run(GREP, {"pattern": r"struct \{.*?name", "output_mode": "content"})
    assert out.text == "No matches found"
    out = await env.run(
        GREP, {"pattern": r"struct \{.*?name", "output_mode": "content", "multiline": True}
    )
    assert out.text.split("\n") == [
        f"{env.path('s.go')}:1:type T struct {{",
        f"{env.path('s.go')}:2:\tname string",
    ]


async def test_crlf_lines_show_no_carriage_return(env: Env) -> None:
    env.write_bytes("w.txt", b"first\r\nsecond\r\n")
    out = await env.run(GREP, {"pattern": "sec", "output_mode": "content"})
    assert out.text == f"{env.path('w.txt')}:2:second"


async def test_reads_disk_flag_and_aliases_in_schema() -> None:
    assert GREP.reads_disk and not GREP.writes_disk
    assert GREP.read_only and GREP.concurrency_safe
    props = GREP.spec().input_schema["properties"]
    assert {"-i", "-n", "-A", "-B", "-C", "type", "glob", "head_limit", "multiline"} <= set(props)
    assert props["output_mode"]["enum"] == ["content", "files_with_matches", "count"]
    assert "file_type" not in props and "ignore_case" not in props


def test_python_names_are_not_accepted_as_keys() -> None:
    with pytest.raises(ValidationError):
        GREP.parse({"pattern": "x", "ignore_case": True})
    assert GREP.parse({"pattern": "x", "-i": True}).ignore_case is True

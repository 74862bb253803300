"""Line handling, the LF view's offset map, replacement mechanics and unified diffs."""

from __future__ import annotations

import pytest

from lsp_agent.tools._replace import replace_exact
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools._text import LfView, dominant_eol, split_lines
from lsp_agent.tools.base import ToolError
from lsp_agent.tools.diffing import unified_diff


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("\n", [""]),
        ("a", ["a"]),
        ("a\nb\n", ["a", "b"]),
        ("a\r\nb\rc\n\n", ["a", "b", "c", ""]),
        ("a\n\nb", ["a", "", "b"]),
        ("\n\n", ["", ""]),
        ("a\rb", ["a", "b"]),
        ("form\x0cfeed\u2028sep\n", ["form\x0cfeed\u2028sep"]),
    ],
)
def test_split_lines(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


@pytest.mark.parametrize(
    ("text", "eol"),
    [("", "\n"), ("a\nb\r\n", "\n"), ("a\r\nb\r\nc\n", "\r\n"), ("a\rb\rc", "\r")],
)
def test_dominant_eol(text: str, eol: str) -> None:
    assert dominant_eol(text) == eol


def test_lf_view_maps_offsets_back() -> None:
    original = "ab\r\ncd\ref\r\n"
    view = LfView(original)
    assert view.text == "ab\ncd\nef\n"
    for offset, char in enumerate(view.text):
        mapped = original[view.to_original(offset)]
        assert mapped == char or (char == "\n" and mapped == "\r")
    assert view.to_original(len(view.text)) == len(original)
    assert view.line_of(view.text.index("e")) == 3


def test_replacement_keeps_unchanged_breaks_exact() -> None:
    # the \n between 'b' and 'c' is LF in a CRLF file: it stays LF even though it lies inside
    # old_string, because it is not part of what changed
    result = replace_exact("a\r\nb\nc\r\n", "b\nc", "b\nC", replace_all=False)
    assert result.new_text == "a\r\nb\nC\r\n"
    assert (result.first_line, result.first_span, result.count) == (3, 1, 1)


def test_replacement_with_surrogate_free_non_bmp() -> None:
    result = replace_exact("x 🐍 y\n", "🐍", "🦀🦀", replace_all=False)
    assert result.new_text == "x 🦀🦀 y\n"


def test_normalised_equal_strings_are_no_change() -> None:
    with pytest.raises(ToolError, match="exactly the same"):
        replace_exact("a\r\n", "a\r\n", "a\n", replace_all=False)


def test_unified_diff_marks_missing_final_newline_and_hides_cr() -> None:
    diff = unified_diff("a\r\nb", "a\r\nc\r\n", label="f.txt")
    assert diff == (
        "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
    )


def test_unified_diff_new_file_and_no_change() -> None:
    assert (
        unified_diff(None, "x\n", label="n.txt") == "--- /dev/null\n+++ n.txt\n@@ -0,0 +1 @@\n+x\n"
    )
    assert unified_diff("same\n", "same\n", label="s.txt") == ""


def test_tidy_schema_collapses_optional_fields() -> None:
    schema = {
        "properties": {
            "a": {
                "title": "A",
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": None,
            },
            "b": {"title": "B", "type": "boolean", "default": False},
            "c": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        }
    }
    tidy_schema(schema)
    assert schema["properties"] == {
        "a": {"type": "integer", "minimum": 1},
        "b": {"type": "boolean", "default": False},
        "c": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    }


def _apply(old: str, diff: str) -> str:
    """``diff`` applied to ``old`` (LF texts), checking every context and removed line."""
    old_lines = old.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    rows = diff.splitlines(keepends=True)[2:]
    for row in rows:
        if row.startswith("@@"):
            first, _, count = row.split()[1][1:].partition(",")
            start = int(first) - 1 if count != "0" else int(first)
            out += old_lines[at:start]
            at = start
        elif row[0] in " -":
            assert old_lines[at] == row[1:]
            at += 1
            if row[0] == " ":
                out.append(row[1:])
        else:
            out.append(row[1:])
    return "".join(out + old_lines[at:])


def test_unified_diff_of_a_long_file_numbers_the_hunks_from_the_file_start() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 1001))
    new = old.replace("line 500\n", "line five hundred\n").replace("line 990\n", "")
    diff = unified_diff(old, new, label="f")
    assert diff.splitlines()[2:] == [
        "@@ -497,7 +497,7 @@",
        " line 497",
        " line 498",
        " line 499",
        "-line 500",
        "+line five hundred",
        " line 501",
        " line 502",
        " line 503",
        "@@ -987,7 +987,6 @@",
        " line 987",
        " line 988",
        " line 989",
        "-line 990",
        " line 991",
        " line 992",
        " line 993",
    ]
    assert _apply(old, diff) == new


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nb\nc\nd\n"),  # appended
        ("a\nb\nc\n", "z\na\nb\nc\n"),  # prepended
        ("x\ny\n", "x\nz\ny\n"),  # inserted between shared ends
        ("a\nb\n", "a\nb"),  # only the final newline goes
        ("p\nq\nr\ns\n", "p\nq\nr\ns\n" * 2),  # the old text is all shared start
        ("k\nk\nk\nk\n", "k\nk\nk\n"),  # repeated lines
        ("abc\n", "abd\n"),  # shared characters, not a shared line
    ],
)
def test_unified_diff_applies_back_whatever_the_texts_share(old: str, new: str) -> None:
    diff = unified_diff(old, new, label="f")
    if new.endswith("\n") and old.endswith("\n"):
        assert _apply(old, diff) == new
    assert diff.startswith("--- f\n+++ f\n@@ ")

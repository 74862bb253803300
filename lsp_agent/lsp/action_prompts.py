"""Prompts for the editor's agent code actions: "Fix with agent", "Explain with agent" and
"Ask agent about selection".

Each builds the user prompt of a session turn from what the editor shows: the problem (its
source, code, message and range), the code around it with line numbers, and the file's buffer
text (unsaved changes included) as an embedded resource. Lines in prompts are 1-based, as the
``Read`` tool shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsp_agent.diagnostics.positions import split_lines
from lsp_agent.protocol.prompt import PromptPart, PromptResource, PromptText

CONTEXT_LINES = 6
"""Lines shown before and after the problem in the prompt."""

COMMAND_FIX = "lspAgent.fixWithAgent"
COMMAND_EXPLAIN = "lspAgent.explainWithAgent"
COMMAND_ASK = "lspAgent.askAgent"
COMMAND_APPLY_SUGGESTION = "lspAgent.applySuggestion"
COMMANDS = (COMMAND_FIX, COMMAND_EXPLAIN, COMMAND_ASK)
"""``workspace/executeCommand`` commands that start a session turn."""


@dataclass(frozen=True, kw_only=True)
class Problem:
    """A diagnostic as the editor shows it: 0-based lines, code-point characters."""

    line: int
    character: int
    end_line: int
    message: str
    source: str | None = None
    code: str | None = None
    severity: str = "error"

    def describe(self, name: str) -> str:
        """``name:line:col [source code] message``."""
        label = " ".join(part for part in (self.source, self.code) if part)
        where = f"{name}:{self.line + 1}:{self.character + 1}"
        return (
            f"{self.severity} at {where}" + (f" [{label}]" if label else "") + f": {self.message}"
        )


def excerpt(text: str, first: int, last: int, *, context: int = CONTEXT_LINES) -> str:
    """Lines ``first``..``last`` (0-based, inclusive) of ``text`` with ``context`` lines around
    them, numbered ``cat -n`` style (1-based); the problem lines are marked with ``>``."""
    lines = split_lines(text)
    start = max(0, first - context)
    end = min(len(lines), last + context + 1)
    out = []
    for index in range(start, end):
        mark = ">" if first <= index <= last else " "
        out.append(f"{mark}{index + 1:6}\t{lines[index]}")
    return "\n".join(out)


def _buffer(path: Path, text: str) -> PromptResource:
    return PromptResource(path=path, text=text)


def _problems(*, path: Path, text: str, problems: list[Problem], cwd: Path) -> tuple[str, str, str]:
    """The file's display name, the problems as a bullet list, and the excerpt around them."""
    name = _display(path, cwd)
    first = min(p.line for p in problems)
    last = max(p.end_line for p in problems)
    listed = "\n".join(f"- {p.describe(name)}" for p in problems)
    return name, listed, excerpt(text, first, last)


def fix_prompt(*, path: Path, text: str, problems: list[Problem], cwd: Path) -> list[PromptPart]:
    """The prompt of "Fix with agent" for one or more problems in ``path``."""
    name, listed, around = _problems(path=path, text=text, problems=problems, cwd=cwd)
    return [
        PromptText(
            text=(
                f"Fix this problem in {name}:\n{listed}\n\nThe code around it (the problem lines "
                f"are marked with >):\n{around}\n\nMake the smallest "
                "change that fixes the cause, keep the style of the file, and check that the "
                "diagnostics of your edit are clean. The file's current editor text is attached."
            )
        ),
        _buffer(path, text),
    ]


def explain_prompt(
    *, path: Path, text: str, problems: list[Problem], cwd: Path
) -> list[PromptPart]:
    """The prompt of "Explain with agent": explain, change nothing."""
    name, listed, around = _problems(path=path, text=text, problems=problems, cwd=cwd)
    return [
        PromptText(
            text=(
                f"Explain this problem in {name} and how it could be fixed; do not change any "
                f"file:\n{listed}\n\nThe code around it:\n{around}"
            )
        ),
        _buffer(path, text),
    ]


def ask_prompt(
    *,
    path: Path,
    text: str,
    start_line: int,
    end_line: int,
    question: str | None,
    cwd: Path,
) -> list[PromptPart]:
    """The prompt of "Ask agent about selection" (lines 0-based, inclusive)."""
    name = _display(path, cwd)
    lines = split_lines(text)
    end_line = min(max(end_line, start_line), len(lines) - 1)
    selected = "\n".join(lines[start_line : end_line + 1])
    ask = question.strip() if question and question.strip() else "Explain what this code does."
    return [
        PromptText(text=f"{ask}\n\nAbout lines {start_line + 1}-{end_line + 1} of {name}:"),
        PromptResource(path=path, text=selected, start_line=start_line + 1, end_line=end_line + 1),
    ]


def _display(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)

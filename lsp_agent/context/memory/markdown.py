"""Memory-file Markdown: where the ``@imports`` are and which lines are block comments.

The text is parsed with markdown-it-py (CommonMark), so an ``@path`` inside a code span, a
fenced or indented code block, an HTML block or an inline HTML comment is not an import. An
import is ``@`` at the start of a line or after whitespace, followed by the path up to the next
whitespace; ``\\ `` keeps a space in the path (Claude Code's syntax, docs: "Import additional
files"). A path that starts with a quote is not an import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from lsp_agent.context.memory.types import Span

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

_PATH = re.compile(r"(?:[^\s\\]|\\ |\\(?! ))+")
"""The path after ``@``: non-space characters, ``\\ `` for a space."""

_TRAILING = ".,;:!?)]}'\""
"""Punctuation that ends a sentence rather than a path (``see @README.md.``)."""


@dataclass(frozen=True, kw_only=True)
class ImportSite:
    """An ``@path`` found in the text: ``target`` unescaped, ``span`` covering ``@`` and the
    path as written; ``bare`` is ``target`` without trailing punctuation (tried when the
    literal path does not exist)."""

    target: str
    bare: str
    span: Span


@dataclass(frozen=True, kw_only=True)
class ParsedMarkdown:
    """``imports`` in document order; ``text`` with block-level HTML comments removed."""

    imports: tuple[ImportSite, ...]
    text: str


def _import_rule(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    src = state.src
    if src[pos] != "@" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    match = _PATH.match(src, pos + 1)
    if match is None or match.group(0)[0] in "\"'@":
        return False
    if not silent:
        token = state.push("memory_import", "", 0)
        token.content = match.group(0)
        token.meta = {"offset": pos}
    state.pos = match.end()
    return True


@cache
def _parser() -> MarkdownIt:
    # Imported on the first memory file parsed: a folder without one never loads the parser.
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True})
    md.inline.ruler.before("text", "memory_import", _import_rule)
    return md


def parse_memory_markdown(text: str, *, line_offset: int = 0) -> ParsedMarkdown:
    """Find the imports of a memory file's body and strip its block-level HTML comments.

    ``line_offset`` is added to every line (the body starts after a frontmatter block).
    Never raises on any input text.
    """
    lines = text.split("\n")
    tokens = _parser().parse(text)
    comment_lines: set[int] = set()
    sites: list[ImportSite] = []
    for token in tokens:
        if token.map is None:
            continue
        if token.type == "html_block" and token.content.lstrip().startswith("<!--"):
            comment_lines.update(range(token.map[0], token.map[1]))
        if token.type != "inline" or not token.children:
            continue
        for child in token.children:
            if child.type != "memory_import":
                continue
            span = _locate(token.content, child.meta["offset"], child.content, lines, token.map)
            written = child.content
            target = written.replace("\\ ", " ")
            bare = target.rstrip(_TRAILING) or target
            sites.append(
                ImportSite(
                    target=target,
                    bare=bare,
                    span=Span(line=span.line + line_offset, start=span.start, end=span.end),
                )
            )
    kept = [line for i, line in enumerate(lines) if i not in comment_lines]
    return ParsedMarkdown(imports=tuple(sites), text="\n".join(kept))


def _locate(content: str, offset: int, written: str, lines: list[str], block: list[int]) -> Span:
    """Map an offset in an inline token's content back to the source line and column.

    Each content line is its source line minus block markup in front (indentation, list and
    quote markers), so the column is found from the line's end; a heading's closing ``#``s or
    a table cell break that rule, and then the written import is searched for in the line.
    """
    before = content[:offset]
    index = before.count("\n")
    line_no = min(block[0] + index, block[1] - 1, len(lines) - 1)
    source = lines[line_no]
    content_line = content.split("\n")[index]
    column = offset - (before.rfind("\n") + 1)
    start = len(source.rstrip()) - len(content_line.rstrip())
    length = len(written) + 1
    if start >= 0 and source[start + column : start + column + length] == "@" + written:
        return Span(line=line_no, start=start + column, end=start + column + length)
    found = source.find("@" + written)
    found = max(found, 0)
    return Span(line=line_no, start=found, end=found + length)

"""The ``Grep`` tool: regex search of file contents via ripgrep."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from lsp_agent.protocol.events import Location, ToolKind
from lsp_agent.tools._files import model_safe
from lsp_agent.tools._mtimes import ParallelMtimes
from lsp_agent.tools._paths import display_path, resolve_search_path, search_target
from lsp_agent.tools._proc import Streamed
from lsp_agent.tools._rg import SmallRoots, base_args, exclude_args, stream_rg, timeout_note
from lsp_agent.tools._rgorder import CONTENT_ARGS, COUNT_ARGS, Ordered, PathOrdered
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools._tinygrep import literal_of, tiny_grep
from lsp_agent.tools._tinylist import TinyListings
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput

MAX_OUTPUT_CHARS = 30_000
"""Result text is cut at this many characters (with a note)."""

MAX_COLUMNS = 500
"""Matched lines longer than this (bytes) are shown as a preview."""

_MAX_RG_BYTES = 8 * 1024 * 1024
# Content and count output is read past the kept budget (so the kept part is the true
# path-order prefix and the totals are complete) up to this much, then ripgrep is stopped.
_MAX_READ_BYTES = 64 * 1024 * 1024

OutputMode = Literal["content", "files_with_matches", "count"]

DESCRIPTION = """\
A powerful search tool built on ripgrep

Usage:
- ALWAYS use Grep for search tasks. NEVER invoke `grep` or `rg` as a Bash command. The Grep \
tool has been optimized for correct permissions and access.
- Supports full regex syntax (e.g., "log.*Error", "function\\s+\\w+")
- Filter files with glob parameter (e.g., "*.js", "**/*.tsx") or type parameter (e.g., "js", \
"py", "rust")
- Output modes: "content" shows matching lines, "files_with_matches" shows only file paths \
(default), "count" shows match counts
- Pattern syntax: Uses ripgrep (not grep) - literal braces need escaping (use `interface\\{\\}` \
to find `interface{}` in Go code)
- Multiline matching: By default patterns match within single lines only. For cross-line \
patterns like `struct \\{[\\s\\S]*?field`, use `multiline: true`
- Searches the files on disk (files you edited are saved first); files ignored by .gitignore \
and version-control directories are skipped
- Paths in results are absolute"""


class GrepInput(ToolInput):
    """Input of ``Grep`` (Claude Code's shape; ``-i``/``-n``/``-A``/``-B``/``-C`` are aliases)."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    pattern: str = Field(
        description="The regular expression pattern to search for in file contents"
    )
    path: str | None = Field(
        default=None,
        description="File or directory to search in (rg PATH). Defaults to current working "
        "directory.",
    )
    glob: str | None = Field(
        default=None,
        description='Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob',
    )
    output_mode: OutputMode | None = Field(
        default=None,
        description='Output mode: "content" shows matching lines (supports -A/-B/-C context, '
        '-n line numbers, head_limit), "files_with_matches" shows file paths (supports '
        'head_limit), "count" shows match counts (supports head_limit). Defaults to '
        '"files_with_matches".',
    )
    before: int | None = Field(
        default=None,
        ge=0,
        alias="-B",
        description="Number of lines to show before each match (rg -B). Requires output_mode: "
        '"content", ignored otherwise.',
    )
    after: int | None = Field(
        default=None,
        ge=0,
        alias="-A",
        description="Number of lines to show after each match (rg -A). Requires output_mode: "
        '"content", ignored otherwise.',
    )
    context: int | None = Field(
        default=None,
        ge=0,
        alias="-C",
        description="Number of lines to show before and after each match (rg -C). Requires "
        'output_mode: "content", ignored otherwise.',
    )
    line_numbers: bool | None = Field(
        default=None,
        alias="-n",
        description='Show line numbers in output (rg -n). Requires output_mode: "content", '
        "ignored otherwise. Defaults to true.",
    )
    ignore_case: bool | None = Field(
        default=None, alias="-i", description="Case insensitive search (rg -i)"
    )
    file_type: str | None = Field(
        default=None,
        alias="type",
        description="File type to search (rg --type). Common types: js, py, rust, go, java, "
        "etc. More efficient than include for standard file types.",
    )
    head_limit: int | None = Field(
        default=None,
        ge=1,
        description='Limit output to first N lines/entries, equivalent to "| head -N". Works '
        "across all output modes: content (limits output lines), files_with_matches (limits "
        "file paths), count (limits count entries).",
    )
    multiline: bool | None = Field(
        default=None,
        description="Enable multiline mode where . matches newlines and patterns can span "
        "lines (rg -U --multiline-dotall). Default: false.",
    )


class GrepTool(Tool[GrepInput]):
    """Search file contents with ripgrep (never through a shell; the pattern follows ``--``).

    Raises :class:`ToolError` for an empty pattern, a missing path, ripgrep errors (bad regex,
    unknown type: ripgrep's message is passed on), a missing ``rg`` or a timeout. No match is
    not an error.
    """

    name: ClassVar[str] = "Grep"
    description: ClassVar[str] = DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = GrepInput
    kind: ClassVar[ToolKind] = "search"
    read_only: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True
    # ripgrep reads file contents from disk: the buffers the agent edited must be saved first.
    reads_disk: ClassVar[bool] = True
    writes_disk: ClassVar[bool] = False

    def __init__(self) -> None:
        self._small = SmallRoots()
        self._tiny = TinyListings()

    def title(self, inp: GrepInput) -> str:
        """``Grep <pattern>``."""
        return f"Grep {inp.pattern}"

    def target_paths(self, inp: GrepInput, ctx: ToolContext) -> tuple[Path, ...] | None:
        """The file or directory searched, whether or not it exists."""
        try:
            return (search_target(inp.path, ctx.cwd),)
        except ToolError:
            return None

    async def prepare(self, inp: GrepInput, ctx: ToolContext) -> Prepared:
        """Resolve the search path."""
        if not inp.pattern:
            raise ToolError("pattern is empty; give a regular expression to search for.")
        root = resolve_search_path(inp.path, ctx.cwd)
        where = display_path(root, ctx.cwd) if root != ctx.cwd.resolve() else ""
        return Prepared(
            title=f"Grep {inp.pattern!r}" + (f" in {where}" if where else ""),
            paths=(root,),
            locations=(Location(path=str(root)),),
        )

    async def call(self, inp: GrepInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        """Run ripgrep (unsorted, in parallel) and format its output for the chosen mode; the
        path order of content and count output is restored in-process. A literal searched in
        a tiny folder without ignore rules gets ripgrep's output without running it (see
        :mod:`lsp_agent.tools._tinygrep`)."""
        (root,) = prepared.paths
        mode: OutputMode = inp.output_mode or "files_with_matches"
        is_dir = root.is_dir()
        cwd = root if is_dir else root.parent
        known = self._in_process(inp, mode, root) if is_dir else None
        # A single file is searched by one thread anyway; a search answered in-process needs
        # no arguments (nor the small-folder walk that picks the thread count).
        args = (
            []
            if known is not None
            else [*self._small.threads_args(root), *rg_args(inp, mode, root)]
            if is_dir
            else rg_args(inp, mode, root)
        )
        ordered: Ordered | None = None
        if mode == "files_with_matches":
            listing = _Listing(max_bytes=_MAX_RG_BYTES)
            try:
                result = await _search(known, args, cwd=cwd, on_lines=listing.feed)
                lines = await listing.finish()
            finally:
                listing.close()
        else:
            collector = PathOrdered(count=mode == "count", budget_bytes=_MAX_RG_BYTES)
            read = _ReadCap(max_bytes=_MAX_READ_BYTES, then=collector.feed)
            result = await _search(known, args, cwd=cwd, on_lines=read.feed)
            # Only what the answer can show is decoded (it is cut at MAX_OUTPUT_CHARS).
            ordered = collector.result(max_lines=inp.head_limit, max_chars=MAX_OUTPUT_CHARS)
            lines = ordered.lines
        if is_dir and known is None:
            self._small.note(root, result)
        stderr = result.stderr.decode("utf-8", "replace").strip()
        if result.returncode == 2 and not lines and not result.stopped:
            raise ToolError(f"Grep failed: {stderr or 'ripgrep exited with status 2'}")
        notes: list[str] = []
        if result.stopped == "limit" or (ordered is not None and ordered.cut):
            notes.append("(ripgrep output was cut off: too much output; narrow the search)")
        if result.stopped == "timeout":
            notes.append(timeout_note())
        if result.returncode == 2 and stderr:
            notes.append(f"(some files could not be searched: {stderr.splitlines()[0]})")
        if not lines:
            if notes:
                raise ToolError(
                    "No match was found, but the search was incomplete: " + " ".join(notes)
                )
            empty = "No files found" if mode == "files_with_matches" else "No matches found"
            return ToolOutput(text=empty, raw_output={"mode": mode, "count": 0})
        if ordered is None:
            text, count = _files_output(lines, inp.head_limit)
        elif mode == "count":
            text, count = _count_output(ordered, inp.head_limit)
        else:
            text, count = _content_output(ordered, inp.head_limit)
        if len(text) > MAX_OUTPUT_CHARS:
            cut = text.rfind("\n", 0, MAX_OUTPUT_CHARS)
            text = text[: cut if cut > 0 else MAX_OUTPUT_CHARS]
            notes.append(
                f"(output cut at {MAX_OUTPUT_CHARS} characters: use head_limit, a narrower "
                "path, glob or type, or output_mode files_with_matches)"
            )
        if notes:
            text += "\n" + "\n".join(notes)
        return ToolOutput(text=model_safe(text), raw_output={"mode": mode, "count": count})

    def _in_process(self, inp: GrepInput, mode: OutputMode, root: Path) -> bytes | None:
        """ripgrep's output for a literal searched in a tiny folder without ignore rules,
        known without running it (see :mod:`lsp_agent.tools._tinygrep`), else ``None``."""
        if (
            mode == "count"
            or inp.multiline
            or inp.ignore_case
            or inp.file_type
            or inp.glob
            or (mode == "content" and (inp.context, inp.before, inp.after) != (None,) * 3)
        ):
            return None
        literal = literal_of(inp.pattern)
        if literal is None:
            return None
        return tiny_grep(
            root,
            literal,
            content=mode == "content",
            line_numbers=inp.line_numbers is not False,
            listings=self._tiny,
        )


async def _search(
    known: bytes | None, args: list[str], *, cwd: Path, on_lines: Callable[[bytes], bool]
) -> Streamed:
    """Hand ``known`` output (ripgrep's, found in-process) to ``on_lines`` as ripgrep's run
    would — complete lines without the last newline — or, when it is ``None``, run ripgrep."""
    if known is None:
        return await stream_rg(args, cwd=cwd, on_lines=on_lines)
    if known:
        # Bounded by tiny_grep's MAX_OUTPUT_BYTES: the consumers never ask to stop.
        on_lines(known[:-1])
    return Streamed(stderr=b"", returncode=0 if known else 1, stopped=None)


class _Listing:
    """The paths of files-with-matches output (up to ``max_bytes`` of them), stat'ed on
    worker threads as they arrive (:class:`~lsp_agent.tools._mtimes.ParallelMtimes`), so the
    ranking by time overlaps ripgrep's search. Call :meth:`finish` after the last
    :meth:`feed`, and :meth:`close` in a ``finally``."""

    def __init__(self, *, max_bytes: int) -> None:
        self._ranked: list[tuple[int, bytes]] = []  # (-mtime in ns, path)
        self._size = 0
        self._max = max_bytes
        self._mtimes = ParallelMtimes()

    def feed(self, data: bytes) -> bool:
        self._mtimes.submit([path for path in data.split(b"\n") if path])
        for paths, mtimes in self._mtimes.ready():
            self._rank(paths, mtimes)
        self._size += len(data) + 1
        return self._size <= self._max

    async def finish(self) -> list[str]:
        """The paths, newest first (ties by path; unreadable files last), once every stat
        call has finished."""
        for paths, mtimes in await self._mtimes.drain():
            self._rank(paths, mtimes)
        self._mtimes.close()
        self._ranked.sort()
        return [path.decode("utf-8", "replace") for _, path in self._ranked]

    def close(self) -> None:
        """Stop stat'ing (a search that failed or was cancelled). Safe to call twice."""
        self._mtimes.close()

    def _rank(self, paths: list[bytes], mtimes: list[int]) -> None:
        self._ranked.extend((-mtime, path) for path, mtime in zip(paths, mtimes, strict=True))


class _ReadCap:
    """Passes output on until ``max_bytes`` were read, then asks ripgrep to stop."""

    def __init__(self, *, max_bytes: int, then: Callable[[bytes], bool]) -> None:
        self._left = max_bytes
        self._then = then

    def feed(self, data: bytes) -> bool:
        self._left -= len(data) + 1
        return self._then(data) and self._left >= 0


def rg_args(inp: GrepInput, mode: OutputMode, root: Path) -> list[str]:
    """The ripgrep arguments for ``inp`` (the pattern always after ``--``, so a pattern that
    starts with ``-`` is never taken for a flag)."""
    args = base_args()
    if inp.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if inp.ignore_case:
        args.append("--ignore-case")
    if inp.file_type:
        args.append(f"--type={inp.file_type}")
    # Whitespace separates several globs; commas may sit inside braces ("*.{ts,tsx}").
    for glob in (inp.glob or "").split():
        args.append(f"--glob={glob}")
    args += exclude_args()
    if mode == "files_with_matches":
        args.append("--files-with-matches")
    elif mode == "count":
        # Unsorted (so ripgrep searches in parallel); the tool restores path order.
        args += ["--count", "--with-filename", *COUNT_ARGS]
    else:
        args += [
            "--no-heading",
            "--with-filename",
            "--line-number" if inp.line_numbers is not False else "--no-line-number",
            f"--max-columns={MAX_COLUMNS}",
            "--max-columns-preview",
            *CONTENT_ARGS,
        ]
        # Specific flags after -C so that they win, as in ripgrep's own precedence.
        if inp.context is not None:
            args.append(f"--context={inp.context}")
        if inp.before is not None:
            args.append(f"--before-context={inp.before}")
        if inp.after is not None:
            args.append(f"--after-context={inp.after}")
    args += ["--", inp.pattern, str(root)]
    return args


def _files_output(paths: list[str], head_limit: int | None) -> tuple[str, int]:
    """``paths`` come newest first (see :class:`_Listing`)."""
    shown = paths[:head_limit] if head_limit else paths
    plural = "file" if len(paths) == 1 else "files"
    text = f"Found {len(paths)} {plural}\n" + "\n".join(shown)
    if len(shown) < len(paths):
        text += f"\n(showing the first {len(shown)} of {len(paths)}, newest first)"
    return text, len(paths)


def _count_output(ordered: Ordered, head_limit: int | None) -> tuple[str, int]:
    lines, files, total = ordered.lines, ordered.total_lines, ordered.total_count
    shown = lines[:head_limit] if head_limit else lines
    text = "\n".join(shown)
    if len(shown) < files:
        text += f"\n(showing the first {len(shown)} of {files} files)"
    plural = "file" if files == 1 else "files"
    text += f"\n\nFound {total} matching lines in {files} {plural}."
    return text, total


def _content_output(ordered: Ordered, head_limit: int | None) -> tuple[str, int]:
    lines, total = ordered.lines, ordered.total_lines
    shown = lines[:head_limit] if head_limit else lines
    text = "\n".join(shown)
    if len(shown) < total:
        text += f"\n(showing the first {len(shown)} of {total} lines)"
    return text, total

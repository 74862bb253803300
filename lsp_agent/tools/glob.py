"""The ``Glob`` tool: file names matching a glob pattern, newest first, via ripgrep."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import ConfigDict, Field

from lsp_agent.protocol.events import ContentItem, Location, TextContent, ToolKind
from lsp_agent.tools._globmatch import compile_glob, name_prefilter_args, prefilter_is_exact
from lsp_agent.tools._newest import NewestMatches
from lsp_agent.tools._paths import display_path, resolve_search_path, search_target
from lsp_agent.tools._proc import Streamed
from lsp_agent.tools._rg import (
    SmallRoots,
    base_args,
    drain_rg,
    exclude_args,
    stream_rg,
    timeout_note,
)
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools._tinylist import TinyListings
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput

MAX_RESULTS = 100
"""Paths returned at most."""

STAT_THREAD_NAME = "lsp-agent-stat-glob"
"""The name of the thread that reads the listing and stats its matches."""

_GLOB_CHARS = frozenset("*?[{")
# A last component that names files by extension alone, or not at all.
_DENSE_NAME = re.compile(r"\*+(?:\.[^*?\[\]{}\\]+)?")

DESCRIPTION = """\
- Fast file pattern matching tool that works with any codebase size
- Supports glob patterns like "**/*.js" or "src/**/*.ts"; a pattern without "/" matches file \
names at any depth ("*.py" finds every Python file)
- Returns absolute file paths sorted by modification time, newest first (at most 100)
- Files ignored by .gitignore and version-control directories are skipped
- Use this tool when you need to find files by name patterns
- When you are doing an open ended search that may require multiple rounds of globbing and \
grepping, do the searches in parallel where you can"""


class GlobInput(ToolInput):
    """Input of ``Glob`` (Claude Code's shape)."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    pattern: str = Field(description="The glob pattern to match files against")
    path: str | None = Field(
        default=None,
        description="The directory to search in. If not specified, the current working "
        "directory will be used. IMPORTANT: Omit this field to use the default directory. "
        'DO NOT enter "undefined" or "null" - simply omit it for the default behavior. Must '
        "be a valid directory path if provided.",
    )


@dataclass(frozen=True, kw_only=True)
class GlobPlan:
    """The directory to list, the compiled glob and the pattern relative to it."""

    root: Path
    matcher: re.Pattern[str]
    pattern: str


class GlobTool(Tool[GlobInput, GlobPlan]):
    """List the files under a directory whose relative paths match a glob.

    ``rg --files`` lists the files ignore rules keep (see :mod:`lsp_agent.tools._globmatch`
    for why the glob is applied afterwards, not by ripgrep), unsorted and in parallel; one
    thread reads the listing and stats and ranks only the matches while ripgrep runs, in
    memory bounded by :data:`MAX_RESULTS`. A tiny folder without ignore rules is listed in
    this process instead, as ripgrep would list it (see :mod:`lsp_agent.tools._tinylist`).
    There is no listing cap: the answer says how many files matched, and "No files found"
    only comes from a complete search.

    Raises :class:`ToolError` for an empty pattern, a missing path, a path that is not a
    directory, a missing ``rg`` or a search that runs out of time.
    """

    name: ClassVar[str] = "Glob"
    description: ClassVar[str] = DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = GlobInput
    kind: ClassVar[ToolKind] = "search"
    read_only: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True
    # Listing names does not need the editor's unsaved text on disk.
    reads_disk: ClassVar[bool] = False
    writes_disk: ClassVar[bool] = False

    def __init__(self) -> None:
        self._small = SmallRoots()
        self._tiny = TinyListings()

    def title(self, inp: GlobInput) -> str:
        """``Glob <pattern>``."""
        return f"Glob {inp.pattern}"

    def target_paths(self, inp: GlobInput, ctx: ToolContext) -> tuple[Path, ...] | None:
        """The directory searched (``None`` when the pattern is unusable)."""
        try:
            return (_split_pattern(inp.pattern, inp.path, ctx.cwd, resolve=search_target)[0],)
        except ToolError:
            return None

    async def prepare(self, inp: GlobInput, ctx: ToolContext) -> Prepared[GlobPlan]:
        """Resolve the directory (an absolute pattern's fixed prefix counts as the path)."""
        root, pattern = _split_pattern(inp.pattern, inp.path, ctx.cwd)
        matcher = compile_glob(pattern)
        if not root.is_dir():
            raise ToolError(f"Path is not a directory: {root}. Give a directory to search in.")
        where = display_path(root, ctx.cwd) if root != ctx.cwd.resolve() else ""
        return Prepared(
            title=f"Glob {pattern}" + (f" in {where}" if where else ""),
            paths=(root,),
            locations=(Location(path=str(root)),),
            data=GlobPlan(root=root, matcher=matcher, pattern=pattern),
        )

    async def call(
        self, inp: GlobInput, prepared: Prepared[GlobPlan], ctx: ToolContext
    ) -> ToolOutput:
        """List the directory — in this process when it is tiny and has no ignore rules (see
        :mod:`lsp_agent.tools._tinylist`), else with ripgrep (unsorted, in parallel unless the
        directory is known to be small, see :class:`~lsp_agent.tools._rg.SmallRoots`) —, keep
        the matches, and format the newest :data:`MAX_RESULTS` of them."""
        plan = prepared.data
        assert plan is not None  # prepare always makes one
        root, matcher, pattern = plan.root, plan.matcher, plan.pattern
        prefix = str(root).rstrip("/") + "/"
        listed = self._tiny.listing(root)
        if listed is not None:
            # A tiny folder without ignore rules: ripgrep's listing, known without running
            # it (see lsp_agent.tools._tinylist); unfiltered, so the matcher decides.
            newest = NewestMatches(prefix=prefix, matcher=matcher, keep=MAX_RESULTS)
            if listed:
                newest.feed(listed.removesuffix(b"\n"))
            result = Streamed(stderr=b"", returncode=0 if listed else 1, stopped=None)
        else:
            newest = NewestMatches(
                prefix=prefix,
                matcher=None if prefilter_is_exact(pattern) else matcher,
                keep=MAX_RESULTS,
            )
            result = await self._list_with_rg(root, pattern, newest)
        stderr = result.stderr.decode("utf-8", "replace").strip()
        paths = newest.result()
        incomplete: list[str] = []
        if result.stopped == "timeout":
            incomplete.append(timeout_note())
        if result.returncode == 2 and stderr:
            incomplete.append(f"(some paths could not be listed: {stderr.splitlines()[0]})")
        if not paths:
            if result.returncode == 2 and not result.stopped and newest.listed == 0:
                raise ToolError(f"Glob failed: {stderr or 'ripgrep exited with status 2'}")
            if incomplete:
                raise ToolError(
                    "No matching file was found, but the search was incomplete: "
                    + " ".join(incomplete)
                )
            exact = _ignored_exact_path(root, pattern)
            if exact is not None:
                return ToolOutput(
                    text=f"{exact}\n(This file exists but is excluded by .gitignore or another "
                    "ignore file, so patterns with wildcards do not list it.)",
                    raw_output={"count": 1, "total": 1, "truncated": False, "ignored": True},
                )
            return ToolOutput(
                text="No files found", raw_output={"count": 0, "total": 0, "truncated": False}
            )
        truncated = newest.total > len(paths)
        text = "\n".join(paths)
        if truncated:
            text += (
                f"\n(Results are truncated: showing the {len(paths)} most recently modified of "
                f"{newest.total} matching files. Consider using a more specific path or pattern.)"
            )
        if incomplete:
            text += "\n" + "\n".join(incomplete)
        # The model gets absolute paths (as Claude Code's Glob gives); the user sees them as
        # the tool titles name files, relative to the session's folder.
        shown = text.replace("\n".join(paths), "\n".join(_shown(paths, ctx.cwd.resolve())))
        return ToolOutput(
            text=text,
            content=(ContentItem(content=TextContent(text=shown)),),
            raw_output={
                "count": len(paths),
                "total": newest.total,
                "truncated": truncated or bool(incomplete),
            },
        )

    async def _list_with_rg(self, root: Path, pattern: str, newest: NewestMatches) -> Streamed:
        """List ``root`` with ripgrep into ``newest`` (unsorted, in parallel unless the folder
        is known to be small) and note what the run tells about the folder's size."""
        small = self._small.threads_args(root)
        args = [
            *base_args(),
            *(small or listing_threads_args(pattern)),
            "--files",
            *name_prefilter_args(pattern),
            *exclude_args(),
            str(root),
        ]
        try:
            if small:
                # A listing that is known to be short is read in the event loop: a thread
                # of its own costs more than its few stat calls.
                result = await stream_rg(args, cwd=root, on_lines=newest.feed)
            else:
                result = await drain_rg(
                    args, cwd=root, drain=newest.drain, thread_name=STAT_THREAD_NAME
                )
        finally:
            newest.stop()
        self._small.note(root, result)
        return result


def listing_threads_args(pattern: str, cores: int | None = None) -> list[str]:
    """ripgrep's ``--threads`` for Glob's listing of ``pattern``: ``[]`` (ripgrep's default,
    the core count capped at 12) unless the pattern's last component is only a wildcard and
    an extension (``*.py``, ``**/*.ts``) or only wildcards (``*``, ``src/**``); then one core
    fewer than this process may use (``cores``, default from the CPU affinity mask), at least
    1 and at most 12.

    Why: every match is stat'ed on one thread while ripgrep lists. Such patterns usually
    match a large share of a tree, and then the stat calls cost about as much CPU as the
    listing; on two cores ripgrep's parallel listing (≈ 50 % more CPU than one thread) only
    competes with them, while one listing thread beside the stat thread keeps both cores
    busy. With fewer matches the stat thread is mostly idle and the parallel listing is the
    faster one. On machines with many cores the two choices hardly differ.
    """
    name = pattern.rstrip("/").rpartition("/")[2]
    if not _DENSE_NAME.fullmatch(name):
        return []
    if cores is None:
        affinity = getattr(os, "sched_getaffinity", None)
        cores = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return [f"--threads={max(1, min(12, cores - 1))}"]


def _shown(paths: list[str], cwd: Path) -> list[str]:
    """``paths`` (absolute, normalised: ripgrep's listing of a resolved folder) as
    :func:`~lsp_agent.tools._paths.display_path` shows them, relative to ``cwd`` (resolved)
    when inside it. On POSIX by their text, which for such paths gives the same answer
    without a ``Path`` per result (a third of a millisecond for 100 results)."""
    if os.sep != "/":
        return [display_path(Path(path), cwd) for path in paths]
    prefix = str(cwd).rstrip("/") + "/"
    cut = len(prefix)
    return [path[cut:] if path.startswith(prefix) else path for path in paths]


def _ignored_exact_path(root: Path, pattern: str) -> Path | None:
    """The file a wildcard-free ``pattern`` names under ``root`` when it exists (the listing
    left it out: an ignore file excludes it), else ``None``. Stays inside ``root``."""
    if _GLOB_CHARS.intersection(pattern) or "\\" in pattern:
        return None
    candidate = (root / pattern.lstrip("/")).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


def _split_pattern(
    pattern: str,
    path: str | None,
    cwd: Path,
    *,
    resolve: Callable[[str | None, Path], Path] = resolve_search_path,
) -> tuple[Path, str]:
    """The directory to search and the pattern relative to it (``resolve`` makes the
    directory absolute; the default also checks that it exists).

    An absolute pattern (``/src/app/**/*.ts``) has its literal leading directories moved into
    the search path, since globs match paths relative to the searched directory.
    """
    if not pattern.strip():
        raise ToolError("pattern is empty; give a glob such as '**/*.py'.")
    if not Path(pattern).is_absolute():
        while pattern.startswith("./"):
            pattern = pattern[2:]
        return resolve(path, cwd), pattern
    parts = Path(pattern).parts
    fixed = 0
    while fixed < len(parts) - 1 and not _GLOB_CHARS.intersection(parts[fixed]):
        fixed += 1
    root = resolve(str(Path(*parts[:fixed])), cwd)
    # A leading "/" anchors the rest at the root (gitignore rules), as the absolute path did.
    return root, "/" + "/".join(parts[fixed:])

"""The editor's side of background runs' permission prompts
(:mod:`lsp_agent.store.run_approvals`): about once a second the server stats the private runs
folder, and only when it changed (a request written, a run started or ended) lists it for
pending requests of this user's running background runs (``lsp-agent run -p --bg``) and asks
the user with ``window/showMessageRequest`` ("Allow once" / "Deny", naming the
run, the tool and what it would do); the answer is written beside the request. No answer
before the request's deadline writes nothing (the run denies).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from lsp_agent.store.private import runs_dir
from lsp_agent.store.run_approvals import Answer, PendingApproval, pending_requests, write_answer
from lsp_agent.store.runs import effective, list_runs

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)

POLL_S = 1.0
"""How often the registry folder is stat'ed (seconds)."""

COARSE_MTIME_S = 2.0
"""A folder modified this recently (seconds) is listed again at the next look even when its
stamp is unchanged: on a file system with coarse timestamps a request written in the same
tick as the last look would not change the stamp."""

Stamp = tuple[int, int, int]
"""A folder's device, inode and modification time (ns)."""

ALLOW = "Allow once"
DENY = "Deny"

_BLANK_RUN = re.compile(r"\s{41,}|\n(?:[ \t]*\n){3,}")
"""Whitespace long enough to push what follows out of sight: more than 40 characters, or
three blank lines or more."""


async def watch(ls: AgentLanguageServer, *, poll_s: float = POLL_S) -> None:
    """Ask the user about each pending request of a running background run once; runs until
    cancelled (at shutdown)."""
    folder = runs_dir(os.environ)
    asked: set[str] = set()
    tasks: set[asyncio.Task[None]] = set()
    seen: Stamp | None = None
    while True:
        await asyncio.sleep(poll_s)
        now_stamp = stamp(folder)
        if not needs_listing(seen, now_stamp, now=time.time()):
            continue
        seen = now_stamp
        try:
            found = [p for p in pending_requests(folder, now=time.time()) if p.id not in asked]
            running = (
                {r.id: r for r in map(effective, list_runs(folder)) if r.state == "running"}
                if found
                else {}
            )
        except Exception:  # a registry read never ends the watch
            logger.exception("could not read the background runs' requests")
            continue
        for pending in found:
            if pending.id in asked or pending.run_id not in running:
                continue
            asked.add(pending.id)
            run = running[pending.run_id]
            question = message(pending, cwd=run.cwd, prompt=run.prompt)
            task = asyncio.get_running_loop().create_task(_ask(ls, folder, pending, question))
            tasks.add(task)
            task.add_done_callback(tasks.discard)


def shown(text: str) -> str:
    """``text`` as the question shows it, so that it reads as what would run: control and
    invisible formatting characters (bidirectional overrides, zero-width spaces) escaped
    (``\\x1b``, ``\\u202e``), long runs of blanks replaced by ``[N blank characters]``;
    newlines and tabs kept."""
    escaped = "".join(
        ch
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp")
        else ascii(ch)[1:-1]
        for ch in text
    )
    return _BLANK_RUN.sub(lambda m: f" [{len(m.group())} blank characters] ", escaped)


def stamp(folder: Path) -> Stamp | None:
    """``folder``'s :data:`Stamp` (``None``: missing or unreadable). Writing, renaming or
    removing a file in the folder changes it."""
    try:
        info = os.stat(folder)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_mtime_ns)


def needs_listing(seen: Stamp | None, current: Stamp | None, *, now: float) -> bool:
    """Whether the runs folder must be listed: it exists, and its stamp changed since the last
    listing (``seen``) or it was modified within :data:`COARSE_MTIME_S` of ``now`` (seconds
    since the epoch)."""
    if current is None:
        return False
    return current != seen or now - current[2] / 1e9 < COARSE_MTIME_S


PROMPT_CHARS = 60
"""How much of a run's prompt its question shows (characters of the first line; longer is cut
with ``…``): enough to tell the user's runs apart."""


def message(pending: PendingApproval, *, cwd: str, prompt: str = "") -> str:
    """The question shown to the user: the run, the first line of its ``prompt`` (cut to
    :data:`PROMPT_CHARS`), its folder ``cwd`` (every editor window of the user asks, whatever
    its workspace), the tool and the whole preview (a background run keeps it within
    :data:`~lsp_agent.store.run_approvals.PREVIEW_CHARS` and denies a longer command without
    asking), as :func:`shown` renders it."""
    summary = shown(pending.summary)
    where = shown(cwd).replace("\n", "\\n")  # one line: a folder name cannot fake a preview
    lines = prompt.strip().splitlines()
    first = lines[0].strip() if lines else ""
    if len(first) > PROMPT_CHARS or len(lines) > 1:
        first = first[:PROMPT_CHARS].rstrip() + "…"
    # Quotes escaped: the prompt cannot close its own quotation and read as the question.
    quoted = shown(first).replace('"', '\\"')
    asked = f' ("{quoted}")' if first else ""
    text = (
        f"Background run {pending.run_id}{asked} in {where} asks to use {pending.tool}: {summary}"
    )
    preview = shown(pending.preview.strip())
    if preview and preview != summary:
        text += f"\n\n{preview}"
    return text


async def _ask(
    ls: AgentLanguageServer, folder: Path, pending: PendingApproval, question: str
) -> None:
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Warning,
        message=question,
        actions=[types.MessageActionItem(title=ALLOW), types.MessageActionItem(title=DENY)],
    )
    try:
        chosen = await asyncio.wait_for(
            ls.window_show_message_request_async(params),
            timeout=max(pending.deadline - time.time(), 0.0),
        )
    except TimeoutError:
        return  # the run denies on its own at its deadline
    except Exception as exc:  # the client failed the request: a denial
        logger.warning("asking about background run %s failed: %s", pending.run_id, exc)
        chosen = None
    answer: Answer = "allow" if chosen is not None and chosen.title == ALLOW else "deny"
    if time.time() > pending.deadline:
        return
    try:
        write_answer(folder, pending, answer)
    except OSError as exc:
        logger.warning("could not answer background run %s: %s", pending.run_id, exc)

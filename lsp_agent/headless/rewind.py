"""``lsp-agent rewind``: rewind a session's files from the command line, without an editor.

The checkpoints are read from the shadow store of the project folder (``--cwd``, default the
current directory) under the user data folder, and undone exactly as the editor's rewind does
(:mod:`lsp_agent.checkpoints.rewind`: newest first, three-way merge with changes made since,
conflict markers where they overlap), on the disk only.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from lsp_agent.checkpoints.objects import ShadowStore, store_path
from lsp_agent.checkpoints.rewind import apply_rewind, checkpoints_from, plan_rewind
from lsp_agent.sessions.rewind import RewindOutcome, describe
from lsp_agent.store.paths import data_dir
from lsp_agent.workspace.disk_host import DiskHost

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFLICTS = 3
"""Exit status when files were restored but some hold conflict markers to resolve."""


@dataclass(frozen=True, kw_only=True)
class RewindOptions:
    """``--session``, ``--to`` (a prompt's message id or a unique prefix of 6+ characters),
    ``--restore`` and the project folder."""

    session_id: str
    message_id: str | None
    restore: str
    cwd: Path


def run_rewind(
    options: RewindOptions, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Rewind and print what was done (without ``message_id``: list the session's prompts);
    returns the exit status (0 done, 1 failed with nothing changed or a partial failure, 3
    done with conflicts)."""
    if options.restore != "code":
        print(
            "lsp-agent: error: only --restore code is available from the command line: the "
            "conversation of a session is rewound in the editor or with /rewind",
            file=err,
        )
        return EXIT_FAILED
    root = options.cwd.resolve()
    folder = store_path(data_dir() / "checkpoints", root)
    if not (folder / "HEAD").exists():
        print(f"lsp-agent: error: no checkpoints for {root}", file=err)
        return EXIT_FAILED
    store = ShadowStore(path=folder, root=root)
    saved = store.load(options.session_id)
    if options.message_id is None:
        if not saved:
            print(f"lsp-agent: error: no checkpoints of session {options.session_id}", file=err)
            return EXIT_FAILED
        for checkpoint in saved:
            print(
                f"{checkpoint.message_id}  {len(checkpoint.files):3d} file(s)  {checkpoint.prompt}",
                file=out,
            )
        return EXIT_OK
    try:
        chosen = checkpoints_from(saved, options.message_id)
    except KeyError:
        known = ", ".join(c.message_id[:8] for c in saved) or "none"
        print(
            f"lsp-agent: error: session {options.session_id} has no prompt "
            f"{options.message_id!r} in {root} (prompts: {known})",
            file=err,
        )
        return EXIT_FAILED
    host = DiskHost()
    targets, conflicts = plan_rewind(chosen, host=host, blobs=store.get)
    code = asyncio.run(apply_rewind(targets, conflicts, host=host))
    outcome = RewindOutcome(
        message_id=chosen[0].message_id, prompt=chosen[0].prompt, code=code, conversation=False
    )
    print(describe(outcome), file=out)
    if code.failure is not None:
        return EXIT_FAILED
    return EXIT_CONFLICTS if code.conflicts else EXIT_OK

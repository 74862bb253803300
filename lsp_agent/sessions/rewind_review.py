"""Asking the user about a rewind's overlapping hunks, one file at a time.

When the user changed lines after a checkpoint that the rewind also has to revert, the
three-way merge (:mod:`lsp_agent.checkpoints.rewind`) cannot choose for them. A door where
someone can answer asks through its ordinary permission prompt
(``lspAgent/session/requestPermission``), which the editors show as a review of a diff: one
request per conflicted file, a tool call titled "Rewind: conflicts in NAME" whose diff goes from
the file as the user has it now to the file with the checkpoint's lines in the overlapping
hunks (the hunks that merge cleanly are not in it). The options:

- ``checkpoint`` "Restore the checkpoint's lines";
- ``mine`` "Keep my lines";
- ``markers`` "Keep both with conflict markers" (what a rewind does where nobody is asked).

Any other answer (the prompt dismissed or cancelled, an unknown option, a failed request)
keeps both with markers: nothing is lost. Non-overlapping hunks are merged whatever the answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from lsp_agent.checkpoints.recorder import current_bytes
from lsp_agent.checkpoints.rewind import FileConflict, Resolution
from lsp_agent.protocol.events import ToolCall
from lsp_agent.protocol.host import Host
from lsp_agent.protocol.permissions import PermissionOption, PermissionRequest, PermissionResponse
from lsp_agent.tools.diffing import diff_item
from lsp_agent.workspace.merge import merge3
from lsp_agent.workspace.textfile import NotTextError, decode_bytes

TOOL_CALL_PREFIX = "rewind_conflict_"
"""The ``toolCallId`` prefix of these prompts (no model tool call stands behind them)."""

OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption(
        option_id="checkpoint", name="Restore the checkpoint's lines", kind="allow_once"
    ),
    PermissionOption(option_id="mine", name="Keep my lines", kind="allow_once"),
    PermissionOption(
        option_id="markers", name="Keep both with conflict markers", kind="reject_once"
    ),
)
"""The answers offered, in order; their ids are the :data:`Resolution` they choose. Both
answers that settle the file are ``allow_once``; the only ``reject_once`` is the markers, so a
client's generic "reject" (or rejecting every hunk of the review) keeps both sides."""


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return decode_bytes(data)[0]
    except NotTextError:
        return None


def review_diff(now: str, mine: str, checkpoint: str) -> str:
    """The text the review's diff goes to from ``now`` (the file as the user has it): ``now``
    with only the overlapping hunks taking the checkpoint's lines. ``mine`` and ``checkpoint``
    are the whole rewound file with those hunks resolved to each side, so they differ in those
    hunks only; when that cannot be isolated cleanly the whole ``checkpoint`` version is
    shown."""
    merged = merge3(mine, now, checkpoint, adjacent="combine")
    return merged.text if merged.clean else checkpoint


def conflict_request(
    *, session_id: str, path: Path, label: str, now: str, new_text: str, regions: int
) -> PermissionRequest:
    """The prompt for one conflicted file (``label``: its name as the user knows it)."""
    reason = (
        f"You changed {regions} region(s) of {label} since the checkpoint that the rewind also "
        "reverts. The diff shows the checkpoint's lines there; the rest of the rewind merges "
        "with your changes whatever you choose."
    )
    return PermissionRequest(
        session_id=session_id,
        tool_call=ToolCall(
            tool_call_id=f"{TOOL_CALL_PREFIX}{uuid.uuid4().hex[:12]}",
            title=f"Rewind: conflicts in {label}",
            kind="edit",
            status="pending",
            content=(diff_item(path, now, new_text, label=label),),
            raw_input={"file_path": str(path), "regions": regions},
        ),
        options=OPTIONS,
        reason=reason,
        scopes=(),
    )


def chosen(answer: PermissionResponse) -> Resolution:
    """The resolution ``answer`` picked; ``markers`` for anything but one of :data:`OPTIONS`."""
    if answer.outcome == "selected":
        if answer.option_id == "checkpoint":
            return "checkpoint"
        if answer.option_id == "mine":
            return "mine"
    return "markers"


async def ask(
    *,
    session_id: str,
    host: Host,
    cwd: Path,
    conflicts: Sequence[FileConflict],
    mine: Mapping[Path, bytes | None],
    checkpoint: Mapping[Path, bytes | None],
) -> dict[Path, Resolution]:
    """Ask about each text conflict in ``conflicts`` (those with marker regions), in order.
    ``mine``/``checkpoint`` are the planned targets with every conflict resolved to that
    side (a path absent: the file keeps its current content). Returns path → resolution for
    the files the user resolved to one side. A request that fails keeps the markers."""
    out: dict[Path, Resolution] = {}
    for conflict in conflicts:
        path = conflict.path
        if not conflict.regions:
            continue
        now_bytes = current_bytes(host, path)[0]
        now = _text(now_bytes)
        mine_text = _text(mine.get(path, now_bytes))
        theirs = _text(checkpoint.get(path, now_bytes))
        if now is None or mine_text is None or theirs is None:
            continue
        try:
            label = path.relative_to(cwd).as_posix()
        except ValueError:
            label = str(path)
        request = conflict_request(
            session_id=session_id,
            path=path,
            label=label,
            now=now,
            new_text=review_diff(now, mine_text, theirs),
            regions=conflict.regions,
        )
        try:
            answer = await host.request_permission(request)
        except Exception:  # fail safe: any failure keeps both sides
            continue
        resolution = chosen(answer)
        if resolution != "markers":
            out[path] = resolution
    return out

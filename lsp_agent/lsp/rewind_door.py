"""``lspAgent/session/checkpoints`` and ``lspAgent/session/rewind``: the LSP face of
:mod:`lsp_agent.sessions.rewind`. Open buffers are restored through one versioned
``workspace/applyEdit`` (the host's), so the editor's undo takes the rewind back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsp_agent.lsp import methods
from lsp_agent.lsp.errors import SessionBusyError, invalid_params
from lsp_agent.lsp.params import ListCheckpointsParams, RewindParams, parse
from lsp_agent.sessions.rewind import RewindError, list_checkpoints, rewind

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer
    from lsp_agent.sessions.manager import Session


def _session(ls: AgentLanguageServer, session_id: str) -> Session:
    from lsp_agent.lsp.sessions_door import live_session

    return live_session(ls, session_id)


async def session_checkpoints(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/checkpoints``: ``{checkpoints: [{messageId, prompt, created, files,
    complete}]}``, oldest first (docs/protocol.md §17.1)."""
    params = parse(ListCheckpointsParams, raw, method=methods.SESSION_CHECKPOINTS)
    session = _session(ls, params.session_id)
    saved = {c.message_id: c for c in await list_checkpoints(session)}
    out = []
    for mark in session.prompt_marks:
        checkpoint = saved.get(mark.message_id)
        out.append(
            {
                "messageId": mark.message_id,
                "prompt": mark.text,
                "created": checkpoint.created if checkpoint is not None else 0.0,
                "files": sorted(checkpoint.files) if checkpoint is not None else [],
                "complete": checkpoint.complete if checkpoint is not None else False,
            }
        )
    return {"checkpoints": out}


async def session_rewind(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/rewind`` (docs/protocol.md §17.2). A busy session is refused with
    the session-busy error; an unknown prompt or checkpoints being off with invalid params."""
    params = parse(RewindParams, raw, method=methods.SESSION_REWIND)
    session = _session(ls, params.session_id)
    if session.busy:
        raise SessionBusyError(f"session {session.id} is running a prompt; cancel it first")
    try:
        outcome = await rewind(session, params.message_id, params.restore)
    except RewindError as exc:
        raise invalid_params(str(exc)) from None
    result: dict[str, Any] = {
        "messageId": outcome.message_id,
        "prompt": outcome.prompt,
        "conversation": outcome.conversation,
    }
    code = outcome.code
    if code is not None:
        result["restored"] = [str(p) for p in code.restored]
        result["removed"] = [str(p) for p in code.removed]
        result["conflicts"] = [
            {"path": str(c.path), "uri": c.path.as_uri(), "regions": c.regions, "reason": c.reason}
            for c in code.conflicts
        ]
        if code.failure is not None:
            result["failure"] = code.failure
    return result

"""``lspAgent/session/command``: a session's slash commands (``compact``, ``context``, ``cost``,
``clear``, ``memory``, ``rewind``, ``init`` …) as a request of their own, answered with the
command's outcome instead of a stream of chat updates (docs/protocol.md §4.10).

The command runs exactly as the same text sent as a prompt would (``/name args``): it is
recorded in the transcript, its text is also sent as an ``agent_message_chunk``, and a command
that hands the model a prompt (``init``) runs that turn before the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsp_agent.lsp import methods
from lsp_agent.lsp.errors import SessionBusyError, invalid_params
from lsp_agent.lsp.params import SessionCommandParams, parse
from lsp_agent.lsp.progress import TurnProgress
from lsp_agent.lsp.sessions_door import usage_json
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionError

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer


async def session_command(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``{text, isError, stopReason, usage}``. Errors: ``-32602`` for an unknown session or
    command (the message lists the session's commands), the session-busy error while a
    prompt runs."""
    params = parse(SessionCommandParams, raw, method=methods.SESSION_COMMAND)
    try:
        session = ls.sessions.get(params.session_id)
    except SessionError:
        raise invalid_params(f"unknown session id: {params.session_id!r}") from None
    name = params.command.strip().removeprefix("/")
    known = session.commands.names()
    if name not in known:
        listed = ", ".join(f"/{n}" for n in known)
        raise invalid_params(f"unknown command /{name}; this session has {listed}")
    if session.busy:
        raise SessionBusyError(f"session {session.id} is already running a prompt; cancel it first")
    text = f"/{name} {params.args.strip()}".rstrip()
    progress = await TurnProgress.start(ls, on_cancel=session.cancel)
    ls.host.progress[session.id] = progress
    stop = "cancelled"
    try:
        result = await session.prompt([PromptText(text=text)])
        stop = result.stop_reason
    except SessionError as exc:
        raise SessionBusyError(str(exc)) from None
    finally:
        progress.end(stop)
        if ls.host.progress.get(session.id) is progress:
            del ls.host.progress[session.id]
    return {
        "text": result.final_text or result.error or "",
        "isError": result.error is not None,
        "stopReason": result.stop_reason,
        "usage": usage_json(result.usage),
    }

"""The ``lspAgent/session/*`` requests and notifications (docs/protocol.md §4).

:mod:`lsp_agent.lsp.server` registers thin handlers that call these functions; this module
loads the agent core (sessions, the loop, payload validation), which the ``initialize`` answer
must not wait for, so the server imports it on first use (or in its warm-up after
``initialized``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from lsp_agent.lsp import methods
from lsp_agent.lsp.errors import MODEL_ERROR, ModelError, SessionBusyError, invalid_params
from lsp_agent.lsp.params import (
    NewSessionParams,
    PromptParams,
    SessionIdParams,
    SetModeParams,
    parse,
)
from lsp_agent.lsp.progress import TurnProgress
from lsp_agent.lsp.prompt import path_from, prompt_parts
from lsp_agent.model.types import Usage
from lsp_agent.sessions.manager import MODES, Session, SessionError

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)


def usage_json(usage: Usage) -> dict[str, int]:
    """Token counts of a turn as the protocol spells them (``inputTokens``, ``outputTokens``,
    ``cacheReadInputTokens``, ``cacheCreationInputTokens``)."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadInputTokens": usage.cache_read_input_tokens,
        "cacheCreationInputTokens": usage.cache_creation_input_tokens,
    }


def modes_json(session: Session) -> dict[str, Any]:
    """The session's ``modes`` as ``session/new`` and ``session/load`` answer them."""
    available = session.available_modes()
    return {
        "currentModeId": session.mode,
        "availableModes": [
            {"id": mode, "name": name, "description": description}
            for mode, name, description in MODES
            if mode in available
        ],
    }


def _session(ls: AgentLanguageServer, session_id: str) -> Session:
    return live_session(ls, session_id)


def live_session(ls: AgentLanguageServer, session_id: str) -> Session:
    """The session a request names (one closed for idleness is reopened first). Raises
    ``JsonRpcInvalidParams`` for an unknown id."""
    try:
        return ls.sessions.get(session_id)
    except SessionError:
        # Closed for idleness: it comes back from its transcript (the client still shows it).
        reopened = ls.idle.reopen(session_id) if ls.idle is not None else None
        if reopened is not None:
            return reopened
        raise invalid_params(f"unknown session id: {session_id!r}") from None


def session_new(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/new``: ``{sessionId, modes, availableCommands}``."""
    params = parse(NewSessionParams, raw, method=methods.SESSION_NEW)
    folders = ls.workspace_roots()
    if params.cwd is not None:
        cwd = path_from(params.cwd, field="cwd")
    elif folders:
        cwd = folders[0]
    else:
        raise invalid_params("cwd is required: the client opened no workspace folder to default to")
    if not cwd.is_dir():
        raise invalid_params(f"cwd: {cwd} is not a directory")
    if params.additional_directories is not None:
        extra = [
            path_from(value, field=f"additionalDirectories[{index}]")
            for index, value in enumerate(params.additional_directories)
        ]
    else:
        extra = [folder for folder in folders if folder != cwd]
    try:
        session = ls.sessions.new(cwd=cwd, additional_directories=extra, mode=params.mode)
    except Exception as exc:
        logger.exception("cannot create a session")
        raise JsonRpcException(
            message=f"cannot create a session: {exc}", code=MODEL_ERROR
        ) from None
    logger.info("session %s created in %s", session.id, cwd)
    return {
        "sessionId": session.id,
        "modes": modes_json(session),
        "availableCommands": [c.to_wire() for c in session.available_commands()],
    }


async def session_prompt(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/prompt``: runs the turn; ``{stopReason, usage, messageId?}``."""
    params = parse(PromptParams, raw, method=methods.SESSION_PROMPT)
    session = _session(ls, params.session_id)
    if session.busy:
        raise SessionBusyError(f"session {session.id} is already running a prompt; cancel it first")
    parts = prompt_parts(params.prompt, method=methods.SESSION_PROMPT, buffer=ls.host.buffer)
    progress = await TurnProgress.start(ls, on_cancel=session.cancel)
    ls.host.progress[session.id] = progress
    stop = "cancelled"
    marks = len(session.prompt_marks)
    try:
        result = await session.prompt(parts)
        stop = result.stop_reason
    except SessionError as exc:
        raise SessionBusyError(str(exc)) from None
    finally:
        progress.end(stop)
        if ls.host.progress.get(session.id) is progress:
            del ls.host.progress[session.id]
    answer: dict[str, Any] = {"stopReason": result.stop_reason, "usage": usage_json(result.usage)}
    if len(session.prompt_marks) > marks:
        # The prompt's id, so a client maps "Rewind to here" by id, not by the prompt's text.
        answer["messageId"] = session.prompt_marks[-1].message_id
    if result.error is not None:
        raise ModelError(result.error, data=answer)
    return answer


def session_cancel(ls: AgentLanguageServer, raw: Any) -> None:
    """``lspAgent/session/cancel`` (notification): bad params are logged, not answered."""
    try:
        params = parse(SessionIdParams, raw, method=methods.SESSION_CANCEL)
        session = _session(ls, params.session_id)
    except JsonRpcException as exc:
        # A notification has no answer: all we can do is say why it was ignored.
        logger.warning("ignored %s: %s", methods.SESSION_CANCEL, exc.message)
        return
    session.cancel()


async def session_close(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/close``: ``{}`` once the session is released (its turn cancelled,
    its processes ended, its model connection and language-server documents closed)."""
    params = parse(SessionIdParams, raw, method=methods.SESSION_CLOSE)
    if ls.idle is not None and params.session_id in ls.idle.closed:
        ls.idle.closed.discard(params.session_id)  # closed already, for idleness
        return {}
    try:
        await ls.sessions.close(params.session_id)
    except SessionError as exc:
        raise invalid_params(str(exc)) from None
    ls.host.progress.pop(params.session_id, None)
    if ls._diagnostics is not None and ls._diagnostics.last_session == params.session_id:
        ls._diagnostics.last_session = None
    logger.info("session %s closed", params.session_id)
    return {}


def session_set_mode(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
    """``lspAgent/session/setMode``: ``{}``."""
    params = parse(SetModeParams, raw, method=methods.SESSION_SET_MODE)
    try:
        _session(ls, params.session_id).set_mode(params.mode_id)
    except SessionError as exc:
        raise invalid_params(str(exc)) from None
    return {}

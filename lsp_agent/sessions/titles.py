"""Session titles written by the model: after the first prompt, a background request asks for
a few words naming the work (Claude Code's session titles); the answer replaces the first
prompt as the session's title in the session list and reaches the clients as ACP's
``session_info_update``. When background requests are off, or the request fails or answers
garbage, the title stays the first prompt (the session list's default).

Also the session's :class:`~lsp_agent.model.background.BackgroundRequests` (built once, from
the ``backgroundRequests`` setting and ``LSP_AGENT_BACKGROUND_REQUESTS``).
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING

from lsp_agent.model.background import BackgroundRequests, BackgroundResult, background_enabled
from lsp_agent.model.types import Message, ModelRequest
from lsp_agent.protocol.events import SessionInfoUpdate

if TYPE_CHECKING:
    from lsp_agent.sessions.session import Session

log = logging.getLogger(__name__)

TITLE_MAX_CHARS = 80
"""Longest title kept (characters); the session list cuts first prompts to the same length."""

TITLE_MAX_WORDS = 12
"""An answer of more words is not a title (the model talked instead): it is ignored."""

TITLE_MAX_TOKENS = 64
"""``max_tokens`` of the title request."""

PROMPT_CHARS = 2000
"""How much of the first prompt the title request quotes (characters)."""

TITLE_SYSTEM = "You name coding sessions. Answer with the title only."

TITLE_INSTRUCTION = (
    "Write a short title (3 to 7 words) for a coding session that starts with the user "
    "message below. Sentence case, no quotes, no final period, no preamble: the title only.\n\n"
    "<message>\n{prompt}\n</message>"
)


def background_requests(session: Session) -> BackgroundRequests:
    """The background requests of ``session`` (built once): on unless the settings say
    ``backgroundRequests: false`` or the settings' ``env`` / the environment set
    ``LSP_AGENT_BACKGROUND_REQUESTS`` to a false value."""
    if session.background is None:
        setting: bool | None = None
        environ = dict(os.environ)
        if session.settings is not None:
            environ.update(session.settings.env())
            for layer in session.settings.loaded.applied():  # highest precedence first
                value = (layer.settings.model_extra or {}).get("backgroundRequests")
                if isinstance(value, bool):
                    setting = value
                    break
        session.background = BackgroundRequests(
            model=session.model, enabled=background_enabled(environ, setting)
        )
    return session.background


def title_request(model: str, prompt: str) -> ModelRequest:
    """The request asking ``model`` for a title of the session whose first prompt is
    ``prompt`` (quoted up to :data:`PROMPT_CHARS` characters; no tools)."""
    quoted = prompt.strip()[:PROMPT_CHARS]
    return ModelRequest(
        model=model,
        system=(TITLE_SYSTEM,),
        messages=(Message.user_text(TITLE_INSTRUCTION.format(prompt=quoted)),),
        max_tokens=TITLE_MAX_TOKENS,
    )


_PREFIX = re.compile(r"^(title|session title)\s*:\s*", re.IGNORECASE)
_QUOTES = "\"'`*\u201c\u201d\u2018\u2019"  # straight and curly quotes, backticks, emphasis


def clean_title(answer: str) -> str | None:
    """The title in the model's ``answer``: its first non-empty line without quotes,
    markdown emphasis, a "Title:" prefix or a final period, whitespace collapsed. ``None``
    when nothing usable is left or the line is more than :data:`TITLE_MAX_WORDS` words; cut
    to :data:`TITLE_MAX_CHARS` characters."""
    line = next((ln.strip() for ln in answer.splitlines() if ln.strip()), "")
    line = line.lstrip("#").strip()
    line = _PREFIX.sub("", line).strip().strip(_QUOTES).strip().rstrip(".").strip()
    line = " ".join(line.split())
    if not line or not any(c.isalnum() for c in line) or len(line.split()) > TITLE_MAX_WORDS:
        return None
    if len(line) > TITLE_MAX_CHARS:
        line = line[: TITLE_MAX_CHARS - 1] + "…"
    return line


def start_title(session: Session, prompt: str) -> None:
    """After the session's first prompt: ask for its title in the background (nothing when
    background requests are off or the session has a title)."""
    if session.title is not None or not prompt.strip():
        return

    def done(result: BackgroundResult) -> None:
        title = clean_title(result.text)
        if title is None:
            log.info("the model's title answer is not a title (ignored): %r", result.text[:200])
            return
        set_title(session, title)

    background_requests(session).start(
        "title", title_request(session.config.model, prompt), on_done=done
    )


def set_title(session: Session, title: str) -> None:
    """Give ``session`` its ``title``: kept on the session, recorded in its transcript (the
    session list shows it) and sent to the client as ``session_info_update``."""
    session.title = title
    if session.recorder is not None:
        session.recorder.title(title)
    session.host.emit(session.id, SessionInfoUpdate(title=title))

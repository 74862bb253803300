"""Turns a running session into ``run -p`` events: conversation messages as they are committed
to the history (assistant messages with the API fields of the response that produced them),
tool status changes as they are emitted, and with ``--include-partial-messages`` the model's
raw stream events."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from lsp_agent.headless.render import Event, Renderer, message_event, retry_event, stream_event
from lsp_agent.headless.responses import ResponseLog
from lsp_agent.model.types import Message, ToolResultBlock, ToolUseBlock
from lsp_agent.protocol.events import (
    ContextCompacted,
    ModelRetry,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
)


class EventStream:
    """Feeds one renderer from one session.

    ``history`` returns the session's current history; messages from index ``skip`` on
    (the ones after the user's prompt) are rendered once each, in order, whenever
    :meth:`flush` runs: on every session update, before each model request (the door's model
    wrapper calls it, so a batch's tool results, committed after the batch's last update, are
    not held back until the next answer's first update), and once at the end.
    """

    def __init__(
        self,
        *,
        renderer: Renderer,
        session_id: str,
        history: Callable[[], tuple[Message, ...]],
        skip: int,
        responses: ResponseLog | None = None,
    ) -> None:
        self._renderer = renderer
        self._session_id = session_id
        self._history = history
        self._next = skip
        self._start = skip
        self._responses = responses
        self._tool_names: dict[str, str] = {}
        # Progress of a tool_use whose assistant message is not rendered yet waits for it, so
        # readers see the tool_use before its progress (as in Claude Code's stream).
        self._rendered_uses: set[str] = set()
        self._held: list[Event] = []
        self._denied: set[str] = set()

    def on_update(self, session_id: str, update: SessionUpdate) -> None:
        """Host.emit hook: render new history messages, then tool progress."""
        if isinstance(update, ContextCompacted):
            # The history was replaced by a shorter one: go on from its end.
            self._next = len(self._history())
            self._start = min(self._start, self._next)
            return
        self.flush()
        if isinstance(update, ModelRetry):
            self._renderer.system(
                retry_event(
                    attempt=update.attempt,
                    max_retries=update.max_retries,
                    delay_ms=update.delay_ms,
                    status=update.status,
                    error=update.error,
                    message=update.message,
                    session_id=self._session_id,
                )
            )
        elif isinstance(update, ToolCall):
            self._tool_names[update.tool_call_id] = update.title
            if update.kind == "think":
                # The agent's own checks (the verification verdict) have no tool_use to wait
                # for: show them as they happen.
                self._rendered_uses.add(update.tool_call_id)
            self._send(
                self._progress(update.tool_call_id, status=update.status, title=update.title)
            )
        elif isinstance(update, ToolCallUpdate):
            refusal = (update.raw_output or {}).get("refusal")
            denied = isinstance(refusal, dict) and refusal.get("kind") == "denied"
            if denied:
                self._denied.add(update.tool_call_id)
            if update.status is not None or update.title is not None:
                event = self._progress(
                    update.tool_call_id, status=update.status, title=update.title
                )
                if denied:
                    event["denied"] = True
                verification = (update.raw_output or {}).get("verification")
                if isinstance(verification, dict):
                    event["verification"] = verification
                self._send(event)
            elif update.content:
                text = "".join(
                    item.content.text for item in update.content if item.type == "content"
                )
                if text:
                    event = self._progress(
                        update.tool_call_id, status=None, title=None, output=text
                    )
                    self._send(event)

    def _send(self, event: Event) -> None:
        if event["tool_use_id"] in self._rendered_uses:
            self._renderer.progress(event)
        else:
            self._held.append(event)

    def _progress(
        self, tool_use_id: str, *, status: str | None, title: str | None, output: str | None = None
    ) -> Event:
        """Every ``tool_progress`` event has the same keys; ``status``, ``title`` and
        ``output`` are ``null`` when this event does not change them."""
        return {
            "type": "tool_progress",
            "tool_use_id": tool_use_id,
            "tool_name": self._tool_names.get(tool_use_id),
            "status": status,
            "title": title,
            "output": output,
            "parent_tool_use_id": None,
            "session_id": self._session_id,
            "uuid": str(uuid.uuid4()),
        }

    def partial(self, raw: dict[str, Any]) -> None:
        """One server-sent event of the model's answer (``--include-partial-messages``)."""
        self._renderer.partial(stream_event(event=raw, session_id=self._session_id))

    def begin_turn(self) -> None:
        """A new prompt is about to be added: its user message is not echoed (it is the
        input), and :meth:`new_messages` starts after it."""
        self.flush()
        self._next = len(self._history()) + 1
        self._start = self._next

    def flush(self) -> None:
        """Render the history messages not rendered yet."""
        history = self._history()
        while self._next < len(history):
            message = history[self._next]
            self._next += 1
            if message.role == "assistant" and self._responses is not None:
                data = self._responses.message_fields(message)
            else:
                data = _api_shaped(message.model_dump(mode="json"))
            self._renderer.message(message_event(message=data, session_id=self._session_id))
            self._rendered_uses.update(use.id for use in message.tool_uses())
        held, self._held = self._held, []
        for event in held:
            self._send(event)

    def finish(self) -> None:
        """Render what is left: remaining messages, then any progress still held back."""
        self.flush()
        held, self._held = self._held, []
        for event in held:
            self._renderer.progress(event)

    def new_messages(self) -> tuple[Message, ...]:
        """The messages this run added after the prompt."""
        return self._history()[self._start :]

    def last_assistant_text(self) -> str:
        """Text of the last assistant message of this run ('' if it had none)."""
        for message in reversed(self.new_messages()):
            if message.role == "assistant":
                return message.text()
        return ""

    def permission_denials(self) -> list[dict[str, Any]]:
        """Tool calls refused as ``denied`` (``rawOutput.refusal`` of their final update), in
        the order of the history, as Claude Code lists them:
        ``{"tool_name", "tool_use_id", "tool_input"}``."""
        uses: dict[str, ToolUseBlock] = {}
        denials: list[dict[str, Any]] = []
        for message in self.new_messages():
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    uses[block.id] = block
                elif isinstance(block, ToolResultBlock) and block.tool_use_id in self._denied:
                    use = uses.get(block.tool_use_id)
                    denials.append(
                        {
                            "tool_name": use.name if use else None,
                            "tool_use_id": block.tool_use_id,
                            "tool_input": use.input if use else None,
                        }
                    )
        return denials


def _api_shaped(data: dict[str, Any]) -> dict[str, Any]:
    """A dumped user message with each ``tool_result``'s images in the Messages API's shape
    (``content`` a list of a text block and image blocks), as Claude Code prints it."""
    for block in data.get("content", []):
        if block.get("type") != "tool_result":
            continue
        images = block.pop("images", None)
        if images:
            text = [{"type": "text", "text": block["content"]}] if block["content"] else []
            block["content"] = text + [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": i["media_type"], "data": i["data"]},
                }
                for i in images
            ]
    return data

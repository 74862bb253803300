"""Provider-neutral conversation types.

The agent loop, the sessions and the doors speak only these types; the Anthropic adapter
(:mod:`lsp_agent.model.anthropic`) converts them to and from the Messages API. Field names
follow the Messages API (``tool_use``, ``tool_result``, ``stop_reason``, ``cache_control``) so
the mapping is one to one and transcripts read like API traffic.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextBlock(_Block):
    """Plain text from the user or the assistant."""

    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Block):
    """Extended-thinking output. ``signature`` must be sent back verbatim on later requests."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class ToolUseBlock(_Block):
    """The assistant asks to run tool ``name`` with ``input`` (a JSON object)."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


class ImageBlock(_Block):
    """An image inside a ``tool_result`` (the Messages API's ``image`` block with a
    ``base64`` source). ``media_type`` is one of ``image/jpeg``, ``image/png``, ``image/gif``,
    ``image/webp`` (the types the API accepts); ``data`` is the base64 text."""

    type: Literal["image"] = "image"
    media_type: str
    data: str


class ToolResultBlock(_Block):
    """The outcome of one ``tool_use``; ``tool_use_id`` names it. ``content`` is text;
    ``images`` follow it in the ``tool_result`` sent to the model (an MCP tool that returns
    images)."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False
    # Left out of the dump when empty, so transcripts and the wire keep the shape they had
    # before tools could return images.
    images: tuple[ImageBlock, ...] = Field(default=(), exclude_if=lambda images: not images)


ContentBlock = Annotated[
    TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock, Field(discriminator="type")
]

Role = Literal["user", "assistant"]


class Message(BaseModel):
    """One conversation message. Invariant kept by the loop: every ``tool_use`` in an assistant
    message is answered by exactly one ``tool_result`` in the following user message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: tuple[ContentBlock, ...]

    @classmethod
    def user_text(cls, text: str) -> Message:
        """A user message holding one text block."""
        return cls(role="user", content=(TextBlock(text=text),))

    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        """The ``tool_use`` blocks of this message, in order."""
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))

    def text(self) -> str:
        """All text blocks joined (no separator)."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


StopReason = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]
"""The Messages API's ``stop_reason`` values (API version 2026-10-21)."""


class Usage(BaseModel):
    """Token counts of one model response (tokens, as the API reports them)."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def context_tokens(self) -> int:
        """Tokens in the prompt of this request (input + cache reads + cache writes)."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


class AssistantResponse(BaseModel):
    """One complete model response."""

    model_config = ConfigDict(frozen=True)

    content: tuple[ContentBlock, ...]
    stop_reason: StopReason | None
    usage: Usage = Usage()
    model: str = ""
    id: str = ""
    """The Messages API's message id (``msg_…``); empty when the endpoint sent none."""

    def message(self) -> Message:
        """The response as an assistant :class:`Message`."""
        # ``content`` was validated with the response: not again for every turn.
        return Message.model_construct(role="assistant", content=self.content)


class ToolSpec(BaseModel):
    """A tool as offered to the model: name, description and JSON Schema of its input."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    input_schema: dict[str, Any]


class ModelRequest(BaseModel):
    """Everything one model call needs. ``system`` is a list of text parts; the adapter puts
    ``cache_control`` breakpoints after the first and the last of them, on the first block of
    the first message and on the last block of the last message."""

    model_config = ConfigDict(frozen=True)

    model: str
    system: tuple[str, ...]
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192
    thinking_budget: int | None = None
    background: str | None = None
    """Set on a request made off the user's turn (:mod:`lsp_agent.model.background`): its
    kind (``summary``, ``title``), sent as the ``x-lsp-agent-background`` HTTP header."""


# ---- streaming events -------------------------------------------------------------------------


class TextDelta(BaseModel):
    """A piece of assistant text for content block ``index``."""

    type: Literal["text_delta"] = "text_delta"
    index: int
    text: str


class ThinkingDelta(BaseModel):
    """A piece of thinking text for content block ``index``."""

    type: Literal["thinking_delta"] = "thinking_delta"
    index: int
    thinking: str


class ToolUseStart(BaseModel):
    """A ``tool_use`` block began; its input follows as :class:`ToolInputDelta` pieces."""

    type: Literal["tool_use_start"] = "tool_use_start"
    index: int
    id: str
    name: str


class ToolInputDelta(BaseModel):
    """A piece of the JSON text of a tool_use's input (``input_json_delta``)."""

    type: Literal["tool_input_delta"] = "tool_input_delta"
    index: int
    partial_json: str


class ResponseDone(BaseModel):
    """The last event of every stream: the complete response."""

    type: Literal["response_done"] = "response_done"
    response: AssistantResponse


class RetryWait(BaseModel):
    """The request failed with a retryable error before any of its answer arrived; the client
    sends it again after ``delay_ms`` (milliseconds). ``attempt`` is the 1-based number of
    the retry about to be made, of at most ``max_retries``. ``status`` is the HTTP status
    (``None`` for a refused, broken or timed-out connection); ``error`` is the API's error type
    (``overloaded_error``, ``rate_limit_error``, ...) or ``connection_error`` /
    ``timeout_error``; ``message`` is the failure in words. Nothing of the answer precedes it,
    so a consumer may show it and clear it at the next event."""

    type: Literal["retry_wait"] = "retry_wait"
    attempt: int
    max_retries: int
    delay_ms: int
    status: int | None = None
    error: str
    message: str


ModelStreamEvent = (
    TextDelta | ThinkingDelta | ToolUseStart | ToolInputDelta | ResponseDone | RetryWait
)

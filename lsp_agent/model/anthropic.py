"""The Anthropic Messages API client: :class:`AnthropicModel` implements
:class:`~lsp_agent.model.base.Model` with the official ``anthropic`` SDK.

The SDK costs about a second to import, so nothing here imports it at module import time:
the client is built on the first :meth:`AnthropicModel.stream` call, and :func:`warm_up`
imports the SDK ahead of time (call it from a worker thread after start-up).

Request mapping (Messages API reference, prompt-caching guide; built in
:mod:`lsp_agent.model.anthropic_request`):

- ``system`` parts become text blocks; the last carries ``cache_control: ephemeral``.
- tools keep their order (name, description, input_schema); the cache prefix covers them
  because the API orders the prompt tools → system → messages.
- the last cacheable block of the last message carries ``cache_control`` too (thinking blocks
  cannot carry it, and empty text blocks are dropped because the API rejects them).
- ``thinking={"type": "enabled", "budget_tokens": N}`` only when ``thinking_budget`` is set.
  API version 2026-10-21 (SDK 2.x) has no temperature/top_p/top_k, so none are sent.

Sending (Claude API): the body is encoded once per request, reusing the JSON text of every
message the previous request sent (:mod:`lsp_agent.model.anthropic_body`), and goes out with the
SDK's lower-level ``client.post(..., content=...)``, which keeps the SDK's headers,
authentication, timeouts and error mapping but skips ``messages.create``'s copy and re-encoding of
the whole history on every request; events come back as the plain JSON of each server-sent event,
decoded by :class:`~lsp_agent.model.anthropic_sse.PlainEvents` (typed SDK events only for
``raw_events``, whose output keeps the SDK's shape). Bedrock and
Vertex rewrite the body in their clients, so they get ``messages.create``.

Response mapping (decoded in :mod:`lsp_agent.model.anthropic_stream`): text, thinking (with
signature) and tool_use blocks are kept; other block types (``redacted_thinking``,
``server_tool_use``, server tool results...) are skipped, and the ``index`` of every stream
event is the block's position in the final ``AssistantResponse.content`` (not the API's index,
which counts skipped blocks).

A tool_use whose streamed input is not a JSON object gets the input
``{"__invalid_json__": "<raw text>"}`` (:data:`INVALID_JSON_KEY`), so the agent loop can
answer it with an ``is_error`` tool_result naming the problem instead of running the tool with
a guessed input.

Errors: connection errors, 408/409/429/5xx/529 (honouring ``retry-after``) are retried up to
``max_retries`` times by our own loop (:mod:`lsp_agent.model.retry`, the SDK's policy; the
SDK's retries are off for the stream), which yields a ``RetryWait`` before each wait; whatever
still fails becomes :class:`ModelError`, naming the
endpoint, the HTTP status and the API's message; ``retryable`` is set for 408/409/429/5xx/529,
for overload, rate-limit, api and timeout errors sent mid-stream (``event: error``), for
refused, timed-out or broken connections, and for a stream that ends before ``message_stop``.
``stop_reason`` values are passed through (see ``StopReason``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from lsp_agent.model.background import BACKGROUND_HEADER
from lsp_agent.model.base import ModelError
from lsp_agent.model.credentials import no_credentials_message, surely_without_credentials
from lsp_agent.model.providers import (
    CONTEXT_1M_BETA,
    ProviderSettings,
    provider_from_env,
    wants_1m_context,
    wire_model,
)
from lsp_agent.model.retry import (
    max_retries_from,
    stream_with_retries,
)
from lsp_agent.model.types import (
    ModelRequest,
    ModelStreamEvent,
    ResponseDone,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from lsp_agent.model.tls import PreparedTls

from lsp_agent.model.anthropic_body import BodyEncoder
from lsp_agent.model.anthropic_env import (
    CONNECT_TIMEOUT_ENV,
    READ_TIMEOUT_ENV,
    resolve_model_name,
    timeouts_from_env,
)
from lsp_agent.model.anthropic_errors import describe_cause, mid_stream_error, status_error
from lsp_agent.model.anthropic_request import (
    REQUEST_LIMIT_BYTES,
    ConvertedMessages,
    FirstMarks,
    check_size,
    convert_messages,
    refuse_oversized,
    to_api_params,
)
from lsp_agent.model.anthropic_stream import INVALID_JSON_KEY, Accumulator
from lsp_agent.model.lean_client import http_client

__all__ = [
    "CONNECT_TIMEOUT_ENV",
    "DEFAULT_BASE_URL",
    "INVALID_JSON_KEY",
    "READ_TIMEOUT_ENV",
    "REQUEST_LIMIT_BYTES",
    "AnthropicModel",
    "ConvertedMessages",
    "apply_settings_env",
    "convert_messages",
    "resolve_model_name",
    "timeouts_from_env",
    "to_api_params",
    "warm_up",
]

log = logging.getLogger(__name__)


DEFAULT_BASE_URL = "https://api.anthropic.com"


ModelT = TypeVar("ModelT")


def apply_settings_env(model: ModelT, env: Mapping[str, str]) -> ModelT:
    """``model`` with the timeout variables of a settings ``env`` applied when it is an
    :class:`AnthropicModel` or wraps one as ``inner`` (a fallback model; see
    :meth:`AnthropicModel.use_settings_env`); other models are returned unchanged. Raises
    ``ValueError`` naming the variable for a malformed value."""
    # A fallback wrapper (``--fallback-model``) holds the client the settings apply to.
    target = getattr(model, "inner", model)
    if isinstance(target, AnthropicModel):
        target.use_settings_env(env)
    return model


def warm_up() -> None:
    """Import the ``anthropic`` SDK now (about a second), so the first request does not pay
    for it on the event loop. Safe to call from any thread, any number of times."""
    import anthropic  # noqa: F401


def _extra_headers(request: ModelRequest) -> dict[str, str]:
    """HTTP headers ``request`` needs besides the SDK's: the 1M-context beta, and the
    background marker (:mod:`lsp_agent.model.background`)."""
    headers: dict[str, str] = {}
    if wants_1m_context(request.model):
        headers["anthropic-beta"] = CONTEXT_1M_BETA
    if request.background is not None:
        headers[BACKGROUND_HEADER] = request.background
    return headers


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Call:
    """One request as every try sends it: ``body`` (the encoded JSON, first-party API) or
    ``params`` (``messages.create``'s keyword arguments, the clouds); ``headers`` besides the
    SDK's; ``size``: the body's bytes; ``observer``: :attr:`AnthropicModel.raw_events` for a
    request of the conversation, ``None`` for a background one (a title is no part of it)."""

    params: dict[str, Any]
    body: bytes | None
    headers: dict[str, str]
    size: int
    observer: Callable[[dict[str, Any]], None] | None


# ---- the client -------------------------------------------------------------------------------


class AnthropicModel:
    """A :class:`~lsp_agent.model.base.Model` backed by the SDK's ``AsyncAnthropic``, or by its
    ``AsyncAnthropicBedrock``/``AsyncAnthropicVertex`` when ``provider`` says so
    (:mod:`lsp_agent.model.providers`; the model name is mapped to the provider's id there).

    ``api_key`` (sent as the API key) or ``auth_token`` (bearer token): at most one; with
    neither the SDK resolves credentials itself (``ANTHROPIC_API_KEY``,
    ``ANTHROPIC_AUTH_TOKEN``, profiles; the AWS chain or Google ADC for the clouds).
    ``base_url`` defaults to ``ANTHROPIC_BASE_URL`` or the public API (Claude API only; the
    clouds take ``provider.base_url``). ``environ`` holds the ``ANTHROPIC_DEFAULT_*_MODEL``
    alias overrides (default ``os.environ``). ``max_retries``: retries per request (our loop
    for :meth:`stream`, the SDK's for :meth:`count_tokens`).
    ``timeout_s``: seconds allowed for each network operation (connect at most 10 s); a stream
    may run longer in total.

    The SDK client is built on the first :meth:`stream`; :meth:`aclose` releases its
    connections. Consumers that stop iterating early should close the stream (e.g.
    ``contextlib.aclosing``); cancelling the consuming task closes it at once.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 600,
        provider: ProviderSettings | None = None,
        environ: Mapping[str, str] | None = None,
        connect_timeout_s: float = 10,
        tls: PreparedTls | None = None,
    ) -> None:
        if api_key and auth_token:
            raise ValueError("give api_key or auth_token, not both")
        self._provider = provider or ProviderSettings()
        self._environ = environ
        self._api_key = api_key or None
        self._auth_token = auth_token or None
        self.raw_events: Callable[[dict[str, Any]], None] | None = None
        """Called with every server-sent event as JSON of the conversation's requests (``lsp-agent
        -p --include-partial-messages``; not a background request's); ``None``: not observed."""
        self._base_url = base_url or None
        self._max_retries = max_retries
        self._timeout_s = timeout_s
        self._connect_timeout_s = min(connect_timeout_s, timeout_s)
        self._client: AsyncAnthropic | None = None
        self._regional: dict[str, AsyncAnthropic] = {}
        """Clients of the Vertex regions that ``VERTEX_REGION_CLAUDE_*`` send a model to."""
        self._converted: ConvertedMessages = {}
        self._tls = tls
        """A TLS context built ahead (the daemon's), used when the default would be the same."""
        self._body = BodyEncoder()
        self._first_marks: FirstMarks = {}
        """The user's conversation's first message with its cache breakpoint (see
        :data:`~lsp_agent.model.anthropic_request.FirstMarks`)."""

    def use_settings_env(self, env: Mapping[str, str]) -> None:
        """Apply :data:`READ_TIMEOUT_ENV` and :data:`CONNECT_TIMEOUT_ENV` from a settings
        file's ``env`` object (milliseconds). As in Claude Code, whose settings ``env`` is applied
        to every session, a value there beats the process environment; a variable the settings
        do not name keeps its environment value. Only these two are read: settings never
        redirect the endpoint or its credentials. Takes effect from the next client made
        (call it before the first request). Raises ``ValueError`` naming the variable when a
        value is not a positive number of milliseconds."""
        names = (READ_TIMEOUT_ENV, CONNECT_TIMEOUT_ENV)
        given = {name: env[name] for name in names if name in env}
        if not given:
            return
        base = os.environ if self._environ is None else self._environ
        read_s, connect_s = timeouts_from_env({**{n: base.get(n, "") for n in names}, **given})
        self._timeout_s = read_s
        self._connect_timeout_s = min(connect_s, read_s)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        max_retries: int | None = None,
        timeout_s: float | None = None,
        tls: PreparedTls | None = None,
    ) -> AnthropicModel:
        """A model configured from ``ANTHROPIC_API_KEY`` (preferred when both are set, as the
        SDK does), ``ANTHROPIC_AUTH_TOKEN`` and ``ANTHROPIC_BASE_URL`` in ``environ``
        (default ``os.environ``), with the timeouts of :func:`timeouts_from_env` unless
        ``timeout_s`` is given and ``LSP_AGENT_MAX_RETRIES`` unless ``max_retries`` is;
        ``tls``: a context built ahead (see :mod:`lsp_agent.model.tls`). Raises
        ``ValueError`` for a malformed timeout or retry variable."""
        env = os.environ if environ is None else environ
        if max_retries is None:
            max_retries = max_retries_from(env)
        provider = provider_from_env(env)
        read_s, connect_s = timeouts_from_env(env)
        if timeout_s is not None:
            read_s = timeout_s
        if provider.provider != "anthropic":
            return cls(
                max_retries=max_retries,
                timeout_s=read_s,
                connect_timeout_s=connect_s,
                provider=provider,
                environ=env,
            )
        api_key = env.get("ANTHROPIC_API_KEY") or None
        return cls(
            api_key=api_key,
            auth_token=None if api_key else env.get("ANTHROPIC_AUTH_TOKEN") or None,
            base_url=env.get("ANTHROPIC_BASE_URL") or None,
            max_retries=max_retries,
            timeout_s=read_s,
            connect_timeout_s=connect_s,
            provider=provider,
            environ=env,
            tls=tls,
        )

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (as configured; the SDK's default if none)."""
        if self._client is not None:
            return str(self._client.base_url).rstrip("/")
        if self._provider.provider != "anthropic":
            region = self._provider.region or "?"
            default = (
                f"https://bedrock-runtime.{region}.amazonaws.com"
                if self._provider.provider == "bedrock"
                else f"https://{region}-aiplatform.googleapis.com/v1"
            )
            return (self._provider.base_url or default).rstrip("/")
        return (self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )

    def _new_client(self, region: str | None = None) -> AsyncAnthropic:
        """The SDK client for the provider (``ValueError``/``RuntimeError`` from the SDK for
        missing settings; :class:`ModelError` when the provider's extra is missing); ``region``
        overrides the provider's (a per-model Vertex region)."""
        import anthropic

        from lsp_agent.model.unsigned import bedrock_class, vertex_class

        timeout = anthropic.Timeout(self._timeout_s, connect=self._connect_timeout_s)
        settings = self._provider
        if region is not None:
            settings = dataclasses.replace(settings, region=region)
        if settings.problem is not None:
            raise ModelError(settings.problem)
        hint = settings.missing_extra()
        if hint is not None:
            raise ModelError(hint)
        if settings.provider == "bedrock":
            client: Any = bedrock_class(skip_auth=settings.skip_auth)(
                aws_region=settings.region,
                base_url=settings.base_url,
                max_retries=0,
                timeout=timeout,
            )
            return client  # type: ignore[no-any-return]
        if settings.provider == "vertex":
            if settings.region is None:
                raise ModelError("Google Vertex AI needs a region: set CLOUD_ML_REGION")
            client = vertex_class(skip_auth=settings.skip_auth)(
                region=settings.region,
                project_id=settings.project_id or anthropic.NOT_GIVEN,
                base_url=settings.base_url,
                max_retries=0,
                timeout=timeout,
            )
            return client  # type: ignore[no-any-return]
        # The HTTP client reads the certificate variables from the process environment.
        context = self._tls.for_environ(os.environ) if self._tls is not None else None
        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            auth_token=self._auth_token,
            base_url=self._base_url,
            max_retries=0,
            timeout=timeout,
            http_client=http_client(self.endpoint, timeout=timeout, context=context),
        )

    def _get_client(self, model: str | None = None) -> AsyncAnthropic:
        if self._provider.provider == "anthropic" and surely_without_credentials(
            api_key=self._api_key, auth_token=self._auth_token, environ=self._environ
        ):
            raise ModelError(no_credentials_message(self.endpoint))  # before the SDK's import
        region = self._provider.region_for(model)
        if region is not None and region != self._provider.region:
            regional = self._regional.get(region)
            if regional is None:
                regional = self._regional[region] = self._checked_client(region)
            return regional
        if self._client is None:
            self._client = self._checked_client(None)
        return self._client

    def _checked_client(self, region: str | None) -> AsyncAnthropic:
        """:meth:`_new_client`, its failures as :class:`ModelError` naming the problem."""
        import anthropic

        try:
            return self._new_client(region)
        except anthropic.CredentialsError as exc:
            raise ModelError(
                f"No credentials for the model endpoint {self.endpoint}: set "
                f"ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN ({exc})"
            ) from exc
        except (anthropic.AnthropicError, ValueError, RuntimeError) as exc:
            raise ModelError(
                f"Cannot set up the {self._provider.display} client for {self.endpoint}: {exc}"
            ) from exc

    async def aclose(self) -> None:
        """Close the SDK client's connection pool (idempotent)."""
        client, self._client = self._client, None
        regional, self._regional = list(self._regional.values()), {}
        for each in [client, *regional]:
            if each is not None:
                await each.close()

    def _convert(self, request: ModelRequest) -> list[dict[str, Any]]:
        """The request's messages in API form, reusing earlier conversions. A background
        request (a summary, a title) does not replace the conversions kept for the next
        request of the user's turn."""
        messages, converted = convert_messages(request.messages, self._converted)
        if request.background is None:
            self._converted = converted
        return messages

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Send ``request`` and yield deltas as they arrive, then one :class:`ResponseDone`;
        before each retry a :class:`~lsp_agent.model.types.RetryWait`.

        Raises :class:`ModelError` (see the module doc); cancellation closes the HTTP stream.
        """
        client = self._get_client(request.model)
        messages = self._convert(request)
        background = request.background is not None
        params = to_api_params(
            request, converted=messages, first_marks=None if background else self._first_marks
        )
        params["model"] = wire_model(request.model, self._provider, self._environ)
        headers = _extra_headers(request)
        body: bytes | None = None
        if self._provider.provider == "anthropic":
            # Encoded once, reusing the text of the messages already sent (see
            # anthropic_body); the clouds' clients rewrite the body, so they get the params.
            params["stream"] = True
            body = self._body.encode(
                params,
                keep=not background,
                # A session's tools and system prompt are the same from request to request.
                sources={"tools": request.tools, "system": request.system},
            )
            size = check_size(len(body), self.endpoint)
        else:
            size = refuse_oversized(params, self.endpoint)
        call = _Call(
            params=params,
            body=body,
            headers=headers,
            size=size,
            observer=None if background else self.raw_events,
        )

        def attempt(retries: int) -> AsyncGenerator[ModelStreamEvent, None]:
            return self._stream_once(client, call, retries=retries)

        async for event in stream_with_retries(attempt, max_retries=self._max_retries):
            yield event

    async def _open(self, client: AsyncAnthropic, call: _Call, retries: int) -> Any:
        """The SDK's stream of one try (``retries``: tries made before it, sent as the SDK's
        ``x-stainless-retry-count`` header). Events come as the JSON objects of the
        server-sent events; typed SDK events (dumped by the caller) when the clouds' clients
        send it or when ``raw_events`` wants them in the SDK's shape."""
        from anthropic import AsyncStream
        from anthropic.types import RawMessageStreamEvent

        from lsp_agent.model.anthropic_sse import PlainEvents

        headers = {**call.headers, "x-stainless-retry-count": str(retries)}
        if call.body is None:
            return await client.messages.create(**call.params, extra_headers=headers, stream=True)
        stream_cls: type[AsyncStream[Any]] = (
            PlainEvents if call.observer is None else AsyncStream[RawMessageStreamEvent]
        )
        return await client.post(
            "/v1/messages",
            cast_to=object,
            content=call.body,
            options={"headers": headers},
            stream=True,
            stream_cls=stream_cls,
        )

    async def _stream_once(
        self, client: AsyncAnthropic, call: _Call, *, retries: int
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        """One try of a streaming request (``retries``: tries made before it)."""
        import anthropic
        import httpx2

        size = call.size
        accumulator = Accumulator(observer=call.observer)
        try:
            raw = await self._open(client, call, retries)
            async with raw:
                async for item in raw:
                    data = item
                    if not isinstance(item, dict):
                        # An SDK event object, or JSON that is no object (no event: ignored).
                        dump = getattr(item, "model_dump", None)
                        data = None if dump is None else dump(mode="json", exclude_none=True)
                    for out in accumulator.feed(data):
                        yield out
        except anthropic.APIStatusError as exc:
            raise status_error(
                exc,
                endpoint=self.endpoint,
                max_retries=self._max_retries,
                size=size,
                retries=retries,
            ) from exc
        except anthropic.APITimeoutError as exc:
            raise ModelError(
                f"The model endpoint {self.endpoint} did not answer within the "
                f"{self._timeout_name(exc)} (after {retries} retries)",
                retryable=True,
                kind="timeout_error",
            ) from exc
        except anthropic.APIConnectionError as exc:
            raise ModelError(
                f"Cannot reach the model endpoint {self.endpoint}: {describe_cause(exc)} "
                f"(after {retries} retries)",
                retryable=True,
                kind="connection_error",
            ) from exc
        except (httpx2.HTTPError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise mid_stream_error(
                exc, endpoint=self.endpoint, timeout_name=self._timeout_name
            ) from exc
        except anthropic.AnthropicError as exc:
            raise ModelError(f"Model request to {self.endpoint} failed: {exc}") from exc
        except TypeError as exc:
            # The SDK signals "no credentials at all" with a TypeError at request time.
            if "authentication" not in str(exc):
                raise
            raise ModelError(no_credentials_message(self.endpoint)) from exc
        except Exception as exc:
            # The clouds' credential chains (boto3, google-auth) fail with their own errors
            # (no AWS credentials, no project id, no ADC) while the request is prepared.
            if self._provider.provider == "anthropic":
                raise
            raise ModelError(
                f"Request to {self._provider.display} at {self.endpoint} failed: "
                f"{exc or type(exc).__name__} ({type(exc).__name__})"
            ) from exc
        if not accumulator.finished:
            raise ModelError(
                f"The model endpoint {self.endpoint} ended the stream before message_stop",
                retryable=True,
                kind="connection_error",
                mid_stream=True,
            )
        yield ResponseDone(response=accumulator.response())

    async def count_tokens(self, request: ModelRequest) -> int:
        """Exact input tokens of ``request`` (``POST /v1/messages/count_tokens``). Raises
        :class:`ModelError` when the call fails."""
        import anthropic

        client = self._get_client(request.model).with_options(max_retries=self._max_retries)
        params = to_api_params(request)
        params["model"] = wire_model(request.model, self._provider, self._environ)
        if wants_1m_context(request.model):
            params["extra_headers"] = {"anthropic-beta": CONTEXT_1M_BETA}
        params.pop("max_tokens", None)
        try:
            result = await client.messages.count_tokens(**params)
        except anthropic.APIStatusError as exc:
            raise status_error(exc, endpoint=self.endpoint, max_retries=self._max_retries) from exc
        except anthropic.AnthropicError as exc:
            raise ModelError(f"Token count at {self.endpoint} failed: {exc}") from exc
        return int(result.input_tokens)

    def _timeout_name(self, exc: BaseException) -> str:
        """Which timeout expired, with its value and the variable that sets it."""
        import httpx2

        cause: BaseException | None = exc
        while cause is not None and not isinstance(cause, httpx2.ConnectTimeout):
            cause = cause.__cause__ or cause.__context__
        if cause is not None:
            return f"connect timeout of {self._connect_timeout_s:g} s ({CONNECT_TIMEOUT_ENV})"
        return f"read timeout of {self._timeout_s:g} s ({READ_TIMEOUT_ENV})"

"""The scripted Messages-API server: plays a :class:`~lsp_agent.testing.scenario.Scenario` over
real HTTP/1.1 on 127.0.0.1, for tests and the offline demo.

Point any Messages-API client at it (``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``); the real
``anthropic`` SDK talks to it unchanged, retries included.

Endpoints:

- ``POST /v1/messages`` (any query string): consumes the next scenario step. A request that
  does not match the step's ``expect``, or arrives after the last step, gets HTTP 400
  ``invalid_request_error`` naming the step and the difference; the problem is recorded in
  :attr:`ScriptedServer.failures` and the step stays unconsumed.
- ``POST /v1/messages/count_tokens``: ``{"input_tokens": <request bytes / 4>}``.
- ``HEAD /``: 200. Anything else: 404 with an API error body, recorded as a failure.

Three ways to run it:

- ``async with ScriptedServer(scenario=..., variables=...) as server:`` inside an event loop
  (async tests); ``server.base_url`` is the endpoint.
- ``with ScriptedServerThread(scenario=...) as server:`` (:mod:`lsp_agent.testing.thread`)
  from synchronous code: the server gets its own thread and event loop, so a product running
  in a subprocess can talk to it while the test inspects it.
- ``python -m lsp_agent.testing --scenario FILE_OR_NAME [--port 0] [--port-file F]
  [--var NAME=VALUE]...`` (:mod:`lsp_agent.testing.__main__`) as a process.

:func:`scripted_env` builds the environment for a subprocess that should use the server;
scenarios are written as JSON files or with the builders of :mod:`lsp_agent.testing.scenario`.
Every ``assert_done()`` raises :class:`AssertionError` listing failures and unconsumed steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from lsp_agent.model.background import BACKGROUND_HEADER
from lsp_agent.testing.http11 import (
    MAX_HEADER_BYTES,
    BadRequestError,
    Request,
    head,
    read_request,
    sse_chunk,
)
from lsp_agent.testing.scenario import Scenario, ScriptedError, ScriptedResponse, Step
from lsp_agent.testing.wire import (
    check_expect,
    error_body,
    error_type_for,
    render_events,
    render_message,
)

HOST = "127.0.0.1"

Responder = Callable[[Mapping[str, Any]], ScriptedResponse]
"""Computes the answer to a ``/v1/messages`` request body instead of a scripted step (a model
that reacts to what it is sent, such as the offline trial model of ``serve --offline``)."""
SCRIPTED_API_KEY = "sk-scripted-test-key"
"""The API key :func:`scripted_env` sets; the server accepts any key."""


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One HTTP request the server received.

    ``step`` is the scenario step index it was matched against (``None`` when none applied,
    ``-1`` when a route answered it),
    ``body`` the parsed JSON (``None`` if absent or not JSON), ``outcome`` one of
    ``"response"``, ``"error"`` (a scripted error), ``"rejected"`` (failure recorded),
    ``"count_tokens"``, ``"other"``.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    step: int | None
    outcome: str
    background: str | None = None
    """The background kind the request was marked with (its ``step`` is then an index into
    that kind's script)."""


@dataclass(kw_only=True)
class _State:
    """Progress through the script. Mutated on the server's loop; read from any thread."""

    scenario: Scenario
    next_step: int = 0
    next_background: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    disconnects: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class ScriptedServer:
    """The scripted Messages-API server on the running event loop.

    ``scenario`` is played in order; ``{{name}}`` placeholders in it are replaced from
    ``variables`` first. With a ``responder``, every request that no route matches is answered
    by it instead (nothing is consumed; an exception in it becomes an HTTP 500 naming it).
    ``port`` 0 picks a free port. Use ``async with`` or
    :meth:`start`/:meth:`stop`. Inspect :attr:`requests`, :attr:`failures`,
    :meth:`unconsumed`; :meth:`assert_done` checks that the script was played exactly.
    """

    def __init__(
        self,
        *,
        scenario: Scenario,
        variables: Mapping[str, str] | None = None,
        port: int = 0,
        responder: Responder | None = None,
    ) -> None:
        self._state = _State(scenario=scenario.with_variables(dict(variables or {})))
        self._responder = responder
        self._port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._request_seq = 0
        self._disconnected: asyncio.Event | None = None
        self._stopping = False
        self._gates: dict[str, asyncio.Event] = {}

    # ---- lifecycle ----

    async def start(self) -> str:
        """Listen on 127.0.0.1 and return the base URL (``http://127.0.0.1:PORT``)."""
        if self._server is not None:
            raise RuntimeError("ScriptedServer already started")
        self._disconnected = asyncio.Event()
        self._stopping = False
        self._server = await asyncio.start_server(
            self._on_connection, HOST, self._port, limit=MAX_HEADER_BYTES
        )
        return self.base_url

    async def stop(self) -> None:
        """Stop listening and close every connection (stalled streams included)."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping = True
        server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # ---- inspection ----

    @property
    def port(self) -> int:
        """The bound TCP port. Raises ``RuntimeError`` before :meth:`start`."""
        if self._server is None or not self._server.sockets:
            raise RuntimeError("ScriptedServer is not running")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, the value for ``ANTHROPIC_BASE_URL``."""
        return f"http://{HOST}:{self.port}"

    @property
    def scenario(self) -> Scenario:
        """The scenario being played, variables substituted."""
        return self._state.scenario

    @property
    def exchanges(self) -> list[Exchange]:
        """Every request received, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.exchanges)

    @property
    def requests(self) -> list[Any]:
        """The parsed JSON bodies of every ``POST /v1/messages``, in arrival order."""
        return [e.body for e in self.exchanges if e.path.endswith("/v1/messages")]

    @property
    def failures(self) -> list[str]:
        """Requests that did not match the script, one message each (a copy)."""
        with self._state.lock:
            return list(self._state.failures)

    @property
    def disconnects(self) -> list[int]:
        """Steps whose streamed answer the client hung up on before it was complete."""
        with self._state.lock:
            return list(self._state.disconnects)

    def unconsumed(self) -> list[int]:
        """Indexes of the steps no request has consumed yet."""
        with self._state.lock:
            return list(range(self._state.next_step, len(self._state.scenario.steps)))

    def assert_done(self) -> None:
        """Raise :class:`AssertionError` listing failures and unconsumed steps, if any."""
        problems = summary_problems(self.failures, self.unconsumed(), self.scenario)
        if problems:
            raise AssertionError(
                f"scenario {self.scenario.name!r} not played as written:\n" + "\n".join(problems)
            )

    async def wait_for_disconnect(self, *, timeout_s: float = 5.0) -> list[int]:
        """Wait (at most ``timeout_s`` seconds) until a client has hung up on a streamed answer;
        returns :attr:`disconnects`. Raises :class:`AssertionError` on timeout."""
        if self._disconnected is None:
            raise RuntimeError("ScriptedServer is not running")
        try:
            await asyncio.wait_for(self._disconnected.wait(), timeout_s)
        except TimeoutError:
            raise AssertionError(
                f"no client disconnect seen within {timeout_s} s (scenario {self.scenario.name!r})"
            ) from None
        return self.disconnects

    def open_gate(self, name: str) -> None:
        """Let the answers of the steps with ``gate`` ``name`` go (now and from now on). Call it
        on the server's event loop (:class:`ScriptedServerThread` has a thread-safe one)."""
        self._gates.setdefault(name, asyncio.Event()).set()

    # ---- connection handling ----

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                try:
                    request = await read_request(reader)
                except BadRequestError as exc:
                    await self._send_json(
                        writer, 400, error_body("invalid_request_error", str(exc))
                    )
                    break
                if request is None:
                    break
                keep_open = await self._dispatch(request, reader, writer)
                if not (keep_open and request.keep_alive):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # The client went away; nothing left to answer.
        except asyncio.CancelledError:
            # stop() cancels open connections; ending quietly keeps asyncio (3.11) from
            # logging the cancelled handler as an error. Any other cancellation propagates.
            if not self._stopping:
                raise
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    def _record(
        self,
        request: Request,
        body: Any,
        *,
        step: int | None,
        outcome: str,
        failure: str | None = None,
    ) -> None:
        exchange = Exchange(
            method=request.method,
            path=request.path,
            headers=dict(request.headers),
            body=body,
            step=step,
            outcome=outcome,
            background=request.headers.get(BACKGROUND_HEADER),
        )
        with self._state.lock:
            self._state.exchanges.append(exchange)
            if failure is not None:
                self._state.failures.append(failure)

    def _next_request_id(self) -> str:
        self._request_seq += 1
        return f"req_scripted_{self._request_seq:04d}"

    async def _dispatch(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; returns whether the connection may carry another."""
        try:
            body: Any = json.loads(request.body) if request.body else None
        except ValueError:
            body = None
        path = request.path
        if request.method == "HEAD" and path == "/":
            self._record(request, body, step=None, outcome="other")
            writer.write(head(200, [("Content-Length", "0")]))
            await writer.drain()
            return True
        if request.method == "POST" and path.endswith("/v1/messages/count_tokens"):
            self._record(request, body, step=None, outcome="count_tokens")
            await self._send_json(writer, 200, {"input_tokens": max(1, len(request.body) // 4)})
            return True
        if request.method == "POST" and path.endswith("/v1/messages"):
            return await self._messages(request, body, reader, writer)
        message = f"{request.method} {request.target}: no such endpoint on the scripted server"
        self._record(request, body, step=None, outcome="rejected", failure=message)
        await self._send_json(writer, 404, error_body("not_found_error", message))
        return True

    def _take_step(
        self, body: Mapping[str, Any], background: str | None = None
    ) -> tuple[int, Step | None, list[str]]:
        """The next step and what is wrong with ``body`` for it; consumes the step only when
        nothing is. A streaming request matching a route gets the route's answer (index -1)
        and consumes nothing; a ``background`` one takes the next step of that kind's script.
        No await inside, so concurrent requests get distinct steps."""
        with self._state.lock:
            if background is not None:
                return self._take_background(background, body)
            for route in self._state.scenario.routes:
                if body.get("stream") and not check_expect(route.expect, body):
                    return -1, Step(response=route.response, note=route.note), []
            if self._responder is not None:
                return -1, self._respond(body), []
            index = self._state.next_step
            steps = self._state.scenario.steps
            if index >= len(steps):
                return index, None, [f"request arrived after all {len(steps)} steps were consumed"]
            step = steps[index]
            problems = check_expect(step.expect, body)
            if not problems and step.streams_only and not body.get("stream"):
                problems = ["the step interrupts a stream but the request is not streaming"]
            if not problems:
                self._state.next_step += 1
            return index, step, problems

    def _take_background(
        self, kind: str, body: Mapping[str, Any]
    ) -> tuple[int, Step | None, list[str]]:
        """The next step of the background script ``kind`` (the caller holds the lock); with
        no script for ``kind``, the responder answers when there is one."""
        if kind not in self._state.scenario.background and self._responder is not None:
            return -1, self._respond(body), []
        script = self._state.scenario.background.get(kind, ())
        index = self._state.next_background.get(kind, 0)
        if index >= len(script):
            where = f"all {len(script)} steps were consumed" if script else "it has no script"
            return index, None, [f"background {kind!r} request arrived but {where}"]
        step = script[index]
        problems = check_expect(step.expect, body)
        if not problems:
            self._state.next_background[kind] = index + 1
        return index, step, problems

    def background_unconsumed(self, kind: str) -> int:
        """How many steps of the background script ``kind`` no request has consumed yet."""
        with self._state.lock:
            script = self._state.scenario.background.get(kind, ())
            return len(script) - self._state.next_background.get(kind, 0)

    def _respond(self, body: Mapping[str, Any]) -> Step:
        assert self._responder is not None
        try:
            return Step(response=self._responder(body))
        except Exception as exc:  # the responder's bug must reach the client, not kill it
            message = f"the responder failed: {type(exc).__name__}: {exc}"
            self._state.failures.append(message)  # the caller holds the lock
            return Step(error=ScriptedError(status=500, type="api_error", message=message))

    async def _messages(
        self,
        request: Request,
        body: Any,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        name = self._state.scenario.name
        if not isinstance(body, dict):
            message = f"scenario {name!r}: POST /v1/messages body is not a JSON object"
            self._record(request, body, step=None, outcome="rejected", failure=message)
            await self._send_json(writer, 400, error_body("invalid_request_error", message))
            return True
        index, step, problems = self._take_step(body, request.headers.get(BACKGROUND_HEADER))
        if step is None or problems:
            where = f"step {index}" + (f" ({step.note})" if step and step.note else "")
            message = f"scenario {name!r} {where}: " + "; ".join(problems)
            self._record(
                request, body, step=index if step else None, outcome="rejected", failure=message
            )
            await self._send_json(writer, 400, error_body("invalid_request_error", message))
            return True
        if step.gate is not None:
            await self._gates.setdefault(step.gate, asyncio.Event()).wait()
        if step.delay_ms:
            await asyncio.sleep(step.delay_ms / 1000)
        request_id = self._next_request_id()
        # A route's or the responder's answer has no step of its own (index -1): the request's
        # number keeps its message and tool_use ids apart from every other answer's.
        label: int | str = index if index >= 0 else f"r{self._request_seq}"
        if step.error is not None:
            self._record(request, body, step=index, outcome="error")
            extra: list[tuple[str, str]] = []
            wait = step.error.retry_after_s
            if wait is not None:
                # The SDK ignores a zero wait (falls back to 0.5 s+ backoff): send >= 1 ms.
                extra.append(("retry-after", str(int(wait))))
                extra.append(("retry-after-ms", str(max(1, round(wait * 1000)))))
            await self._send_json(
                writer,
                step.error.status,
                error_body(error_type_for(step.error), step.error.message, request_id=request_id),
                extra_headers=extra,
                request_id=request_id,
            )
            return True
        assert step.response is not None
        model = str(body.get("model", ""))
        if body.get("stream"):
            self._record(request, body, step=index, outcome="response")
            return await self._stream(
                step,
                index=index,
                label=label,
                model=model,
                request_bytes=len(request.body),
                request_id=request_id,
                reader=reader,
                writer=writer,
            )
        try:
            message_json = render_message(
                step.response, step=label, request_model=model, request_bytes=len(request.body)
            )
        except ValueError as exc:
            message = f"scenario {name!r} step {index}: cannot answer without streaming: {exc}"
            self._record(request, body, step=index, outcome="rejected", failure=message)
            await self._send_json(writer, 500, error_body("api_error", message))
            return True
        self._record(request, body, step=index, outcome="response")
        await self._send_json(writer, 200, message_json, request_id=request_id)
        return True

    async def _stream(
        self,
        step: Step,
        *,
        index: int,
        label: int | str,
        model: str,
        request_bytes: int,
        request_id: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        assert step.response is not None
        events = render_events(
            step.response,
            step=label,
            request_model=model,
            request_bytes=request_bytes,
            chunk_chars=step.chunk_chars,
        )
        limit = step.interrupt_after
        try:
            writer.write(
                head(
                    200,
                    [
                        ("Content-Type", "text/event-stream; charset=utf-8"),
                        ("Cache-Control", "no-cache"),
                        ("Transfer-Encoding", "chunked"),
                        ("request-id", request_id),
                    ],
                )
            )
            for sent, (name, data) in enumerate(events):
                if limit is not None and sent >= limit:
                    break
                writer.write(sse_chunk(name, data))
                await writer.drain()
                if step.chunk_delay_ms and name == "content_block_delta":
                    await asyncio.sleep(step.chunk_delay_ms / 1000)
            else:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                return True
            if step.stall_after_events is not None:
                # Hang until the client hangs up, as a stalled upstream would.
                while await reader.read(65536):
                    pass
                self._note_disconnect(index)
                return False
            if step.drop_after_events is not None:
                return False  # closing now leaves the chunked body incomplete
            if step.sse_error is not None:
                error = error_body(
                    step.sse_error.type, step.sse_error.message, request_id=request_id
                )
                writer.write(sse_chunk("error", error))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            self._note_disconnect(index)
            return False

    def _note_disconnect(self, index: int) -> None:
        with self._state.lock:
            self._state.disconnects.append(index)
        if self._disconnected is not None:
            self._disconnected.set()

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Mapping[str, Any],
        *,
        extra_headers: Sequence[tuple[str, str]] = (),
        request_id: str | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        headers.append(("request-id", request_id or self._next_request_id()))
        headers += extra_headers
        writer.write(head(status, headers) + data)
        await writer.drain()


def summary_problems(
    failures: Sequence[str], unconsumed: Sequence[int], scenario: Scenario
) -> list[str]:
    """Lines describing what went wrong: each failure, then the unconsumed steps (with notes)."""
    problems = [f"failure: {f}" for f in failures]
    for i in unconsumed:
        note = scenario.steps[i].note
        problems.append(f"step {i} was not consumed" + (f" ({note})" if note else ""))
    return problems


def scripted_env(
    base_url: str, base: Mapping[str, str] | None = None, *, model: str | None = None
) -> dict[str, str]:
    """An environment for a subprocess that should talk to the scripted server at ``base_url``:
    a copy of ``base`` (default ``os.environ``) without any ``ANTHROPIC_*`` variable (so a
    developer's real credentials or profile never reach a test), plus ``ANTHROPIC_BASE_URL``,
    ``ANTHROPIC_API_KEY`` (:data:`SCRIPTED_API_KEY`) and, when given, ``ANTHROPIC_MODEL``."""
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not k.startswith("ANTHROPIC_")
    }
    env["ANTHROPIC_BASE_URL"] = base_url
    env["ANTHROPIC_API_KEY"] = SCRIPTED_API_KEY
    if model is not None:
        env["ANTHROPIC_MODEL"] = model
    return env

"""Requests a server sends mid-call, written the usual way with the SDK (``ctx.elicit``,
``ctx.session.list_roots``, ``ctx.session.create_message``, ``ctx.info``), over stdio and
streamable HTTP: they reach the client because it connects with the ``initialize`` handshake
(on the 2026 protocol a server has no back-channel for them). A server that speaks only the
2026 protocol is still connected."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_mcp.conftest import stdio_entry
from tests.e2e_mcp.test_pool import by_name, call

Asked = list[tuple[str, str, dict[str, Any]]]


def answering(asked: Asked, content: dict[str, Any]) -> Any:
    async def ask(server: str, message: str, schema: dict[str, Any]) -> tuple[str, Any]:
        asked.append((server, message, schema))
        return "accept", content

    return ask


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "stdio":
        return stdio_entry()
    url: str = request.getfixturevalue("http_server")
    return {"type": "http", "url": url}


async def test_ctx_elicit_asks_the_user(make_pool: Any, server: dict[str, Any]) -> None:
    asked: Asked = []
    pool = make_pool({"fx": server}, ask=answering(asked, {"colour": "teal", "size": 2}))
    tools = await pool.tools()
    out = await call(by_name(tools, "mcp__fx__pick"), {})
    assert (out.text, out.is_error) == ("picked: teal", False)
    assert [(s, m) for s, m, _ in asked] == [("fx", "Which colour?")]
    assert set(asked[0][2]["properties"]) == {"colour", "size"}
    # The Resolve(...) style keeps working on the same connection.
    out = await call(by_name(tools, "mcp__fx__confirm"), {})
    assert asked[-1][1] == "Delete the build folder?"
    assert out.is_error  # the answer above does not match its schema: the server says so


async def test_ctx_elicit_is_declined_when_nobody_can_answer(
    make_pool: Any, server: dict[str, Any]
) -> None:
    pool = make_pool({"fx": server})  # no ask: the headless door
    out = await call(by_name(await pool.tools(), "mcp__fx__pick"), {})
    assert (out.text, out.is_error) == ("answer: decline", False)


async def test_roots_sampling_and_logging_from_a_tool(
    make_pool: Any, server: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pool = make_pool({"fx": server})
    tools = await pool.tools()
    roots = await call(by_name(tools, "mcp__fx__ctx_roots"), {})
    assert roots.text == f"roots: {tmp_path.as_uri()}"
    # We offer no sampling: the server's request is refused, the call itself goes on.
    sampled = await call(by_name(tools, "mcp__fx__ctx_sample"), {})
    assert sampled.text.startswith("sampling refused:") and "back-channel" not in sampled.text
    with caplog.at_level(logging.INFO, logger="lsp_agent.mcp.connection"):
        logged = await call(by_name(tools, "mcp__fx__ctx_log"), {})
    assert logged.text == "logged"
    assert any("fixture log line" in r.getMessage() for r in caplog.records)


async def test_a_server_without_the_handshake_is_connected_with_the_2026_protocol(
    make_pool: Any,
) -> None:
    pool = make_pool({"fx": stdio_entry("--modern-only")})
    tools = await pool.tools()
    out = await call(by_name(tools, "mcp__fx__echo"), {"text": "modern"})
    assert (out.text, out.is_error) == ("echo: modern", False)
    status = next(s for s in pool.statuses() if s.name == "fx")
    assert status.state == "ready"

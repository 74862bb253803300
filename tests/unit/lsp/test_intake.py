"""Envelope checks: JSON-RPC 2.0 codes for every kind of bad body."""

from __future__ import annotations

import pytest

from lsp_agent.lsp.intake import Envelope, Fault, check_body


@pytest.mark.parametrize(
    ("body", "code", "msg_id"),
    [
        (b"{", -32700, None),
        (b"NaN", -32700, None),
        (b"\xef\xbb\xbf{}", -32700, None),
        (b'{"jsonrpc":"2.0","id":3,"method":"m","params":{"x":"\xff"}}', -32700, 3),
        (
            b'{"jsonrpc":"2.0","id":4,"method":"m","params":' + b"[" * 5000 + b"]" * 5000 + b"}",
            -32700,
            4,
        ),
        (b"[]", -32600, None),
        (b"{}", -32600, None),
        (b'{"jsonrpc":2.0,"id":5,"method":"m"}', -32600, 5),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":6,"method":5}', -32600, 6),
        (b'{"jsonrpc":"2.0","id":7,"method":"m","result":1}', -32600, 7),
        (b'{"jsonrpc":"2.0","id":8,"method":"m","params":"s"}', -32602, 8),
    ],
)
def test_faults(body: bytes, code: int, msg_id: object) -> None:
    checked = check_body(body)
    assert isinstance(checked, Fault)
    assert (checked.code, checked.msg_id, checked.answer) == (code, msg_id, True)


def test_messages() -> None:
    request = check_body(b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"jsonrpc":"2.0"}}')
    assert isinstance(request, Envelope) and request.kind == "request"
    assert request.raw["params"] == {"jsonrpc": "2.0"}
    note = check_body(b'{"jsonrpc":"2.0","method":"m","params":null}')
    assert isinstance(note, Envelope) and note.kind == "notification"
    answer = check_body(b'{"jsonrpc":"2.0","id":1,"result":null}')
    assert isinstance(answer, Envelope) and answer.kind == "response"
    bad_answer = check_body(b'{"jsonrpc":"2.0","id":1}')
    assert isinstance(bad_answer, Fault) and not bad_answer.answer

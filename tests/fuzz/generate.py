"""Generated malformed JSON-RPC messages, each with the answer it must get (seeded, pure).

Families (the research that found the JSON-RPC faults used the same ones):

* ``parse``: bodies that are not UTF-8 JSON → ``-32700``;
* ``envelope``: JSON that is not a valid request → ``-32600``;
* ``unknown``: unknown methods → ``-32601`` (and silence as notifications);
* ``notification-with-id``: notification methods sent as requests → ``-32600``;
* ``mutant``: a valid request or notification of every method the server serves, with one
  JSON node replaced by a hostile value or deleted → a result or ``-32602`` (a request must be
  answered; ``-32603`` is a bug);
* ``nested``: ``{"jsonrpc": ...}`` objects and deep nesting inside params → an answer.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

HOSTILE: tuple[Any, ...] = (
    None,
    0,
    -1,
    2**31,
    2**63,
    10**30,
    1.5,
    "",
    "x",
    "A" * 5000,
    "\u0000\ud7ff\uffff",
    True,
    [],
    {},
    [None],
    {"k": "v"},
    "file:///etc/passwd",
    "../../../../etc/passwd",
    {"jsonrpc": "2.0"},
    "A" * 20000,
)
"""Values put in place of a node (the 20 KB string is where F21 froze the loop)."""

ANY_ANSWER = frozenset({-32602, -32600, -32601, -32001, -32000, -32800, -32002})
"""Codes a mutant request may legitimately get besides a result."""


@dataclass(frozen=True, slots=True)
class Case:
    """One generated message: ``body`` to frame and send; ``msg_id`` when an answer is due;
    ``codes`` the error codes accepted (``None`` in it: a result is fine too)."""

    family: str
    body: bytes
    msg_id: str | None
    codes: frozenset[int | None]


def templates(root_uri: str) -> list[tuple[str, dict[str, Any], bool]]:
    """``(method, valid params, is_request)`` for methods that answer without a model turn."""
    doc = f"{root_uri}/fuzz.py"
    position = {"line": 0, "character": 0}
    rng = {"start": position, "end": position}
    text_doc = {"uri": doc}
    return [
        ("lspAgent/session/new", {"mode": "default"}, True),
        ("lspAgent/session/list", {}, True),
        ("lspAgent/session/setMode", {"sessionId": "nope", "modeId": "plan"}, True),
        ("lspAgent/session/close", {"sessionId": "nope"}, True),
        (
            "lspAgent/session/prompt",
            {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]},
            True,
        ),
        ("lspAgent/session/cancel", {"sessionId": "nope"}, False),
        ("lspAgent/diagnostics/didChange", {"uri": doc, "version": 1, "diagnostics": []}, False),
        ("lspAgent/mcp/list", {}, True),
        (
            "textDocument/codeAction",
            {"textDocument": text_doc, "range": rng, "context": {"diagnostics": []}},
            True,
        ),
        ("codeAction/resolve", {"title": "x", "data": {"action": "suggestion", "uri": doc}}, True),
        ("textDocument/hover", {"textDocument": text_doc, "position": position}, True),
        ("textDocument/completion", {"textDocument": text_doc, "position": position}, True),
        ("textDocument/documentLink", {"textDocument": text_doc}, True),
        ("textDocument/codeLens", {"textDocument": text_doc}, True),
        (
            "workspace/executeCommand",
            {"command": "lspAgent.applySuggestion", "arguments": [{"uri": doc, "id": "s1"}]},
            True,
        ),
        (
            "workspace/executeCommand",
            {"command": "lspAgent.memory.approveImports", "arguments": []},
            True,
        ),
        (
            "textDocument/didOpen",
            {"textDocument": {"uri": doc, "languageId": "python", "version": 1, "text": "x = 1\n"}},
            False,
        ),
        (
            "textDocument/didChange",
            {"textDocument": {"uri": doc, "version": 2}, "contentChanges": [{"text": "x = 2\n"}]},
            False,
        ),
        ("textDocument/didSave", {"textDocument": text_doc}, False),
        ("textDocument/didClose", {"textDocument": text_doc}, False),
        ("workspace/didChangeConfiguration", {"settings": {"lspAgent": {}}}, False),
        ("workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": []}}, False),
        ("$/cancelRequest", {"id": "unknown"}, False),
        ("$/setTrace", {"value": "off"}, False),
    ]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _mutate(params: Any, path: tuple[Any, ...], new: Any, *, delete: bool) -> Any:
    if not path:
        return new
    copied = copy.deepcopy(params)
    parent = copied
    for step in path[:-1]:
        parent = parent[step]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return copied


def _body(message: Any) -> bytes:
    return json.dumps(message).encode()


def cases(*, root_uri: str, count: int, seed: int) -> list[Case]:
    """``count`` cases in a seeded random order, every family represented."""
    rng = random.Random(seed)
    out: list[Case] = []
    n = 0

    def next_id() -> str:
        nonlocal n
        n += 1
        return f"fz{n}"

    parse_bodies = [
        b"",
        b"{",
        b'{"jsonrpc":"2.0","id":',
        b"{'a':1}",
        b'{"a":1,}',
        b"NaN",
        b"/* c */ {}",
        b"\xef\xbb\xbf{}",
        b"{}{}",
        b"\x00\x01\x02",
        b"[1, 2",
        b"true false",
    ]
    for _ in range(count // 10):
        choice = rng.randrange(4)
        if choice == 0:
            body = rng.choice(parse_bodies)
        elif choice == 1:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
            try:
                json.loads(body)
                continue
            except ValueError:
                pass
        elif choice == 2:
            # No id: a flipped byte may leave the id readable (then the answer carries it).
            good = _body({"jsonrpc": "2.0", "method": "lspAgent/session/cancel", "params": {}})
            i = rng.randrange(len(good))
            body = good[:i] + bytes([rng.randrange(256)]) + good[i + 1 :]
            try:
                json.loads(body)
                continue
            except ValueError:
                pass
        else:
            msg_id = next_id()
            body = (
                b'{"jsonrpc":"2.0","id":"'
                + msg_id.encode()
                + b'","method":"lspAgent/session/new","params":{"cwd":"\xff\xfe"}}'
            )
            out.append(Case("parse-utf8", body, msg_id, frozenset({-32700})))
            continue
        out.append(Case("parse", body, None, frozenset({-32700})))

    envelopes: list[Any] = [
        [],
        1,
        "s",
        True,
        None,
        {},
        {"jsonrpc": "1.0", "id": 1, "method": "lspAgent/session/list"},
        {"id": 1, "method": "lspAgent/session/list"},
        {"jsonrpc": 2.0, "id": 1, "method": "x"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": None},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "lspAgent/session/list"},
        {"jsonrpc": "2.0", "id": [1], "method": "lspAgent/session/list"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "lspAgent/session/list"},
        {"jsonrpc": "2.0", "id": True, "method": "lspAgent/session/list"},
        {"jsonrpc": "2.0", "id": None, "method": "lspAgent/session/list"},
        [{"jsonrpc": "2.0", "id": 1, "method": "lspAgent/session/list"}],
    ]
    for _ in range(count // 10):
        value = copy.deepcopy(rng.choice(envelopes))
        envelope_id = None
        if isinstance(value, dict) and isinstance(value.get("id"), int) and value["id"] is not True:
            envelope_id = value["id"] = next_id()
        out.append(Case("envelope", _body(value), envelope_id, frozenset({-32600})))
        msg_id = next_id()
        with_result = {
            "jsonrpc": "2.0",
            "id": msg_id,
            "method": "lspAgent/session/list",
            "result": 1,
        }
        out.append(Case("envelope", _body(with_result), msg_id, frozenset({-32600})))

    for _ in range(count // 10):
        name = rng.choice(
            [
                "",
                " ",
                "$/unknown",
                "rpc.discover",
                "lspAgent/nope",
                "textdocument/hover",
                "x" * rng.randrange(1, 5000),
                "\u202e\u0000evil",
            ]
        )
        msg_id = next_id()
        out.append(
            Case(
                "unknown",
                _body({"jsonrpc": "2.0", "id": msg_id, "method": name}),
                msg_id,
                frozenset({-32601}),
            )
        )
        out.append(Case("unknown", _body({"jsonrpc": "2.0", "method": name}), None, frozenset()))

    table = templates(root_uri)
    for method, params, is_request in table:
        if not is_request:
            msg_id = next_id()
            message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
            out.append(Case("notification-with-id", _body(message), msg_id, frozenset({-32600})))

    for _ in range(count // 20):
        method, params, is_request = rng.choice(table)
        depth = rng.choice([10, 100, 1000, 10000])
        msg_id = next_id() if is_request else None
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if msg_id:
            message["id"] = msg_id
        message["params"] = {**params, "_meta": {"jsonrpc": "2.0", "deep": "@DEEP@"}}
        deep = b"[" * depth + b"]" * depth
        body = _body(message).replace(b'"@DEEP@"', deep)
        out.append(Case("nested", body, msg_id, ANY_ANSWER | {None, -32700}))

    while len(out) < count:
        method, params, is_request = rng.choice(table)
        paths = list(_paths(params))
        path = rng.choice(paths)
        delete = bool(path) and rng.random() < 0.2
        mutated = _mutate(params, path, rng.choice(HOSTILE), delete=delete)
        msg_id = next_id() if is_request else None
        message = {"jsonrpc": "2.0", "method": method, "params": mutated}
        if msg_id:
            message["id"] = msg_id
        out.append(Case("mutant", _body(message), msg_id, ANY_ANSWER | {None}))
    rng.shuffle(out)
    return out

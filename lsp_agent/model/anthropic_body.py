"""The request body of a Messages API call, encoded once as JSON bytes.

The SDK's ``messages.create`` copies the whole request (every message, every block) before it
encodes it, and encodes it again on each request; both walks grow with the conversation. The
history only grows between the requests of a session and the converted messages are shared
between them (:func:`~lsp_agent.model.anthropic_request.convert_messages`), so each message's
JSON text is kept and a request encodes only what is new: the messages it adds and the two
that carry a moving cache breakpoint. The tools and the system prompt come from the same tuples
for a whole session, so their JSON is kept too while the request names the same items. The
bytes are sent with the SDK's documented lower-level call (``client.post(..., content=...)``),
which keeps the SDK's headers, authentication and error mapping.

The encoding is the SDK's own (``ensure_ascii=False``, no spaces, ``NaN`` refused), so the
bytes are what the SDK would have sent; keys come in a different order, which JSON ignores.
Pure data: nothing here imports the SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["BodyEncoder", "encode_json"]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_json(value: Any) -> str:
    """``value`` as compact JSON text, as the SDK encodes request bodies. Raises ``ValueError``
    for NaN or infinite floats and ``TypeError`` for values JSON cannot hold."""
    return _ENCODER.encode(value)


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates (which UTF-8 cannot hold) replaced by U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def _same(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are the same value: the same object, or tuples whose items are
    the same objects or equal. A request model's validation copies its tuples (of tool specs,
    of system parts) but keeps their items, so an item is usually the very object seen
    before and the comparison stops at identity."""
    if a is b:
        return True
    if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)):
        return False
    return all(x is y or x == y for x, y in zip(a, b, strict=True))


class BodyEncoder:
    """Encodes request parameters as a JSON body, reusing the bytes of each message seen in the
    previous request (same object: the converted messages are shared and never modified), and
    of the tools and system prompt while they come from the same objects."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[Mapping[str, Any], bytes]] = {}
        """UTF-8 JSON by ``id`` of the message dict; the dict is held so its id stays unique."""
        self._fixed: dict[str, tuple[object, bytes]] = {}
        """UTF-8 JSON of a parameter (``tools``, ``system``) by name, with the immutable value
        it was made from."""

    def encode(
        self,
        params: Mapping[str, Any],
        *,
        keep: bool = True,
        sources: Mapping[str, object] | None = None,
    ) -> bytes:
        """``params`` (the keyword arguments of ``messages.create`` without ``extra_headers``,
        plus ``stream``) as UTF-8 JSON bytes. ``keep``: remember this request's messages (and
        fixed parts) for the next call (a background request passes ``False`` so as not to
        replace those of the user's turn). ``sources``: for a parameter named here, the
        immutable value it was made from (the request's tuple of tool specs, of system parts);
        while a later call names the same value (the same items, or equal ones), the
        parameter's JSON is reused instead of encoded again. Lone surrogates (which the
        converter already replaces in messages) become U+FFFD. Raises
        ``ValueError``/``TypeError`` like :func:`encode_json`."""
        done: dict[int, tuple[Mapping[str, Any], bytes]] = {}
        parts: list[bytes] = []
        for message in params.get("messages", ()):
            entry = self._done.get(id(message))
            if entry is None or entry[0] is not message:
                entry = (message, _utf8(_ENCODER.encode(message)))
            done[id(message)] = entry
            parts.append(entry[1])
        if keep:
            self._done = done
        fixed: list[bytes] = []
        for name, source in (sources or {}).items():
            if name not in params or name == "messages":
                continue
            known = self._fixed.get(name)
            if known is None or not _same(known[0], source):
                known = (source, _utf8(_ENCODER.encode(params[name])))
                if keep:
                    self._fixed[name] = known
            fixed.append(_utf8(_ENCODER.encode(name)) + b":" + known[1])
        skip = {"messages", *(sources or {})}
        rest = _utf8(_ENCODER.encode({k: v for k, v in params.items() if k not in skip}))
        members = [b'"messages":[' + b",".join(parts) + b"]"] if "messages" in params else []
        members += fixed
        if rest != b"{}":
            members.append(rest[1:-1])
        # Bytes, not text: joining them copies memory; one non-ASCII character in a str would
        # widen the whole body before it is encoded again.
        return b"{" + b",".join(members) + b"}"

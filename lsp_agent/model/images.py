"""What the Messages API accepts as an image, and what one costs in tokens.

Rules from the API's vision documentation: the media types ``image/jpeg``, ``image/png``,
``image/gif`` and ``image/webp``; at most 5 MB per image (decoded bytes); an image whose long
edge exceeds 1568 px, or whose area exceeds about 1.15 megapixels, is scaled down before the
model sees it; an image costs about ``width * height / 750`` tokens (so at most about 1600).

The size of an image is read from its header (PNG, GIF, JPEG, WebP); nothing is decoded.
When the header cannot be read the estimate is the maximum.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

API_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""Image media types the Messages API accepts."""

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Largest image the API accepts (decoded bytes)."""

MAX_EDGE_PX = 1568
MAX_PIXELS = 1_150_000
PIXELS_PER_TOKEN = 750
MAX_IMAGE_TOKENS = math.ceil(MAX_PIXELS / PIXELS_PER_TOKEN)
"""The most one image costs (tokens), and the estimate when its size is unknown."""


def decoded_size(data: str) -> int:
    """Bytes that the base64 text ``data`` decodes to (from its length; padding counted)."""
    stripped = data.strip()
    return max(0, len(stripped) * 3 // 4 - stripped[-2:].count("="))


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", head[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def image_dimensions(head: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels from the first bytes of a PNG, GIF, JPEG or WebP file;
    ``None`` when the header is not one of these or is cut short."""
    try:
        if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
            width, height = struct.unpack(">II", head[16:24])
            return width, height
        if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
            width, height = struct.unpack("<HH", head[6:10])
            return width, height
        if head.startswith(b"\xff\xd8"):
            return _jpeg_size(head)
        if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
            return _webp_size(head)
    except struct.error:
        return None
    return None


def media_type_of(head: bytes) -> str | None:
    """The media type of an image from its first bytes (its signature): one of
    :data:`API_IMAGE_TYPES`, or ``None`` when ``head`` starts none of them."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def checked_image(data: str) -> tuple[str, str]:
    """``(media type, data)`` of the base64 image ``data`` as the API must get it: the type
    its bytes have (the API refuses an image whose bytes do not match the declared type, and
    a history holding one fails every later request), the data without line breaks. Raises
    ``ValueError`` naming the problem: the data is not base64, or not an image of a type the
    API takes. Decodes the whole image (callers keep it under :data:`MAX_IMAGE_BYTES`)."""
    compact = "".join(data.split())
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("its data is not base64") from None
    media_type = media_type_of(raw[:16])
    if media_type is None:
        raise ValueError("its data is not a PNG, JPEG, GIF or WebP image")
    return media_type, compact


def image_tokens(data: str) -> int:
    """Estimated tokens of the base64 image ``data`` as the model sees it: its pixels after
    the API's scaling, divided by 750 (:data:`MAX_IMAGE_TOKENS` when the size is unknown)."""
    # 64 KB of base64 covers the headers of JPEGs with large metadata segments in front.
    try:
        head = base64.b64decode(data[:65536], validate=False)
    except (binascii.Error, ValueError):
        return MAX_IMAGE_TOKENS
    size = image_dimensions(head)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return MAX_IMAGE_TOKENS
    width, height = size
    scale = min(1.0, MAX_EDGE_PX / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    return max(1, math.ceil(width * scale * height * scale / PIXELS_PER_TOKEN))

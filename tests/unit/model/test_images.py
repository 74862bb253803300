"""Image sizes from headers, token estimates, and image blocks inside tool results."""

from __future__ import annotations

import base64
import struct

from lsp_agent.context.clearing import clear_results
from lsp_agent.context.tokens import estimate_block
from lsp_agent.model.anthropic_request import convert_messages
from lsp_agent.model.images import (
    MAX_IMAGE_TOKENS,
    decoded_size,
    image_dimensions,
    image_tokens,
)
from lsp_agent.model.types import ImageBlock, Message, ToolResultBlock, ToolUseBlock


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 32


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_dimensions_come_from_png_gif_jpeg_and_webp_headers() -> None:
    assert image_dimensions(png(640, 480)) == (640, 480)
    assert image_dimensions(b"GIF89a" + struct.pack("<HH", 32, 16) + b"\0" * 8) == (32, 16)
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9
    sof0 = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 300, 200) + b"\0" * 10
    assert image_dimensions(b"\xff\xd8" + app0 + sof0) == (200, 300)
    vp8x = (
        b"RIFF\0\0\0\0WEBPVP8X"
        + b"\0" * 8
        + (99).to_bytes(3, "little")
        + (49).to_bytes(3, "little")
    )
    assert image_dimensions(vp8x) == (100, 50)
    assert image_dimensions(b"not an image") is None
    assert image_dimensions(b"\x89PNG\r\n\x1a\n") is None  # cut short


def test_tokens_follow_the_pixels_and_the_apis_scaling() -> None:
    assert image_tokens(b64(png(750, 100))) == 100
    # a large screenshot is scaled to about 1.15 megapixels: it costs the most, not more
    assert image_tokens(b64(png(4000, 3000))) == MAX_IMAGE_TOKENS
    assert image_tokens("not base64 of an image") == MAX_IMAGE_TOKENS
    assert decoded_size(b64(b"12345")) == 5


def test_a_tool_result_with_images_is_sent_as_text_then_image_blocks() -> None:
    data = b64(png(10, 10))
    use = ToolUseBlock(id="t1", name="mcp__s__shot", input={})
    result = ToolResultBlock(
        tool_use_id="t1",
        content="[image (png, 59 bytes)]",
        images=(ImageBlock(media_type="image/png", data=data),),
    )
    messages = [Message(role="assistant", content=(use,)), Message(role="user", content=(result,))]
    converted, _ = convert_messages(messages, {})
    (block,) = converted[1]["content"]
    assert block["content"] == [
        {"type": "text", "text": "[image (png, 59 bytes)]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
    ]
    plain = ToolResultBlock(tool_use_id="t1", content="just text")
    assert estimate_block(result) > estimate_block(plain)
    cleared = clear_results(messages, ["t1"])
    (stub,) = cleared[1].content
    assert isinstance(stub, ToolResultBlock) and stub.images == ()
    again, _ = convert_messages(list(cleared), {})
    assert isinstance(again[1]["content"][0]["content"], str)


def test_an_image_is_checked_against_its_bytes_not_its_declared_type() -> None:
    from lsp_agent.model.images import checked_image

    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\0" * 20).decode()
    assert checked_image(jpeg) == ("image/jpeg", jpeg)
    # Line breaks (MIME-style base64) are dropped; the bytes are the same.
    wrapped = jpeg[:8] + "\n" + jpeg[8:] + "\n"
    assert checked_image(wrapped) == ("image/jpeg", jpeg)
    for data, problem in (
        ("not base64 at all!", "not base64"),
        ("iVBORw0K=GgoAAAA", "not base64"),
        (base64.b64encode(b"<svg></svg>").decode(), "not a PNG, JPEG, GIF or WebP image"),
        ("", "not a PNG, JPEG, GIF or WebP image"),
    ):
        try:
            checked_image(data)
        except ValueError as exc:
            assert problem in str(exc)
        else:
            raise AssertionError(f"{data!r} was accepted")

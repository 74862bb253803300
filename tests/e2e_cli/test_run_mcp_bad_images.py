"""An MCP server's images whose data does not match their media type never reach the model as
image blocks the Messages API would refuse (it checks the bytes against the declared type and
answers 400, and the history would carry the block into every later request of the session):
an image of a type the API takes is sent under its real type, data that is not base64 or not
an image is described instead."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_cli.conftest import run_cli
from tests.e2e_cli.test_run_mcp import config
from tests.e2e_mcp.conftest import stdio_entry


def test_mislabelled_and_broken_images_are_not_sent_as_declared(
    project: Path, tmp_path: Path
) -> None:
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\0" * 60).decode()
    jpeg_block = json.dumps(
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": jpeg}}
    )
    run = scenario(
        reply(tool_use("mcp__fx__bad_images", {}, id="toolu_images")),
        reply(
            "Seen.",
            expect=expecting(
                request_contains=jpeg_block,
                request_lacks='"media_type": "image/png"',
                tool_results=[
                    ToolResultExpect(
                        is_error=False,
                        contains="three images:\n[image (jpeg, 64 bytes)]\n"
                        "[image (png, 13 bytes): its data is not base64, not shown]\n"
                        "[image (gif, 80 bytes): its data is not a PNG, JPEG, GIF or WebP "
                        "image, not shown]",
                    )
                ],
            ),
        ),
        name="mcp-bad-images",
    )
    result = run_cli(
        ["run", "-p", "show", "--mcp-config", str(cfg), "--allowedTools", "mcp__fx"],
        scenario=run,
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()
    assert "image/gif" not in json.dumps(result.server.requests)

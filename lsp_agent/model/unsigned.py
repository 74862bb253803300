"""The SDK's Bedrock and Vertex AI clients, and their variants that send requests without the
cloud's credentials (Claude Code's ``CLAUDE_CODE_SKIP_BEDROCK_AUTH`` and
``CLAUDE_CODE_SKIP_VERTEX_AUTH``: an LLM gateway in front of the cloud authenticates instead).

The SDK signs a request (AWS SigV4, a Google access token) in its ``_prepare_request`` hook; the
unsigned variants override that hook and send the request as built. The SDK is imported when a
class is asked for, not with this module.
"""

from __future__ import annotations

from typing import Any


def bedrock_class(*, skip_auth: bool) -> Any:
    """``anthropic.AsyncAnthropicBedrock``, or its unsigned variant when ``skip_auth``."""
    import anthropic

    if not skip_auth:
        return anthropic.AsyncAnthropicBedrock

    class UnsignedBedrock(anthropic.AsyncAnthropicBedrock):
        async def _prepare_request(self, request: Any) -> None:
            return None

    return UnsignedBedrock


def vertex_class(*, skip_auth: bool) -> Any:
    """``anthropic.AsyncAnthropicVertex``, or its unsigned variant when ``skip_auth``."""
    import anthropic

    if not skip_auth:
        return anthropic.AsyncAnthropicVertex

    class UnsignedVertex(anthropic.AsyncAnthropicVertex):
        async def _prepare_request(self, request: Any) -> None:
            return None

    return UnsignedVertex

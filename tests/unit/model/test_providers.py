"""Amazon Bedrock and Google Vertex AI through the SDK's own clients, selected by Claude Code's
variables, against local stand-ins of each endpoint shape (never the network); aliases and
their overrides; the fallback model; proxies and certificate files from the environment."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from lsp_agent.model.anthropic import AnthropicModel, resolve_model_name
from lsp_agent.model.base import ModelError
from lsp_agent.model.fallback import FallbackModel
from lsp_agent.model.limits import entry_for, limits_for
from lsp_agent.model.providers import (
    ProviderSettings,
    inference_profile_prefix,
    provider_from_env,
    wire_model,
)
from lsp_agent.model.types import ResponseDone, TextDelta
from lsp_agent.testing.scenario import ScriptedResponse, ScriptedText, error, reply, scenario

from .cloud_standin import FAKE_ACCESS_TOKEN, CloudStandIn
from .conftest import StartServer, collect, simple_request

ANSWER = ScriptedResponse(content=(ScriptedText(text="Hello from the cloud stand-in."),))

# Everything that could point the SDK's credential chains at a real account or file.
_CLOUD_VARS = (
    "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION",
    "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CONFIG", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY",
    "ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_SKIP_BEDROCK_AUTH", "CLAUDE_CODE_SKIP_VERTEX_AUTH", "CLOUD_ML_REGION",
    "VERTEX_REGION_CLAUDE_HAIKU_4_5", "VERTEX_REGION_CLAUDE_4_5_SONNET",
)  # fmt: skip


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _CLOUD_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # never the metadata server


def _text(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# ---- selection and names ------------------------------------------------------------------------


def test_provider_selection_follows_claude_codes_variables() -> None:
    assert provider_from_env({}).provider == "anthropic"
    bedrock = provider_from_env({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-3"})
    assert (bedrock.provider, bedrock.region) == ("bedrock", "eu-west-3")
    vertex = provider_from_env(
        {
            "CLAUDE_CODE_USE_VERTEX": "true",
            "CLOUD_ML_REGION": "global",
            "ANTHROPIC_VERTEX_PROJECT_ID": "proj",
        }
    )
    assert (vertex.provider, vertex.region, vertex.project_id) == ("vertex", "global", "proj")
    assert provider_from_env({"CLAUDE_CODE_USE_BEDROCK": "0"}).provider == "anthropic"
    both = provider_from_env({"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1"})
    assert both.problem is not None and "choose one" in both.problem


def test_aliases_and_provider_ids() -> None:
    first, bedrock_us = ProviderSettings(), ProviderSettings(provider="bedrock", region="us-east-1")
    vertex = ProviderSettings(provider="vertex", region="global")
    assert wire_model("opus", first, {}) == "claude-opus-4-8"
    assert wire_model("sonnet", first, {}) == "claude-sonnet-4-6"
    assert wire_model("haiku", first, {}) == "claude-haiku-4-5"
    assert wire_model("sonnet", bedrock_us, {}) == "us.anthropic.claude-sonnet-4-6"
    # Opus 4.8 and 4.7 have no Bedrock id: the alias takes the newest Opus Bedrock has.
    assert wire_model("opus", bedrock_us, {}) == "us.anthropic.claude-opus-4-6-v1"
    assert wire_model("haiku", vertex, {}) == "claude-haiku-4-5@20251001"
    assert wire_model("claude-sonnet-4-5", vertex, {}) == "claude-sonnet-4-5@20250929"
    # The overrides pin any id, as in Claude Code.
    pinned = {"ANTHROPIC_DEFAULT_OPUS_MODEL": "us.anthropic.claude-opus-4-8"}
    assert wire_model("opus", bedrock_us, pinned) == "us.anthropic.claude-opus-4-8"
    assert wire_model("OPUS", first, {"ANTHROPIC_DEFAULT_OPUS_MODEL": "x"}) == "x"
    # Full ids and unknown names pass through unchanged.
    full = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert wire_model(full, bedrock_us, {}) == full
    assert wire_model("claude-sonnet-4-5-20250929", first, {}) == "claude-sonnet-4-5-20250929"
    assert inference_profile_prefix("eu-central-1") == "eu."
    assert inference_profile_prefix("ap-northeast-1") == "apac."
    assert inference_profile_prefix("us-gov-west-1") == "us-gov."
    assert inference_profile_prefix(None) == ""


def test_model_table_reads_provider_ids_and_aliases() -> None:
    assert limits_for("us.anthropic.claude-3-5-haiku-20241022-v1:0").max_output_tokens == 8_192
    assert limits_for("claude-3-5-haiku@20241022").thinking is False
    assert limits_for("claude-3-5-haiku").escalated_output == 8_192  # never above the model's
    assert limits_for("claude-opus-4-1").escalated_output == 32_000
    assert limits_for("claude-sonnet-4-5").escalated_output == 64_000
    assert entry_for("sonnet") is not None and entry_for("sonnet").name == "claude-sonnet-4-6"  # type: ignore[union-attr]
    assert limits_for("haiku[1m]").context_window == 1_000_000


def test_default_model_on_the_clouds_is_the_opus_alias() -> None:
    assert resolve_model_name(None, {}) == "claude-opus-4-8"
    assert resolve_model_name(None, {"CLAUDE_CODE_USE_BEDROCK": "1"}) == "opus"
    assert resolve_model_name(None, {"CLAUDE_CODE_USE_VERTEX": "1", "ANTHROPIC_MODEL": "m"}) == "m"


async def test_1m_suffix_is_a_beta_flag_not_part_of_the_id(serve: StartServer) -> None:
    server = await serve(scenario(reply("Wide.")))
    model = AnthropicModel(api_key="k", base_url=server.base_url, max_retries=0)
    try:
        events = await collect(model, simple_request(model="sonnet[1m]"))
    finally:
        await model.aclose()
    assert _text(events) == "Wide."
    [exchange] = [e for e in server.exchanges if e.path.endswith("/v1/messages")]
    assert exchange.body["model"] == "claude-sonnet-4-6"
    assert "context-1m-2025-08-07" in exchange.headers["anthropic-beta"]
    assert wire_model("claude-opus-4-8[1m]", ProviderSettings(), {}) == "claude-opus-4-8"


# ---- Bedrock ------------------------------------------------------------------------------------


async def test_bedrock_streams_aws_event_stream_signed_with_sigv4(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with CloudStandIn(ANSWER) as standin:
        monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "1")
        monkeypatch.setenv("AWS_REGION", "us-west-2")
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", standin.base_url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSTANDINEXAMPLE")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "standin-secret")
        model = AnthropicModel.from_env(os.environ, max_retries=0)
        try:
            events = await collect(model, simple_request(model="sonnet"))
        finally:
            await model.aclose()
    assert _text(events) == "Hello from the cloud stand-in."
    done = events[-1]
    assert isinstance(done, ResponseDone) and done.response.stop_reason == "end_turn"
    [seen] = standin.seen
    assert seen.path == "/model/us.anthropic.claude-sonnet-4-6/invoke-with-response-stream"
    auth = seen.headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDSTANDINEXAMPLE/")
    assert "/us-west-2/bedrock/aws4_request" in auth
    assert "model" not in seen.body and seen.body["anthropic_version"]
    assert seen.body["messages"][0]["role"] == "user"


async def test_bedrock_bearer_token_and_missing_region(monkeypatch: pytest.MonkeyPatch) -> None:
    async with CloudStandIn(ANSWER) as standin:
        monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "1")
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", standin.base_url)
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
        no_region = AnthropicModel.from_env(os.environ, max_retries=0)
        with pytest.raises(ModelError, match="region"):
            await collect(no_region, simple_request(model="haiku"))
        monkeypatch.setenv("AWS_REGION", "eu-west-1")
        model = AnthropicModel.from_env(os.environ, max_retries=0)
        try:
            events = await collect(model, simple_request(model="haiku"))
        finally:
            await model.aclose()
    assert _text(events) == "Hello from the cloud stand-in."
    [seen] = standin.seen
    assert seen.headers["authorization"] == "Bearer bedrock-api-key"
    assert (
        seen.path
        == "/model/eu.anthropic.claude-haiku-4-5-20251001-v1:0/invoke-with-response-stream"
    )


# ---- Vertex -------------------------------------------------------------------------------------


def _service_account(path: Path, token_uri: str) -> None:
    """A service-account key file with a fresh RSA key whose token endpoint is the stand-in."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    info = {
        "type": "service_account",
        "project_id": "standin-project",
        "private_key_id": "standin-key",
        "private_key": pem,
        "client_email": "agent@standin-project.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info))


async def test_vertex_url_shape_and_google_credentials(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async with CloudStandIn(ANSWER) as standin:
        key_file = tmp_path / "sa.json"
        _service_account(key_file, standin.base_url + "/token")
        monkeypatch.setenv("CLAUDE_CODE_USE_VERTEX", "1")
        monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", standin.base_url + "/v1")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
        model = AnthropicModel.from_env(os.environ, max_retries=0)
        try:
            events = await collect(model, simple_request(model="claude-sonnet-4-5"))
        finally:
            await model.aclose()
    assert _text(events) == "Hello from the cloud stand-in."
    token, call = standin.seen
    assert token.path == "/token" and "jwt-bearer" in token.body
    assert call.path == (
        "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    assert call.headers["authorization"] == f"Bearer {FAKE_ACCESS_TOKEN}"
    assert "model" not in call.body and call.body["stream"] is True


async def test_vertex_without_region_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_USE_VERTEX", "1")
    model = AnthropicModel.from_env(os.environ, max_retries=0)
    with pytest.raises(ModelError, match="CLOUD_ML_REGION"):
        await collect(model, simple_request())


async def test_bedrock_skip_auth_sends_unsigned_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    async with CloudStandIn(ANSWER) as standin:
        monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "1")
        monkeypatch.setenv("CLAUDE_CODE_SKIP_BEDROCK_AUTH", "1")
        monkeypatch.setenv("AWS_REGION", "us-east-1")
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", standin.base_url)
        model = AnthropicModel.from_env(os.environ, max_retries=0)  # no AWS credentials at all
        try:
            events = await collect(model, simple_request(model="sonnet"))
        finally:
            await model.aclose()
    assert _text(events) == "Hello from the cloud stand-in."
    [seen] = standin.seen
    assert seen.path == "/model/us.anthropic.claude-sonnet-4-6/invoke-with-response-stream"
    assert "authorization" not in seen.headers
    assert not any(name.startswith("x-amz-") for name in seen.headers)


async def test_vertex_skip_auth_and_per_model_regions(monkeypatch: pytest.MonkeyPatch) -> None:
    async with CloudStandIn(ANSWER) as standin:
        monkeypatch.setenv("CLAUDE_CODE_USE_VERTEX", "1")
        monkeypatch.setenv("CLAUDE_CODE_SKIP_VERTEX_AUTH", "1")
        monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
        monkeypatch.setenv("VERTEX_REGION_CLAUDE_HAIKU_4_5", "europe-west1")
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", standin.base_url + "/v1")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json")
        model = AnthropicModel.from_env(os.environ, max_retries=0)
        try:
            await collect(model, simple_request(model="haiku"))
            await collect(model, simple_request(model="claude-sonnet-4-5"))
        finally:
            await model.aclose()
    haiku, sonnet = standin.seen  # no token request: credentials were never looked up
    assert "/locations/europe-west1/" in haiku.path
    assert haiku.path.endswith("/claude-haiku-4-5@20251001:streamRawPredict")
    assert "/locations/us-east5/" in sonnet.path
    assert "authorization" not in haiku.headers and "authorization" not in sonnet.headers


def test_vertex_region_variables_cover_the_vertex_models() -> None:
    from lsp_agent.model.limits import MODELS
    from lsp_agent.model.providers import VERTEX_REGION_VARIABLES

    with_vertex = {e.name for e in MODELS if e.vertex_id is not None}
    assert with_vertex <= set(VERTEX_REGION_VARIABLES)
    settings = provider_from_env(
        {"CLAUDE_CODE_USE_VERTEX": "1", "VERTEX_REGION_CLAUDE_4_5_SONNET": "asia-east1"}
    )
    assert settings.region_for("claude-sonnet-4-5@20250929") == "asia-east1"
    assert settings.region_for("opus") is None


# ---- fallback model -----------------------------------------------------------------------------


async def test_fallback_model_after_repeated_overload(serve: StartServer) -> None:
    server = await serve(
        scenario(
            error(529, "Overloaded", type="overloaded_error"),
            reply("Answered by the fallback."),
            reply("Still the fallback."),
        )
    )
    switches: list[tuple[str, str]] = []
    inner = AnthropicModel(api_key="k", base_url=server.base_url, max_retries=0)
    model = FallbackModel(
        inner=inner, fallback="haiku", on_switch=lambda a, b, _e: switches.append((a, b))
    )
    try:
        first = await collect(model, simple_request(model="opus", max_tokens=60_000))
        second = await collect(model, simple_request(model="opus"))
    finally:
        await model.aclose()
    assert _text(first) == "Answered by the fallback."
    assert _text(second) == "Still the fallback."
    assert switches == [("opus", "haiku")]
    models = [body["model"] for body in server.requests]
    assert models == ["claude-opus-4-8", "claude-haiku-4-5", "claude-haiku-4-5"]
    assert server.requests[1]["max_tokens"] == 60_000  # haiku 4.5 allows 64k
    server.assert_done()


async def test_other_errors_do_not_fall_back(serve: StartServer) -> None:
    server = await serve(scenario(error(500, "boom")))
    inner = AnthropicModel(api_key="k", base_url=server.base_url, max_retries=0)
    model = FallbackModel(inner=inner, fallback="haiku")
    with pytest.raises(ModelError, match="HTTP 500"):
        await collect(model, simple_request())
    await model.aclose()
    assert not model.switched


# ---- proxy and certificates ---------------------------------------------------------------------


class _ConnectProxy:
    """An HTTP CONNECT proxy on 127.0.0.1 that records the targets it tunnels to."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        method, target, _ = request.split(b"\r\n", 1)[0].decode().split(" ", 2)
        assert method == "CONNECT", method
        self.targets.append(target)
        host, port = target.rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def test_https_proxy_and_ssl_cert_file_are_honoured(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An https endpoint with a certificate only SSL_CERT_FILE vouches for, reached through
    HTTPS_PROXY: the request succeeds and goes through the proxy."""
    import ssl

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    from lsp_agent.testing.scripted import ScriptedServer

    server = ScriptedServer(scenario=scenario(reply("Through the proxy.")))
    await server.start()

    # The scripted server speaks plain HTTP: put TLS in front of it.
    async def tls_front(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", server.port)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    front = await asyncio.start_server(tls_front, "127.0.0.1", 0, ssl=context)
    proxy = _ConnectProxy()
    proxy_url = await proxy.start()
    port = front.sockets[0].getsockname()[1]
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", proxy_url)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    model = AnthropicModel(api_key="k", base_url=f"https://127.0.0.1:{port}", max_retries=0)
    try:
        events = await collect(model, simple_request())
    finally:
        await model.aclose()
        front.close()
        assert proxy.server is not None
        proxy.server.close()
        await server.stop()
    assert _text(events) == "Through the proxy."
    assert proxy.targets == [f"127.0.0.1:{port}"]

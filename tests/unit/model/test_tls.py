"""A TLS context built ahead (the daemon's) serves a run only while the run would build the
same one: the same certificate variables and an unchanged CA file. Real TLS endpoints on
127.0.0.1 in front of the scripted Messages-API server, certificates made by ``openssl``."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.tls import PreparedTls, prepare_tls
from lsp_agent.model.types import TextDelta
from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.scripted import ScriptedServer

from .conftest import collect, simple_request


def _certificate(directory: Path) -> tuple[Path, Path]:
    directory.mkdir()
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@asynccontextmanager
async def _tls_endpoint(cert: Path, key: Path, answer: str) -> AsyncIterator[str]:
    """An https base URL: TLS with ``cert`` in front of a scripted server answering
    ``answer``."""
    server = ScriptedServer(scenario=scenario(reply(answer)))
    await server.start()

    async def front(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    listener = await asyncio.start_server(front, "127.0.0.1", 0, ssl=context)
    try:
        yield f"https://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
    finally:
        listener.close()
        await server.stop()


async def _ask(base_url: str, prepared: PreparedTls) -> str:
    model = AnthropicModel(api_key="k", base_url=base_url, max_retries=0, tls=prepared)
    try:
        events = await collect(model, simple_request())
    finally:
        await model.aclose()
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.fixture
def trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], tuple[Path, Path]]:
    """Makes a certificate and points SSL_CERT_FILE (the only trust) at ``trust.pem``, a
    copy of it; returns the certificate and its key."""
    for name in ("SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    trust = tmp_path / "trust.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(trust))

    def make(name: str) -> tuple[Path, Path]:
        cert, key = _certificate(tmp_path / name)
        trust.write_bytes(cert.read_bytes())
        return cert, key

    return make


async def test_the_prepared_context_serves_a_run_with_the_same_trust(
    trusted: Callable[[str], tuple[Path, Path]],
) -> None:
    cert, key = trusted("first")
    prepared = prepare_tls()
    assert prepared is not None
    assert prepared.for_environ(os.environ) is prepared.context
    async with _tls_endpoint(cert, key, "Trusted.") as url:
        assert await _ask(url, prepared) == "Trusted."


async def test_a_changed_ca_file_is_loaded_again_not_taken_from_the_prepared_context(
    trusted: Callable[[str], tuple[Path, Path]],
) -> None:
    """The stale-state case: the daemon prepared its context, then the CA file changed. A run
    must trust what the file says now (the old context would refuse the new endpoint)."""
    trusted("old")
    prepared = prepare_tls()
    assert prepared is not None
    cert, key = trusted("new")
    assert prepared.for_environ(os.environ) is None
    async with _tls_endpoint(cert, key, "New trust.") as url:
        assert await _ask(url, prepared) == "New trust."


def test_other_certificate_variables_get_no_prepared_context(
    trusted: Callable[[str], tuple[Path, Path]], tmp_path: Path
) -> None:
    trusted("first")
    prepared = prepare_tls()
    assert prepared is not None
    other = tmp_path / "other.pem"
    other.write_bytes((tmp_path / "trust.pem").read_bytes())
    assert prepared.for_environ({**os.environ, "SSL_CERT_FILE": str(other)}) is None
    assert prepared.for_environ({**os.environ, "SSL_CERT_DIR": str(tmp_path)}) is None


def test_a_missing_ca_file_prepares_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "absent.pem"))
    assert prepare_tls() is None

"""Managed language servers: real processes (the test checker and ``ruff server``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_agent.diagnostics.managed import ServerUnavailableError, text_digest

from .conftest import ServiceFactory, checker_config, eventually, ruff_config


async def test_ruff_pull_reports_are_tagged_with_the_text_they_were_computed_for(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(ruff_config())
    (server,) = service.servers
    path = tmp_path / "a.py"
    first = "import os\n"
    await server.analyze(path, first, timeout=10)
    assert server.pull  # ruff offers textDocument/diagnostic
    report = service.store.find(path, "ruff", digest=text_digest(first))
    assert report is not None and report.final
    assert [d.code for d in report.diagnostics] == ["F401"]
    assert report.diagnostics[0].source == "Ruff"
    # Non-ASCII text before the problem: positions come back in code points whatever
    # encoding ruff negotiated.
    second = "s = 'é😀'; print(undefined_name)\n"
    await server.analyze(path, second, timeout=10)
    report = service.store.find(path, "ruff", digest=text_digest(second))
    assert report is not None
    column = second.index("undefined_name")
    codes = [(d.code, d.line, d.range.start.character) for d in report.diagnostics]
    assert ("F821", 0, column) in codes


async def test_push_reports_map_versions_to_texts(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config())
    (server,) = service.servers
    path = tmp_path / "a.txt"
    await server.analyze(path, "ok\nERROR here\n", timeout=5)
    assert not server.pull
    with service.store.watch([path]) as event:
        async with asyncio.timeout(5):
            while (
                service.store.find(path, "checker", digest=text_digest("ok\nERROR here\n")) is None
            ):
                event.clear()
                await event.wait()
    report = service.store.find(path, "checker", digest=text_digest("ok\nERROR here\n"))
    assert report is not None and not report.final
    assert [(d.line, d.code) for d in report.diagnostics] == [(1, "E1")]


async def test_unversioned_pushes_are_attributed_only_when_unambiguous(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--no-version", "--delay-ms", "300"))
    (server,) = service.servers
    path = tmp_path / "a.txt"
    old, new = "ERROR old\n", "fine now\n"
    await server.ensure_running(timeout=5)
    server.sync(path, old)
    server.sync(path, new)  # two texts in flight: the first report is ambiguous
    await eventually(lambda: server.ignored_reports == 1)
    assert service.store.latest(path, "checker") is None
    await eventually(lambda: service.store.latest(path, "checker") is not None)
    report = service.store.find(path, "checker", digest=text_digest(new))
    assert report is not None and report.diagnostics == ()
    assert service.store.find(path, "checker", digest=text_digest(old)) is None


async def test_a_missing_command_is_reported_and_retried_with_backoff(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(
        checker_config().model_copy(update={"command": ("no-such-language-server-xyz",)})
    )
    (server,) = service.servers
    with pytest.raises(ServerUnavailableError, match="could not start: command not found"):
        await server.ensure_running(timeout=5)
    with pytest.raises(ServerUnavailableError, match="next try in"):
        await server.ensure_running(timeout=5)
    assert server.state == "crashed" and server.failures == 1


async def test_a_server_that_exits_at_start_says_why(make_service: ServiceFactory) -> None:
    service = make_service(checker_config("--exit-at-start"))
    (server,) = service.servers
    with pytest.raises(ServerUnavailableError, match="refusing to start"):
        await server.ensure_running(timeout=5)


async def test_a_server_that_never_initializes_does_not_block_past_the_callers_cap(
    make_service: ServiceFactory,
) -> None:
    service = make_service(checker_config("--hang-initialize", start_timeout_ms=600))
    (server,) = service.servers
    with pytest.raises(ServerUnavailableError, match="still starting"):
        await server.ensure_running(timeout=0.1)
    await eventually(lambda: server.state == "crashed")
    assert "no answer to initialize within 600 ms" in (server.last_error or "")


async def test_a_crash_is_noticed_and_the_server_restarts_after_backoff(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--crash-on", "CRASH", "--pull"))
    (server,) = service.servers
    path = tmp_path / "a.txt"
    await server.analyze(path, "fine\n", timeout=5)
    with pytest.raises(ServerUnavailableError):
        await server.analyze(path, "CRASH\n", timeout=5)
    await eventually(lambda: server.state == "crashed")
    assert "exited with code 3" in (server.last_error or "")
    assert "crashing on purpose" in (server.last_error or "")
    await asyncio.sleep(0.6)  # first backoff is 0.5 s
    await server.analyze(path, "ERROR again\n", timeout=5)
    report = service.store.find(path, "checker", digest=text_digest("ERROR again\n"))
    assert report is not None and [d.code for d in report.diagnostics] == ["E1"]


async def test_repeated_crashes_disable_the_server(make_service: ServiceFactory) -> None:
    service = make_service(checker_config("--exit-at-start", max_restarts=0))
    (server,) = service.servers
    with pytest.raises(ServerUnavailableError):
        await server.ensure_running(timeout=5)
    with pytest.raises(ServerUnavailableError, match="disabled after 1 failed"):
        await server.ensure_running(timeout=5)


async def test_a_hung_server_times_out_and_is_restarted(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--deaf", "--pull"))
    (server,) = service.servers
    path = tmp_path / "a.txt"
    await server.ensure_running(timeout=5)
    for _ in range(3):
        with pytest.raises(TimeoutError):
            await server.analyze(path, "x\n", timeout=0.1)
    assert server.state == "crashed"
    assert "hung" in (server.last_error or "")


async def test_floods_are_capped(make_service: ServiceFactory, tmp_path: Path) -> None:
    service = make_service(checker_config("--flood", "5000", "--pull"), max_per_report=50)
    (server,) = service.servers
    path = tmp_path / "a.txt"
    await server.analyze(path, "x\n", timeout=5)
    report = service.store.find(path, "checker", digest=text_digest("x\n"))
    assert report is not None
    assert len(report.diagnostics) == 50
    assert report.truncated == 4950


async def test_out_of_range_diagnostics_are_clamped(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--out-of-range", "--pull"))
    (server,) = service.servers
    path = tmp_path / "a.txt"
    await server.analyze(path, "ERROR\n", timeout=5)
    report = service.store.find(path, "checker", digest=text_digest("ERROR\n"))
    assert report is not None
    (d,) = report.diagnostics
    assert d.clamped and d.range.start.line == 1


async def test_shutdown_stops_the_process_and_closes_the_server(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config())
    (server,) = service.servers
    await server.ensure_running(timeout=5)
    process = server._process
    assert process is not None
    await service.shutdown()
    assert process.returncode is not None
    assert server.state == "closed"
    with pytest.raises(ServerUnavailableError, match="shut down"):
        await server.ensure_running(timeout=1)


async def test_hung_shutdown_is_killed(make_service: ServiceFactory) -> None:
    service = make_service(checker_config("--deaf"))
    (server,) = service.servers
    await server.ensure_running(timeout=5)
    process = server._process
    assert process is not None
    await server.shutdown(timeout=0.2)
    assert process.returncode is not None


async def test_open_documents_are_bounded(make_service: ServiceFactory, tmp_path: Path) -> None:
    service = make_service(checker_config(max_open_documents=2))
    (server,) = service.servers
    await server.ensure_running(timeout=5)
    for name in "abc":
        server.sync(tmp_path / f"{name}.txt", name)
    assert server.synced_digest(tmp_path / "a.txt") is None
    assert server.synced_digest(tmp_path / "c.txt") == text_digest("c")

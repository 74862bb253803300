"""The settle rule and classification, against real servers and the editor channel."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from lsp_agent.diagnostics.config import SourceFilter, VerifyConfig
from lsp_agent.diagnostics.managed import text_digest
from lsp_agent.diagnostics.model import EDITOR_CHANNEL, Diagnostic, Position, Range, Report
from lsp_agent.diagnostics.verify import BaselineCache, Target

from .conftest import ServiceFactory, checker_config, eventually, ruff_config


def target(
    path: Path,
    text: str,
    base: str | None,
    *,
    version: int | None = None,
    base_version: int | None = None,
) -> Target:
    return Target(
        path=path,
        text=text,
        digest=text_digest(text),
        version=version,
        since=time.monotonic(),
        base_text=base,
        base_digest=text_digest(base) if base is not None else None,
        base_version=base_version,
    )


def editor_report(path: Path, version: int, text: str, *lines: int) -> Report:
    diagnostics = tuple(
        Diagnostic(
            range=Range(start=Position(line=n, character=0), end=Position(line=n, character=1)),
            severity=1,
            message=f"problem on {n}",
            source="Pylance",
            code="X",
        )
        for n in lines
    )
    return Report(
        path=path,
        channel=EDITOR_CHANNEL,
        diagnostics=diagnostics,
        version=version,
        digest=text_digest(text),
        received=time.monotonic(),
    )


async def test_ruff_finds_the_new_error_and_then_its_fix(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(ruff_config())
    path = tmp_path / "m.py"
    base = "import os\n\nprint(os.sep)\n"
    broken = "import os\n\nprint(os.sep, missing)\n"
    baselines: BaselineCache = {}
    verdict = await service.verifier.verify(
        [target(path, broken, base)], config=VerifyConfig(timeout_ms=10_000), baselines=baselines
    )
    (file,) = verdict.files
    assert [s.status for s in file.sources] == ["checked"]
    assert [(d.code, d.line) for d in file.new] == [("F821", 2)]
    assert verdict.new_errors == 1
    fixed_text = "import os\n\nprint(os.sep, 1)\n"
    verdict = await service.verifier.verify(
        [target(path, fixed_text, base)],
        config=VerifyConfig(timeout_ms=10_000),
        baselines=baselines,
    )
    (file,) = verdict.files
    assert file.new == () and verdict.new_errors == 0 and verdict.complete


async def test_preexisting_problems_are_not_blamed_on_the_edit(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(ruff_config())
    path = tmp_path / "m.py"
    base = "import os\nx = 1\n"
    new = "import os\n\nx = 2\ny = x\n"
    verdict = await service.verifier.verify(
        [target(path, new, base)], config=VerifyConfig(timeout_ms=10_000), baselines={}
    )
    (file,) = verdict.files
    assert file.new == ()
    assert [d.code for d in file.preexisting] == ["F401"]


async def test_a_slow_checker_is_waited_for_within_the_cap(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--delay-ms", "300"))
    path = tmp_path / "a.txt"
    verdict = await service.verifier.verify(
        [target(path, "one\nERROR two\n", "one\n")],
        config=VerifyConfig(timeout_ms=10_000),
        baselines={},
    )
    (file,) = verdict.files
    assert [s.status for s in file.sources] == ["checked"]
    assert [(d.line, d.code) for d in file.new] == [(1, "E1")]


async def test_a_checker_slower_than_the_cap_gives_unknown_never_its_old_results(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--delay-ms", "1500"))
    (server,) = service.servers
    path = tmp_path / "a.txt"
    base = "ERROR in the old text\n"
    # The checker has reported on the old text: that report is in the store.
    await server.analyze(path, base, timeout=10)
    await eventually(
        lambda: service.store.find(path, "checker", digest=text_digest(base)) is not None
    )
    verdict = await service.verifier.verify(
        [target(path, "all good now\n", base)], config=VerifyConfig(timeout_ms=300), baselines={}
    )
    (file,) = verdict.files
    (source,) = file.sources
    assert source.status == "unknown"
    assert source.reason == "did not report on this version within 300 ms"
    assert file.new == () and file.fixed == () and file.preexisting == ()
    assert not verdict.complete


async def test_a_server_that_cannot_start_is_unknown_with_its_reason(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--exit-at-start"))
    verdict = await service.verifier.verify(
        [target(tmp_path / "a.txt", "x\n", "y\n")],
        config=VerifyConfig(timeout_ms=5000),
        baselines={},
    )
    (source,) = verdict.files[0].sources
    assert source.status == "unknown"
    assert "refusing to start" in (source.reason or "")


async def test_the_editor_channel_settles_on_the_last_report_for_the_version(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service()
    path = tmp_path / "a.py"
    base, new = "a\nb\n", "a\nb\nc\n"
    service.store.put(editor_report(path, 4, base, 0))
    service.store.note_editor_version(path, 5)

    async def editor() -> None:
        await asyncio.sleep(0.05)
        service.store.put(editor_report(path, 5, new, 0))  # one server caught up
        await asyncio.sleep(0.02)
        service.store.put(editor_report(path, 5, new, 0, 2))  # the other one too

    feeder = asyncio.ensure_future(editor())
    verdict = await service.verifier.verify(
        [target(path, new, base, version=5, base_version=4)],
        config=VerifyConfig(timeout_ms=5000, quiet_ms=200),
        baselines={},
    )
    await feeder
    (file,) = verdict.files
    assert [s.channel for s in file.checked] == [EDITOR_CHANNEL]
    assert [d.line for d in file.new] == [2]
    assert [d.line for d in file.preexisting] == [0]


async def test_an_editor_that_moved_on_makes_the_source_unknown(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service()
    path = tmp_path / "a.py"
    service.store.put(editor_report(path, 4, "a\n", 0))
    service.store.note_editor_version(path, 6)  # the user typed after the agent's version 5
    verdict = await service.verifier.verify(
        [target(path, "b\n", "a\n", version=5, base_version=4)],
        config=VerifyConfig(timeout_ms=100),
        baselines={},
    )
    (source,) = verdict.files[0].sources
    assert source.status == "unknown"
    assert "document changed (version 6)" in (source.reason or "")


async def test_without_an_earlier_report_diagnostics_are_not_called_new(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service()
    path = tmp_path / "a.py"
    service.store.put(editor_report(path, 1, "zzz\n", 0))  # the bridge knows this document
    service.store.put(editor_report(path, 5, "b\n", 0))
    verdict = await service.verifier.verify(
        [target(path, "b\n", "a\n", version=5, base_version=4)],
        config=VerifyConfig(timeout_ms=1000, quiet_ms=0),
        baselines={},
    )
    (file,) = verdict.files
    assert file.new == () and len(file.uncompared) == 1


async def test_filters_drop_sources_severities_and_codes(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--pull"), ruff_config())
    path = tmp_path / "a.txt"
    config = VerifyConfig(
        timeout_ms=5000,
        min_severity="error",
        sources={"checker": SourceFilter(ignore_codes=("E1",))},
    )
    verdict = await service.verifier.verify(
        [target(path, "ERROR\nWARN\n", "")], config=config, baselines={}
    )
    (file,) = verdict.files
    assert file.new == ()  # E1 ignored, W1 below the threshold
    disabled = VerifyConfig(sources={"checker": SourceFilter(enabled=False)})
    verdict = await service.verifier.verify(
        [target(path, "ERROR\n", "")], config=disabled, baselines={}
    )
    assert verdict.files[0].sources == ()


async def test_new_files_count_everything_as_new(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    service = make_service(checker_config("--pull"))
    verdict = await service.verifier.verify(
        [target(tmp_path / "n.txt", "ERROR\n", None)], config=VerifyConfig(), baselines={}
    )
    assert [d.code for d in verdict.files[0].new] == ["E1"]


@pytest.mark.parametrize("mode", [(), ("--no-version",)], ids=["versioned", "unversioned"])
async def test_a_report_on_the_old_text_arriving_after_the_edit_is_never_taken(
    make_service: ServiceFactory, tmp_path: Path, mode: tuple[str, ...]
) -> None:
    service = make_service(checker_config("--delay-ms", "300", *mode))
    (server,) = service.servers
    path = tmp_path / "a.txt"
    base, new = "ERROR old\n", "fine\nWARN new\n"
    await server.ensure_running(timeout=10)
    server.sync(path, base)  # the checker is still busy with this text when the edit comes
    known: BaselineCache = {
        (path, "checker"): Report(
            path=path, channel="checker", diagnostics=(), digest=text_digest(base)
        )
    }
    verdict = await service.verifier.verify(
        [target(path, new, base)], config=VerifyConfig(timeout_ms=10_000), baselines=known
    )
    (file,) = verdict.files
    assert [s.status for s in file.sources] == ["checked"]
    assert [d.code for d in file.new] == ["W1"]

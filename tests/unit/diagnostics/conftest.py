"""Shared helpers: managed-server configs for the test checker and for real ``ruff server``."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.diagnostics.config import DiagnosticsSettings, ManagedServerConfig
from lsp_agent.diagnostics.service import DiagnosticsService

CHECKER = Path(__file__).resolve().parents[2] / "e2e_diagnostics" / "checker_server.py"


def ruff_command() -> list[str]:
    """``ruff server`` from the test interpreter's environment (a dev dependency)."""
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if found is None:
        raise RuntimeError("ruff is a dev dependency of this project: install it")
    return [found, "server"]


def checker_config(*args: str, name: str = "checker", **extra: Any) -> ManagedServerConfig:
    return ManagedServerConfig(
        name=name,
        command=(sys.executable, str(CHECKER), *args),
        filetypes=("*.txt",),
        start_timeout_ms=extra.pop("start_timeout_ms", 5000),
        **extra,
    )


def ruff_config(**extra: Any) -> ManagedServerConfig:
    return ManagedServerConfig(
        name="ruff",
        command=tuple(ruff_command()),
        filetypes=("*.py", "*.pyi"),
        language_id="python",
        **extra,
    )


ServiceFactory = Callable[..., DiagnosticsService]


@pytest.fixture
async def make_service(tmp_path: Path) -> AsyncIterator[ServiceFactory]:
    services: list[DiagnosticsService] = []

    def make(*servers: ManagedServerConfig, **settings: Any) -> DiagnosticsService:
        service = DiagnosticsService(
            settings=DiagnosticsSettings(servers=servers, **settings), roots=[tmp_path]
        )
        services.append(service)
        return service

    yield make
    for service in services:
        await service.shutdown()


async def eventually(condition: Callable[[], bool], *, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds (polling); fail the test after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def basedpyright_config(**extra: Any) -> ManagedServerConfig:
    """``basedpyright-langserver --stdio`` from the test environment (a dev dependency)."""
    beside = Path(sys.executable).with_name("basedpyright-langserver")
    found = str(beside) if beside.exists() else shutil.which("basedpyright-langserver")
    if found is None:
        raise RuntimeError("basedpyright is a dev dependency of this project: install it")
    return ManagedServerConfig(
        name="basedpyright",
        command=(found, "--stdio"),
        filetypes=("*.py", "*.pyi"),
        language_id="python",
        settings={"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}},
        start_timeout_ms=30_000,
        request_timeout_ms=30_000,
        **extra,
    )

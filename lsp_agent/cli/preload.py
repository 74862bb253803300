"""What the daemon imports once, before its first fork, so that a forked ``run -p`` finds it
loaded: every module a run imports on its way to the first model request.

The list was taken from a forked run's ``sys.modules`` at the moment of its first request,
compared with the daemon's (docs/performance.md, "Cold start and the background daemon"). A module
that reads the environment when it is imported is left out, or its state is recomputed in the
child from the run's own environment (:func:`lsp_agent.daemon.warm.adopt_environment`):
``opentelemetry.propagate`` (it picks its propagators from ``OTEL_PROPAGATORS`` at import) is
left for the run to import; libgit2's search paths, which it takes from ``HOME`` and
``XDG_CONFIG_HOME`` when ``pygit2`` loads, are reset in the child.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp_agent.model.tls import PreparedTls

RUN_MODULES = (
    # The model SDK and its HTTP stack, down to the parts the first request opens.
    "anthropic",
    "httpx2",
    "httpcore2",
    "httpcore2._async.connection_pool",
    "httpcore2._backends.anyio",
    "h11",
    "anyio._backends._asyncio",
    "anyio.streams.tls",
    "truststore",
    "opentelemetry.baggage.propagation",
    "opentelemetry.propagators.composite",
    "opentelemetry.trace.propagation.tracecontext",
    # libgit2, for the checkpoint store a session opens (and prunes) before its first request.
    "pygit2",
    "platformdirs",
    "tarfile",
    "concurrent.futures.thread",
    "queue",
    # The run's own path through the composition root.
    "lsp_agent.headless.runner",
    "lsp_agent.headless.events",
    "lsp_agent.headless.host",
    "lsp_agent.headless.mcp_notices",
    "lsp_agent.headless.prompt_size",
    "lsp_agent.headless.responses",
    "lsp_agent.headless.stdin",
    "lsp_agent.model.anthropic",
    "lsp_agent.model.unsigned",
    "lsp_agent.sessions.compose",
    "lsp_agent.sessions.manager",
    "lsp_agent.sessions.resume",
    "lsp_agent.checkpoints.retention",
    "lsp_agent.mcp.connection_status",
    "lsp_agent.store.index",
    "lsp_agent.store.runs",
    "lsp_agent.workspace.disk_host",
)
"""Modules a ``run -p`` imports before its first model request (dotted names)."""


@dataclass(kw_only=True)
class Prepared:
    """What :func:`preload_run` built for every run, filled once before the first fork."""

    tls: PreparedTls | None = None
    """The model client's default TLS context (``None``: each run builds its own)."""


def preload_run(prepared: Prepared) -> None:
    """Import :data:`RUN_MODULES`, generate the built-in tools' specs once (which brings in
    pydantic's JSON-schema machinery) and build the model client's default TLS context
    from the daemon's environment into ``prepared``; a run uses that context only when its
    own environment would build the same (:class:`~lsp_agent.model.tls.PreparedTls`). Raises
    ``ImportError`` when a module is missing (a broken installation)."""
    for name in RUN_MODULES:
        importlib.import_module(name)
    from lsp_agent.model.tls import prepare_tls
    from lsp_agent.tools.registry import default_tools

    default_tools().specs()
    prepared.tls = prepare_tls()

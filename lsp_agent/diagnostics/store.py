"""The versioned diagnostics store.

Per document (an absolute path) and per channel (a managed server's name, or ``"editor"``) it
keeps the last few :class:`~lsp_agent.diagnostics.model.Report` objects, each tagged with the
document version and/or text digest it was computed for. Nothing is ever "the current
diagnostics" without saying for which text: readers ask for the report that matches a text
(:meth:`DiagnosticsStore.find`), so an old report can never pass for a new one.

Memory is bounded: at most ``max_documents`` documents (least recently updated forgotten
first) and ``reports_per_source`` reports per document and channel. Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.diagnostics.model import EDITOR_CHANNEL, Report

logger = logging.getLogger(__name__)

Listener = Callable[[Report], None]


@dataclass(kw_only=True)
class _Document:
    reports: dict[str, deque[Report]] = field(default_factory=dict)
    editor_version: int | None = None


class StaleReportError(Exception):
    """A report names a document version older than one already seen; the message says which."""


class DiagnosticsStore:
    """See the module docstring."""

    def __init__(self, *, max_documents: int = 2000, reports_per_source: int = 8) -> None:
        self._docs: OrderedDict[Path, _Document] = OrderedDict()
        self._max_documents = max_documents
        self._per_source = reports_per_source
        self._listeners: list[Listener] = []
        self._waiters: dict[Path, set[asyncio.Event]] = {}

    # ---- writing -------------------------------------------------------------------------------

    def put(self, report: Report) -> None:
        """Store ``report`` and wake whoever waits on its document.

        Raises :class:`StaleReportError` (and stores nothing) for an editor-bridge report whose
        version is older than the newest editor version known for the document.
        """
        doc = self._doc(report.path)
        if report.channel == EDITOR_CHANNEL and report.version is not None:
            known = doc.editor_version
            if known is not None and report.version < known:
                raise StaleReportError(
                    f"diagnostics for {report.path} version {report.version} arrived after "
                    f"version {known}; ignored"
                )
            doc.editor_version = report.version
        queue = doc.reports.get(report.channel)
        if queue is None:
            queue = doc.reports[report.channel] = deque(maxlen=self._per_source)
        queue.append(report)
        for event in self._waiters.get(report.path, ()):
            event.set()
        for listener in list(self._listeners):
            try:
                listener(report)
            except Exception:  # a listener's bug must not lose the report for others
                logger.exception("diagnostics listener failed")

    def note_editor_version(self, path: Path, version: int) -> None:
        """Record that the editor's document ``path`` reached ``version`` (from ``didChange``
        or an applied edit), so bridge reports for older versions are refused."""
        doc = self._doc(path)
        if doc.editor_version is None or version > doc.editor_version:
            doc.editor_version = version

    def forget(self, path: Path) -> None:
        """Drop everything known about ``path``."""
        self._docs.pop(path, None)

    def _doc(self, path: Path) -> _Document:
        doc = self._docs.get(path)
        if doc is None:
            doc = self._docs[path] = _Document()
            while len(self._docs) > self._max_documents:
                self._docs.popitem(last=False)
        else:
            self._docs.move_to_end(path)
        return doc

    # ---- reading -------------------------------------------------------------------------------

    def editor_version(self, path: Path) -> int | None:
        """The newest editor version seen for ``path``."""
        doc = self._docs.get(path)
        return doc.editor_version if doc is not None else None

    def channels(self, path: Path) -> frozenset[str]:
        """The channels that reported for ``path`` (among the reports still kept)."""
        doc = self._docs.get(path)
        return frozenset(doc.reports) if doc is not None else frozenset()

    def latest(self, path: Path, channel: str) -> Report | None:
        """The newest report of ``channel`` for ``path``, whatever text it was for."""
        doc = self._docs.get(path)
        queue = doc.reports.get(channel) if doc is not None else None
        return queue[-1] if queue else None

    def find(
        self,
        path: Path,
        channel: str,
        *,
        digest: str | None = None,
        version: int | None = None,
    ) -> Report | None:
        """The newest report of ``channel`` for ``path`` computed for the given text.

        A report matches when its digest equals ``digest``; a report without a digest matches
        when its version equals ``version``. A report with neither (a producer that named no
        version and could not be attributed) never matches: it may be about any text.
        ``None`` when nothing matches.
        """
        doc = self._docs.get(path)
        queue = doc.reports.get(channel) if doc is not None else None
        for report in reversed(queue or ()):
            if matches(report, digest=digest, version=version):
                return report
        return None

    def documents(self) -> Iterable[Path]:
        """Every document with stored reports, least recently updated first."""
        return tuple(self._docs)

    # ---- waiting and listening -----------------------------------------------------------------

    def watch(self, paths: Iterable[Path]) -> _Watch:
        """An event set whenever a report for one of ``paths`` is stored; use as a context
        manager so the registration is removed."""
        return _Watch(store=self, paths=tuple(paths))

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(report)`` after every stored report; returns the remover."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove


def matches(report: Report, *, digest: str | None, version: int | None) -> bool:
    """Whether ``report`` was computed for the text identified by ``digest``/``version`` (see
    :meth:`DiagnosticsStore.find`)."""
    if report.digest is not None:
        return digest is not None and report.digest == digest
    return report.version is not None and version is not None and report.version == version


@dataclass(kw_only=True)
class _Watch:
    store: DiagnosticsStore
    paths: tuple[Path, ...]
    event: asyncio.Event = field(default_factory=asyncio.Event)

    def __enter__(self) -> asyncio.Event:
        for path in self.paths:
            self.store._waiters.setdefault(path, set()).add(self.event)
        return self.event

    def __exit__(self, *exc: object) -> None:
        for path in self.paths:
            waiters = self.store._waiters.get(path)
            if waiters is not None:
                waiters.discard(self.event)
                if not waiters:
                    del self.store._waiters[path]

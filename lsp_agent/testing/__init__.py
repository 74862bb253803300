"""Test infrastructure shipped with the package: the scripted Messages-API server and its
scenarios.

:mod:`~lsp_agent.testing.scenario` (scenario models, loading, Python builders),
:mod:`~lsp_agent.testing.wire` (request checks, answer rendering),
:mod:`~lsp_agent.testing.http11` (HTTP/1.1 framing), :mod:`~lsp_agent.testing.scripted` (the
server on an event loop), :mod:`~lsp_agent.testing.thread` (the server on its own thread) and
``python -m lsp_agent.testing`` (the server as a process). Tests, benchmarks and the offline demo
use it; the agent core never imports it. It imports only the standard library and pydantic.
"""

"""Sessions and how doors build them.

Owns :class:`~lsp_agent.sessions.session.Session` (one conversation: roots, mode, history, its
workspace and permission engine; :mod:`.session`) with its manager (:mod:`.manager`), and the
composition root (:mod:`.compose`: :func:`~lsp_agent.sessions.compose.build_sessions`, the one
place a door's host, model factory, agent settings, diagnostics service, settings stores and MCP
services become sessions). Layering: the top of the core, just below the doors; may import every
core package, never a door.
"""

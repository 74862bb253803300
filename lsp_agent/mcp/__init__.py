"""MCP client: Claude Code compatible server configuration, one connection pool per project
shared by every session, and ``mcp__server__tool`` tools offered to the model through the
permission engine.

Importing this package (or :mod:`.config`, :mod:`.sources`, :mod:`.names`) does not import the
``mcp`` SDK; only :mod:`.connection` and :mod:`.transport` do, and only once a server is
configured, so a user without MCP servers never pays for it at start-up.
"""

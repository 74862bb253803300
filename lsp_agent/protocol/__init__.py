"""The shared vocabulary: the types every layer and every door speaks.

Owns the session updates the core emits (shaped like ACP's ``session/update`` union,
:mod:`.events`), permission requests and answers (:mod:`.permissions`), text snapshots, file
changes and apply results (:mod:`.documents`), prompt parts (:mod:`.prompt`) and the
:class:`~lsp_agent.protocol.host.Host` protocol a door implements (:mod:`.host`). It is the
bottom layer: it imports nothing else of ``lsp_agent`` (only the standard library and
pydantic), so a door can speak it without loading the agent core. Importing the package itself
loads nothing.
"""

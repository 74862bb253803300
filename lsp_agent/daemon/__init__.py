"""The warm-start door: a per-user background process that runs ``lsp-agent run -p`` invocations
for its client processes, with the agent, the model SDK and their dependencies already imported.

A client (``lsp-agent run -p ...``) connects to the daemon's Unix socket and hands over its
whole invocation: argv, working directory, environment and its own stdin, stdout and stderr
(as file descriptors). The daemon forks; the child takes on exactly that invocation (the
descriptors become its 0, 1 and 2, the environment and directory become its own) and runs the
ordinary command-line entry point, so the output, settings and permissions are those of an
in-process run. Only the start-up differs. See :mod:`lsp_agent.daemon.paths` for where the
socket lives and how it is protected, :mod:`lsp_agent.daemon.server` and
:mod:`lsp_agent.daemon.client` for the two ends.
"""

"""The system prompt: a static part, then the session's environment and memory files.

The parts are ordered from most to least stable so the request prefix stays byte-identical
across turns of a session (prompt caching); the memory block changes only when a memory file
does.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import date
from pathlib import Path

STATIC_PROMPT = """\
You are lsp-agent, a coding agent that works inside the user's editor through a language \
server. You help with software engineering tasks: fixing bugs, adding features, refactoring, \
explaining code and running tests.

How you work:
- Use the tools to look at the code before you change it. Read a file before you edit it.
- The Read tool shows the editor's current text, including unsaved changes the user made; \
respect them. Your edits are applied to the user's open buffers and must not undo their work.
- Prefer Edit for changes to existing files (exact old_string/new_string, with enough context \
to be unique); use Write only for new files or complete rewrites.
- Use Glob and Grep to find files and code; use Bash to run tests, builds and other commands.
- Paths you pass to file tools must be absolute.
- Some tool calls need the user's approval. If the user rejects a call, do not retry the same \
thing; adjust your approach or ask.
- After changing code, verify it (run the tests or the relevant command) before you say it \
works. Report failures honestly.
- After your edits you may receive a <diagnostics-after-edit> report computed for the exact \
text you wrote: fix the new errors it lists. A source marked "unknown" did not report in time, \
so its checks are unverified: never claim they pass.
- Keep answers short and concrete. Use Markdown; refer to code as path:line.
"""


def environment_text(*, cwd: Path, roots: Sequence[Path], today: date | None = None) -> str:
    """The environment block: working directory, other roots, platform and date."""
    lines = [
        "<env>",
        f"Working directory: {cwd}",
        *(f"Additional directory: {r}" for r in roots if r != cwd),
        f"Platform: {platform.system().lower()}",
        f"Today's date: {(today or date.today()).isoformat()}",
        "</env>",
    ]
    return "\n".join(lines)


def system_prompt(
    *,
    cwd: Path,
    roots: Sequence[Path],
    append: str | None = None,
    memory: str | None = None,
    replace: str | None = None,
) -> tuple[str, ...]:
    """The system prompt parts for a session, most stable first. ``memory`` is the rendered
    memory block (:mod:`lsp_agent.context.memory`), loaded by the caller under the workspace's
    trust. ``replace`` stands for the built-in prompt and environment block (Claude Code's
    ``--system-prompt``); memory and ``append`` still follow it."""
    if replace is not None:
        parts = [replace]
    else:
        parts = [STATIC_PROMPT, environment_text(cwd=cwd, roots=roots)]
    if memory:
        parts.append(memory)
    if append:
        parts.append(append)
    return tuple(parts)

"""The system prompt: a static part, then a small dynamic part (the session's environment).

Two parts, most stable first, each ending with a prompt-cache breakpoint (the Anthropic
adapter marks the first and the last system part): the static part is the same for every
session and project, so its cached prefix is shared; the dynamic part (working directory,
platform, date, ``--append-system-prompt``) is fixed when the session starts. Memory files
are not here: they open the conversation (:mod:`lsp_agent.context.start`), so editing one
never rewrites the cached system prompt.
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
    replace: str | None = None,
    today: date | None = None,
) -> tuple[str, ...]:
    """The system prompt of a session: ``(static, dynamic)``. The dynamic part is the
    environment block, then ``append`` (``--append-system-prompt``). ``replace`` stands for the
    built-in prompt and environment block (Claude Code's ``--system-prompt``); ``append`` still
    follows it, as its own part."""
    if replace is not None:
        return (replace, append) if append else (replace,)
    dynamic = environment_text(cwd=cwd, roots=roots, today=today)
    if append:
        dynamic += "\n\n" + append
    return (STATIC_PROMPT, dynamic)

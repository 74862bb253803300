"""``/init``'s fixed prompt: the model writes a starting ``CLAUDE.md`` for the project.

As in Claude Code, ``/init`` is an ordinary turn with a fixed prompt: the model explores the
project with its tools and writes ``CLAUDE.md`` with ``Write`` or ``Edit``, so the file goes
through the permission engine and the editor's review like any other edit. The wording is the
project's own, covering what Claude Code's ``/init`` asks for (commands, architecture, existing
instruction files, no invented content).
"""

from __future__ import annotations

INIT_PROMPT = """\
Please analyse this codebase and create a CLAUDE.md file in the project's root folder. It will \
be given to future coding-agent sessions working in this repository.

What to put in it:
1. The commands used most often: how to install, build, lint, type-check and run the tests, \
including how to run a single test.
2. The high-level architecture: the big picture that takes reading several files to \
understand (main packages and how they depend on each other, where requests or data flow).

Notes:
- If a CLAUDE.md already exists, read it and improve it rather than starting over.
- Keep it short. Do not repeat yourself, do not list every file, and do not add generic advice \
(write tests, handle errors) that is not specific to this project.
- Include the important parts of existing instruction files: README.md, AGENTS.md, \
.cursorrules, .cursor/rules/, .github/copilot-instructions.md.
- Do not make up anything you did not find in the project.
- Start the file with:

# CLAUDE.md

This file gives guidance to coding agents working with the code in this repository.
"""
"""The prompt ``/init`` sends to the model as the user's turn."""

"""The built-in slash commands: ``/compact``, ``/context``, ``/clear``, ``/cost``, ``/memory``,
``/rewind``, ``/init``.

Each acts on a :class:`~lsp_agent.sessions.manager.Session` and answers with Markdown text
shown in the chat; the model is not involved (except for ``/compact``'s summary request and
``/init``, whose fixed prompt runs as an ordinary turn).
Later features register more commands in the same registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_agent.context.commands import CommandOutcome, CommandRegistry, SlashCommand
from lsp_agent.context.memory.init import INIT_PROMPT
from lsp_agent.context.memory.listing import memory_listing
from lsp_agent.context.memory.open_choice import (
    chosen_file,
    open_choices,
    open_request,
    paths_section,
)
from lsp_agent.context.memory.render import render_memory
from lsp_agent.context.report import context_report, render_report
from lsp_agent.context.start import split_start
from lsp_agent.model.base import TokenCounter
from lsp_agent.model.pricing import cost_usd
from lsp_agent.model.types import ModelRequest
from lsp_agent.protocol.events import AgentMessageChunk, TextContent
from lsp_agent.protocol.host import DocumentShower
from lsp_agent.sessions.context_wiring import compact
from lsp_agent.sessions.memory_note import write_through_executor
from lsp_agent.sessions.rewind import command as rewind_command

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import Session


async def _rewind(session: Session, args: str) -> CommandOutcome:
    text, failed = await rewind_command(session, args)
    return CommandOutcome(text=text, is_error=failed)


async def _compact(session: Session, args: str) -> CommandOutcome:
    return await compact(session, args)


async def _context(session: Session, args: str) -> CommandOutcome:
    engine = session.engine()
    tools = tuple(t.spec() for t in session.tools)
    system = session.system_now()
    exact: int | None = None
    if isinstance(session.model, TokenCounter) and session.history:
        request = ModelRequest(
            model=session.config.model,
            system=system,
            messages=session.history,
            tools=tools,
            max_tokens=session.max_tokens,
        )
        try:
            exact = await session.model.count_tokens(request)
        except Exception:
            exact = None  # the estimate is still worth showing
    memory, messages = split_start(session.history)
    if memory is None and not messages and session.memory is not None:
        memory = render_memory(session.memory.load().files)  # what the first prompt opens with
    report = context_report(
        model=session.config.model,
        system=system,
        memory=[memory] if memory is not None else [],
        tools=tools,
        messages=messages,
        window=engine.window,
        threshold=engine.threshold(session.max_tokens),
        calibration=session.context.calibration,
        exact=exact,
    )
    text = render_report(report)
    if session.context.boundaries:
        text += f"\n\nCompacted {len(session.context.boundaries)} time(s) in this session."
    return CommandOutcome(text=text)


async def _clear(session: Session, args: str) -> CommandOutcome:
    await session.clear()
    return CommandOutcome(text="Conversation cleared. The next prompt starts a fresh context.")


async def _cost(session: Session, args: str) -> CommandOutcome:
    u = session.usage + session.context.summary_usage
    lines = [
        "**Tokens used in this session**",
        "",
        "| | Tokens |",
        "| --- | ---: |",
        f"| Input | {u.input_tokens:,} |",
        f"| Cache writes | {u.cache_creation_input_tokens:,} |",
        f"| Cache reads | {u.cache_read_input_tokens:,} |",
        f"| Output | {u.output_tokens:,} |",
        "",
        f"Estimated cost: ${cost_usd(session.config.model, u):.4f} "
        f"(list prices of {session.config.model}).",
    ]
    summary = session.context.summary_usage
    if summary.context_tokens or summary.output_tokens:
        lines.append("")
        lines.append(
            f"Of which compaction summaries: {summary.context_tokens:,} input, "
            f"{summary.output_tokens:,} output."
        )
    return CommandOutcome(text="\n".join(lines))


async def _memory(session: Session, args: str) -> CommandOutcome:
    if session.memory is None:
        return CommandOutcome(text="Project memory is off in this session.")
    loaded = session.memory.load()  # as it is now: edits and trust changes show at once
    home = session.memory.spec().home
    text = memory_listing(loaded, added=session.memory.added, cwd=session.cwd, home=home)
    files = (*loaded.files, *session.memory.added)
    host = session.host
    if not files or session.config.unattended is not None or not isinstance(host, DocumentShower):
        return CommandOutcome(text=text + paths_section(files))
    # The list first, then the question which file to open (Claude Code's /memory picker).
    session.tool_context().emit(AgentMessageChunk(content=TextContent(text=text)))
    choices = open_choices(files, cwd=session.cwd, home=home)
    request = open_request(session_id=session.id, choices=choices)
    chosen = chosen_file(await host.request_permission(request), choices)
    if chosen is None:
        return CommandOutcome(text="\n\nNo memory file opened.")
    if not chosen.exists:
        # Editors cannot show a file that does not exist: create it empty first, through the
        # permission engine and the edit review like any write.
        problem = await write_through_executor(session, chosen.path, lambda old: old)
        if problem is not None:
            return CommandOutcome(
                text=f"\n\nCould not create {chosen.path}: {problem}", is_error=True
            )
    problem = await host.show_document(chosen.path)
    if problem is not None:
        return CommandOutcome(text=f"\n\nCould not open {chosen.path}: {problem}", is_error=True)
    return CommandOutcome(text=f"\n\nOpened `{chosen.path}` in the editor.")


async def _init(session: Session, args: str) -> CommandOutcome:
    return CommandOutcome(text="", prompt=INIT_PROMPT)


def builtin_commands() -> CommandRegistry[Session]:
    """A registry holding the built-in commands (one per session; features add theirs)."""
    return CommandRegistry(
        [
            SlashCommand(
                name="compact",
                description="Summarise the conversation to free context",
                hint="optional focus for the summary",
                run=_compact,
            ),
            SlashCommand(
                name="context",
                description="Show how the context window is used",
                run=_context,
            ),
            SlashCommand(
                name="clear",
                description="Start a fresh conversation in this session",
                run=_clear,
            ),
            SlashCommand(
                name="cost",
                description="Show the tokens used in this session",
                run=_cost,
            ),
            SlashCommand(
                name="memory",
                description="List the memory files (CLAUDE.md, rules, imports) in effect",
                run=_memory,
            ),
            SlashCommand(
                name="rewind",
                description="Go back to before an earlier prompt: files, conversation or both",
                hint="[prompt id] [code|conversation|both]",
                run=_rewind,
            ),
            SlashCommand(
                name="init",
                description="Ask the model to write a CLAUDE.md for this project",
                run=_init,
            ),
        ]
    )

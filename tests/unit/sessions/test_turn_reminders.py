"""Reminders that reach the model mid-session without rewriting the cached prompt prefix: a
memory file changed during a turn (the agent edited its own CLAUDE.md) and a local date that
changed while the session ran. Real sessions, the real SDK and the real Write tool, against
the scripted Messages-API server; the clock is a parameter of the session manager."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.config.store import SettingsStore
from lsp_agent.context.dates import DATE_CHANGED
from lsp_agent.context.memory.changes import CHANGED_HEADER
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.sessions.session import Session
from lsp_agent.testing.scenario import ScriptedResponse, reply, scenario, text, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.workspace.disk_host import DiskHost

DAY_ONE = date(2026, 12, 1)
DAY_TWO = date(2026, 12, 2)
NOTICE = DATE_CHANGED.split("{date}")[0].splitlines()[-1]  # "The date has changed. …"


@dataclass
class Clock:
    """The local date the session sees; the test turns it."""

    day: date = DAY_ONE

    def __call__(self) -> date:
        return self.day


@dataclass
class Model:
    """Answers each request with the next of ``answers``; ``on_request[i]`` runs when request
    ``i`` arrives (before it is answered), e.g. to turn the clock mid-turn."""

    answers: list[ScriptedResponse]
    on_request: dict[int, Callable[[], None]] = field(default_factory=dict)
    bodies: list[Mapping[str, Any]] = field(default_factory=list)

    def __call__(self, body: Mapping[str, Any]) -> ScriptedResponse:
        index = len(self.bodies)
        self.bodies.append(body)
        if index in self.on_request:
            self.on_request[index]()
        return self.answers[index]


def answer(*blocks: Any) -> ScriptedResponse:
    response = reply(*blocks).response
    assert response is not None
    return response


def last_message(body: Mapping[str, Any]) -> str:
    return json.dumps(body["messages"][-1])


def prefix_kept(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether ``after`` starts with every message of ``before`` (cache markers aside) and
    has the same system prompt and tools."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    old, new = plain(before["messages"]), plain(after["messages"])
    return (
        plain(before["system"]) == plain(after["system"])
        and before["tools"] == after["tools"]
        and new[: len(old)] == old
    )


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    opened: list[tuple[SessionManager, ScriptedServer]] = []

    async def make(model: Model, clock: Clock) -> Session:
        server = ScriptedServer(scenario=scenario(), responder=model)
        await server.start()
        manager = SessionManager(
            host=DiskHost(),
            model_factory=lambda: AnthropicModel(
                api_key="k", base_url=server.base_url, max_retries=0
            ),
            config=AgentConfig(
                model="claude-test",
                permission_mode="acceptEdits",
                persist=False,
                state_dir=tmp_path / "state",
            ),
            settings=lambda cwd: SettingsStore(
                cwd=cwd, home=tmp_path / "home", managed_path=tmp_path / "none.json", trusted=True
            ),
            managed_memory=tmp_path / "no-managed" / "CLAUDE.md",
            today=clock,
        )
        opened.append((manager, server))
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        return manager.new(cwd=project)

    yield make
    for manager, server in opened:
        await manager.aclose()
        await server.stop()


async def ask(session: Session, words: str) -> None:
    result = await session.prompt([PromptText(text=words)])
    assert result.error is None, result.error
    assert result.stop_reason == "end_turn"


async def test_a_memory_file_the_agent_edits_arrives_before_the_next_request(
    start: Callable[..., Any], tmp_path: Path
) -> None:
    memory = tmp_path / "project" / "CLAUDE.md"
    memory.parent.mkdir()
    memory.write_text("Use tabs.\n")
    model = Model(
        answers=[
            answer(text("Looking."), tool_use("Read", {"file_path": str(memory)})),
            answer(
                text("Noting it."),
                tool_use(
                    "Edit",
                    {"file_path": str(memory), "old_string": "tabs", "new_string": "spaces"},
                ),
            ),
            answer("Noted."),
            answer(text("Reading."), tool_use("Read", {"file_path": str(memory)})),
            answer("Still spaces."),
        ]
    )
    session = await start(model, Clock())
    await ask(session, "Remember to use spaces from now on.")
    await ask(session, "What does the memory say?")
    assert memory.read_text() == "Use spaces.\n"
    first, after_look, after_write, second, after_read = model.bodies
    assert "Use tabs." in json.dumps(first["messages"][0]["content"][0])
    assert CHANGED_HEADER not in last_message(after_look)
    # Right after the batch that wrote it, before the model answers again: the new text,
    # after the tool's result, and the cached prefix as it was.
    tail = after_write["messages"][-1]["content"]
    assert tail[0]["type"] == "tool_result"
    assert CHANGED_HEADER in tail[-1]["text"] and "Use spaces." in tail[-1]["text"]
    assert prefix_kept(first, after_look) and prefix_kept(after_look, after_write)
    # Told once: neither the next prompt nor the next batch repeats it.
    assert CHANGED_HEADER not in last_message(second)
    assert CHANGED_HEADER not in last_message(after_read)
    assert prefix_kept(after_write, second) and prefix_kept(second, after_read)


async def test_a_new_local_date_is_a_reminder_and_the_system_prompt_stays(
    start: Callable[..., Any],
) -> None:
    clock = Clock()
    model = Model(
        answers=[
            answer("One."),
            answer("Two."),
            answer("Three."),
            answer(text("Checking."), tool_use("Glob", {"pattern": "*.md"})),
            answer("Four."),
        ]
    )
    session = await start(model, clock)
    await ask(session, "first")
    clock.day = DAY_TWO  # past midnight between two prompts
    await ask(session, "second")
    await ask(session, "third")
    # Past midnight again, while the model works on a turn: told after the tool batch.
    model.on_request[3] = lambda: setattr(clock, "day", date(2026, 12, 3))
    await ask(session, "fourth")
    one, two, three, tool_turn, after_tools = model.bodies
    system = json.dumps(one["system"])
    assert "Today's date: 2026-12-01" in system
    for body in model.bodies[1:]:
        assert json.dumps(body["system"]) == system  # the cached system prompt is untouched
    assert NOTICE not in json.dumps(one["messages"])
    assert "Today's date is now 2026-12-02." in last_message(two)
    assert NOTICE in two["messages"][-1]["content"][0]["text"]  # before the prompt's words
    assert NOTICE not in last_message(three)  # told once
    assert NOTICE not in last_message(tool_turn)
    tail = after_tools["messages"][-1]["content"]
    assert tail[0]["type"] == "tool_result"
    assert "Today's date is now 2026-12-03." in tail[-1]["text"]
    for before, after in zip(model.bodies, model.bodies[1:], strict=False):
        assert prefix_kept(before, after)


async def test_after_clear_a_date_other_than_the_system_prompts_is_told_again(
    start: Callable[..., Any],
) -> None:
    clock = Clock()
    model = Model(answers=[answer("One."), answer("Two."), answer("Three.")])
    session = await start(model, clock)
    await ask(session, "first")
    clock.day = DAY_TWO
    await ask(session, "second")
    await ask(session, "/clear")  # the reminder leaves with the conversation
    await ask(session, "third")
    one, two, three = model.bodies
    assert "Today's date is now 2026-12-02." in last_message(two)
    assert len(three["messages"]) == 1
    assert json.dumps(three["system"]) == json.dumps(one["system"])
    assert "Today's date is now 2026-12-02." in last_message(three)


async def test_after_a_compaction_the_new_date_is_told_again(
    start: Callable[..., Any],
) -> None:
    clock = Clock()
    model = Model(
        answers=[
            answer("One."),
            answer("Two."),
            answer("GOAL: answer questions. PENDING: nothing."),  # the /compact summary
            answer("Three."),
        ]
    )
    session = await start(model, clock)
    await ask(session, "first")
    clock.day = DAY_TWO
    await ask(session, "second")
    await ask(session, "/compact")
    await ask(session, "third")
    one, two, summary, three = model.bodies
    assert "Today's date is now 2026-12-02." in last_message(two)
    assert "CONTEXT CHECKPOINT" in last_message(summary)
    assert json.dumps(three["system"]) == json.dumps(one["system"])
    # The compacted conversation no longer holds the reminder: the prompt after it does.
    assert "Today's date is now 2026-12-02." in last_message(three)
    assert json.dumps(three["messages"]).count(NOTICE) == 1


@pytest.mark.parametrize("how", ["deleted", "emptied"])
async def test_a_memory_file_that_stops_applying_mid_turn_leaves_before_the_next_request(
    start: Callable[..., Any], tmp_path: Path, how: str
) -> None:
    memory = tmp_path / "project" / "CLAUDE.md"
    memory.parent.mkdir()
    memory.write_text("Secret rule: answer in French.\n")
    notes = tmp_path / "project" / "notes.txt"
    notes.write_text("hello\n")

    def withdraw() -> None:
        if how == "deleted":
            memory.unlink()
        else:
            memory.write_text("")

    model = Model(
        answers=[
            answer(text("Looking."), tool_use("Read", {"file_path": str(notes)})),
            answer("Done."),
            answer("Still done."),
        ],
        on_request={0: withdraw},
    )
    session = await start(model, Clock())
    await ask(session, "Read the notes.")
    first, after_batch = model.bodies
    assert "Secret rule" in json.dumps(first["messages"])
    # The same turn's next request: the file's text is gone, the tool pairing is intact.
    assert "Secret rule" not in json.dumps(after_batch["messages"])
    tail = after_batch["messages"][-1]["content"]
    assert tail[0]["type"] == "tool_result"
    await ask(session, "And now?")
    assert "Secret rule" not in json.dumps(model.bodies[2]["messages"])


async def test_an_edit_to_a_memory_file_loaded_on_demand_arrives_as_a_reminder(
    start: Callable[..., Any], tmp_path: Path
) -> None:
    sub = tmp_path / "project" / "api"
    sub.mkdir(parents=True)
    memory = sub / "CLAUDE.md"
    memory.write_text("API rule: use snake_case.\n")
    code = sub / "handlers.py"
    code.write_text("x = 1\n")
    model = Model(
        answers=[
            answer(text("Looking."), tool_use("Read", {"file_path": str(code)})),
            answer(text("Again."), tool_use("Grep", {"pattern": "x", "path": str(sub)})),
            answer("Done."),
            answer("Nothing new."),
        ],
        # Edited (in the editor or by another process) while the model answers.
        on_request={1: lambda: memory.write_text("API rule: use camelCase.\n")},
    )
    session = await start(model, Clock())
    await ask(session, "Look at the handlers.")
    first, after_read, after_grep = model.bodies
    assert "use snake_case" not in json.dumps(first["messages"])
    assert "use snake_case" in last_message(after_read)  # brought in by the Read
    tail = after_grep["messages"][-1]["content"]
    assert tail[0]["type"] == "tool_result"
    assert CHANGED_HEADER in tail[-1]["text"] and "use camelCase" in tail[-1]["text"]
    assert prefix_kept(after_read, after_grep)
    # Told once; the next prompt does not repeat it.
    await ask(session, "Anything else?")
    assert CHANGED_HEADER not in last_message(model.bodies[3])


@pytest.mark.parametrize("restart", ["/clear", "/compact"])
async def test_after_clear_or_compaction_a_folder_touched_before_brings_its_memory_back(
    start: Callable[..., Any], tmp_path: Path, restart: str
) -> None:
    sub = tmp_path / "project" / "api"
    sub.mkdir(parents=True)
    (sub / "CLAUDE.md").write_text("API rule: use snake_case.\n")
    code = sub / "handlers.py"
    code.write_text("x = 1\n")
    read = tool_use("Read", {"file_path": str(code)})
    answers = [answer(text("Looking."), read), answer("Done.")]
    if restart == "/compact":
        answers.append(answer("GOAL: look at the handlers. PENDING: nothing."))
    answers += [answer(text("Again."), read), answer("Done again.")]
    model = Model(answers=answers)
    session = await start(model, Clock())
    await ask(session, "Look at the handlers.")
    assert "use snake_case" in last_message(model.bodies[1])
    await ask(session, restart)
    await ask(session, "Look at them again.")
    before_read, after_read = model.bodies[-2:]
    assert "use snake_case" not in json.dumps(before_read["messages"])
    # The folder's CLAUDE.md arrives with the tool result again, as in a new conversation.
    assert "use snake_case" in last_message(after_read)
    assert [f.path for f in session.memory.added] == [sub / "CLAUDE.md"]


async def test_the_memory_is_checked_once_per_tool_batch(
    start: Callable[..., Any], tmp_path: Path
) -> None:
    # Each check reads the settings once (the spec) and stats the memory's files: a batch
    # used to check twice (its reminder step, then the step that takes out a dropped file).
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Project memory.\n")
    (project / "a.py").write_text("x = 1\n")
    read = {"file_path": str(project / "a.py")}
    batches = 4
    answers = [answer(tool_use("Read", read, id=f"r{i}")) for i in range(batches)]
    session: Session = await start(Model(answers=[*answers, answer(text("done"))]), Clock())
    memory = session.memory
    assert memory is not None
    checks: list[int] = []
    spec = memory.spec

    def counted() -> Any:
        checks.append(1)
        return spec()

    memory.spec = counted
    await ask(session, "read it a few times")
    at_start = 2  # the prompt's own memory block (load) and its first check
    assert len(checks) <= batches + at_start, len(checks)

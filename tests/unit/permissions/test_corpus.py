"""The decision corpus, and proof through the real executor that asked/denied calls never ran.

Every case is decided by the engine with its settings and mode (``test_decision``). Every case
expected as ask or deny is then run as a real tool call (real BashTool/EditTool/WriteTool/
ReadTool, the executor, a DiskHost whose prompts are declined) and must leave no trace: the
sentinel file is not created, the victim file is unchanged (``test_refused_call_has_no_effect``).
``test_sentinels_are_real`` runs the same Bash commands directly and shows they *do* have the
effect (create the sentinel, change the victim, or print the secret text), so the absence above
means something; a command whose output depends on the whole machine is run in its ``control``
form, narrowed to a process the test starts (and decided the same way). The benign corpus
must be allowed without asking.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.executor import ExecutorEnv, execute_tool_uses
from lsp_agent.model.types import ToolUseBlock
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.permissions.paths import resolve
from lsp_agent.permissions.policy import Policy
from lsp_agent.permissions.rules import RuleOrigin, parse_rule
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.registry import default_tools
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import read_text_file
from lsp_agent.workspace.workspace import Workspace
from tests.unit.permissions.conftest import VICTIM_TEXT, Layout
from tests.unit.permissions.corpus import BENIGN, CORPUS, Case

log = logging.getLogger(__name__)

FILE_TOOLS = {"Read": (True, "read"), "Edit": (False, "edit"), "Write": (False, "edit")}

SECRET_TEXT = "outside secret"
"""The content of the layout's outside file, and of ``CORPUS_SECRET_TOKEN`` (set below)."""


@pytest.fixture(autouse=True)
def secret_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret in the environment that commands inherit (as an API key would be)."""
    monkeypatch.setenv("CORPUS_SECRET_TOKEN", SECRET_TEXT)


def sentinel_for(layout: Layout, case: Case) -> Path:
    return layout.root / f"s-{CORPUS.index(case)}"


def filled_input(layout: Layout, case: Case) -> dict[str, Any]:
    sentinel = sentinel_for(layout, case)
    return {k: layout.fill(v, sentinel) if isinstance(v, str) else v for k, v in case.input.items()}


def engine_for(layout: Layout, case: Case) -> PermissionEngine:
    sentinel = sentinel_for(layout, case)
    project = RuleOrigin(
        source="project", settings_root=layout.root, cwd=layout.root, home=layout.home
    )
    managed = RuleOrigin(
        source="managed", settings_root=Path("/"), cwd=layout.root, home=layout.home
    )
    rules = [
        parse_rule(layout.fill(text, sentinel), behavior=behavior, origin=project)  # type: ignore[arg-type]
        for behavior, texts in (("allow", case.allow), ("ask", case.ask), ("deny", case.deny))
        for text in texts
    ]
    rules += [
        parse_rule(layout.fill(text, sentinel), behavior=behavior, origin=managed)  # type: ignore[arg-type]
        for behavior, text in case.managed
    ]
    policy = Policy(rules=tuple(rules), disable_bypass=case.disable_bypass, trusted=case.trusted)
    return PermissionEngine(
        mode=case.mode,  # type: ignore[arg-type]
        roots=(layout.root,),
        cwd=layout.root,
        home=layout.home,
        policy=lambda: policy,
        allowed_tools=tuple(layout.fill(t, sentinel) for t in case.cli_allow),
        disallowed_tools=tuple(layout.fill(t, sentinel) for t in case.cli_deny),
    )


def decide(layout: Layout, case: Case) -> Any:
    engine = engine_for(layout, case)
    raw = filled_input(layout, case)
    if case.tool in FILE_TOOLS:
        read_only, kind = FILE_TOOLS[case.tool]
        paths: tuple[Path, ...] = (resolve(Path(raw["file_path"])),)
    else:
        read_only, kind, paths = False, "execute" if case.tool == "Bash" else "other", ()
    return engine.decide(tool=case.tool, read_only=read_only, kind=kind, paths=paths, raw_input=raw)


def test_corpus_is_large_and_ids_are_unique() -> None:
    assert len(CORPUS) >= 300
    assert len({c.id for c in CORPUS}) == len(CORPUS)
    assert len(BENIGN) >= 150
    assert len(set(BENIGN)) == len(BENIGN)


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.id)
def test_decision(layout: Layout, case: Case) -> None:
    decision = decide(layout, case)
    assert decision.behavior == case.expect, decision
    assert case.reason.lower() in decision.reason.lower(), decision
    if case.source is not None:
        assert decision.source == case.source, decision
    if decision.rule is not None:
        assert decision.source is not None


REFUSED = [c for c in CORPUS if c.expect != "allow" and c.tool in ("Bash", "Edit", "Write", "Read")]


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.id)
async def test_refused_call_has_no_effect(layout: Layout, case: Case) -> None:
    sentinel = sentinel_for(layout, case)
    victim = layout.root / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    raw = filled_input(layout, case)
    target = Path(raw["file_path"]) if "file_path" in raw else None
    existed = target.exists() if target is not None else False
    requests: list[PermissionRequest] = []

    async def decline(request: PermissionRequest) -> PermissionResponse:
        requests.append(request)
        return PermissionResponse(outcome="selected", option_id="reject_once")

    host = DiskHost(permission_handler=decline)
    engine = engine_for(layout, case)
    state = ReadState()
    if case.tool == "Edit":
        state.digests[resolve(victim)] = read_text_file(victim).digest
    env = ExecutorEnv(
        tools=default_tools(),
        permissions=engine,
        ctx=ToolContext(
            session_id="corpus",
            cwd=layout.root,
            roots=(layout.root,),
            workspace=Workspace(host=host, roots=(layout.root,)),
            read_state=state,
        ),
    )
    (result,) = await execute_tool_uses(
        [ToolUseBlock(id="t1", name=case.tool, input=raw)], env=env, results={}
    )
    try:
        assert result.is_error, result.content
        if case.expect == "ask":
            assert len(requests) == 1
            assert requests[0].reason
        else:
            assert requests == []
            assert "Permission denied" in str(result.content)
        assert not sentinel.exists(), "the refused call ran"
        assert victim.read_text() == VICTIM_TEXT, "the refused call changed the victim"
        if target is not None and not existed:
            assert not target.exists(), "the refused call created its file"
        assert SECRET_TEXT not in str(result.content), "the refused call leaked the secret"
    finally:
        victim.write_text(VICTIM_TEXT)
        sentinel.unlink(missing_ok=True)


EFFECTFUL_BASH = [c for c in REFUSED if c.tool == "Bash" and c.effect != "none"]


@pytest.mark.parametrize("case", EFFECTFUL_BASH, ids=lambda c: c.id)
async def test_sentinels_are_real(layout: Layout, case: Case) -> None:
    """The same commands, run without the gate, do create the sentinel, change the victim or
    print the secret."""
    from lsp_agent.tools.bash import BashInput, BashTool

    sentinel = sentinel_for(layout, case)
    victim = layout.root / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    tool = BashTool()
    host = DiskHost()
    ctx = ToolContext(
        session_id="control",
        cwd=layout.root,
        roots=(layout.root,),
        workspace=Workspace(host=host, roots=(layout.root,)),
        read_state=ReadState(),
    )
    command = filled_input(layout, case)["command"]
    witness = None
    if case.control is not None:
        witness = subprocess.Popen(  # inherits CORPUS_SECRET_TOKEN, like any child would
            [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
        )
        command = layout.fill(case.control.replace("{P}", str(witness.pid)), sentinel)
        control = engine_for(layout, case).decide(
            tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": command}
        )
        assert (control.behavior, case.reason in control.reason) == (case.expect, True), control
    inp = BashInput(command=command, timeout=20_000)
    try:
        output = await tool.call(inp, await tool.prepare(inp, ctx), ctx)
        if case.effect == "sentinel":
            assert sentinel.exists(), f"{case.id}: the command does not create the sentinel"
        elif case.effect == "leak":
            assert SECRET_TEXT in output.text, f"{case.id}: the command does not leak: {output}"
        else:
            assert not victim.exists() or victim.read_text() != VICTIM_TEXT
    finally:
        if witness is not None:
            witness.kill()
            witness.communicate()
        sentinel.unlink(missing_ok=True)
        victim.write_text(VICTIM_TEXT)
        for junk in ("nohup.out", "victim.txt.bak"):
            (layout.root / junk).unlink(missing_ok=True)


ALLOWED = [c for c in CORPUS if c.expect == "allow" and c.tool in ("Bash", "Read", "Write", "Edit")]


@pytest.mark.parametrize("case", ALLOWED, ids=lambda c: c.id)
async def test_allowed_call_runs_without_asking(layout: Layout, case: Case) -> None:
    requests: list[PermissionRequest] = []

    async def record(request: PermissionRequest) -> PermissionResponse:
        requests.append(request)
        return PermissionResponse(outcome="selected", option_id="reject_once")

    host = DiskHost(permission_handler=record)
    victim = layout.root / "victim.txt"
    state = ReadState()
    if case.tool == "Edit":
        state.digests[resolve(victim)] = read_text_file(victim).digest
    env = ExecutorEnv(
        tools=default_tools(),
        permissions=engine_for(layout, case),
        ctx=ToolContext(
            session_id="corpus",
            cwd=layout.root,
            roots=(layout.root,),
            workspace=Workspace(host=host, roots=(layout.root,)),
            read_state=state,
        ),
    )
    raw = filled_input(layout, case)
    try:
        (result,) = await execute_tool_uses(
            [ToolUseBlock(id="t1", name=case.tool, input=raw)], env=env, results={}
        )
        assert requests == []
        assert "Permission denied" not in str(result.content)
    finally:
        victim.write_text(VICTIM_TEXT)
        sentinel_for(layout, case).unlink(missing_ok=True)
        if "file_path" in raw and case.tool == "Write":
            Path(raw["file_path"]).unlink(missing_ok=True)


def test_benign_commands_are_allowed_without_asking(layout: Layout) -> None:
    engine = PermissionEngine(
        mode="default",
        roots=(layout.root,),
        cwd=layout.root,
        home=layout.home,
        policy=lambda: Policy(trusted=True),
    )
    asked = []
    for command in BENIGN:
        decision = engine.decide(
            tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": command}
        )
        if decision.behavior != "allow":
            asked.append((command, decision.reason))
    rate = len(asked) / len(BENIGN)
    log.warning("benign corpus: %d commands, false-ask rate %.1f%%", len(BENIGN), 100 * rate)
    assert asked == []

"""The headless host: the disk for files, a sink for updates, and nobody to say yes."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.headless.host import HEADLESS_REJECTION, HeadlessHost, refuse_unattended
from lsp_agent.headless.runner import api_key_source, max_retries_from
from lsp_agent.protocol.documents import FileChange
from lsp_agent.protocol.events import SessionUpdate, ToolCall, ToolKind
from lsp_agent.protocol.permissions import DEFAULT_OPTIONS, PermissionRequest
from lsp_agent.workspace.disk_host import DiskHost


async def test_permission_requests_are_rejected_with_advice() -> None:
    host = HeadlessHost(inner=DiskHost(), on_update=lambda _s, _u: None)
    answer = await host.request_permission(
        PermissionRequest(tool_call=ToolCall(tool_call_id="t", title="Edit a.py"))
    )
    assert answer.kind() == "reject_once"
    assert answer.feedback == HEADLESS_REJECTION
    assert "--permission-mode" in HEADLESS_REJECTION
    assert host.permission_requests == 1


def _ask(
    kind: ToolKind, rules: tuple[str, ...], *, reason: str = "x", rule_helps: bool = True
) -> PermissionRequest:
    options = tuple(o for o in DEFAULT_OPTIONS if rule_helps or o.kind != "allow_always")
    return PermissionRequest(
        tool_call=ToolCall(tool_call_id="t", title="t", kind=kind),
        options=options,
        reason=reason,
        source="default",
        suggested_rules=rules,
    )


def test_the_unattended_refusal_names_the_rules_that_would_allow_the_call() -> None:
    def advice(request: PermissionRequest) -> str:
        return refuse_unattended("Tool", request).reason.split("non-interactive run. ")[1]

    edit = _ask("edit", ("Edit(//p/a b.py)",), reason="Edit changes files")
    assert advice(edit) == (
        "Allow it with --allowedTools 'Edit(//p/a b.py)' or --permission-mode acceptEdits"
    )
    assert advice(_ask("execute", ("Bash(make:*)", "Bash(rm x)"))) == (
        "Allow it with --allowedTools 'Bash(make:*)' 'Bash(rm x)'"
    )
    # An ask rule (or a protected path) asked: an allow rule would not help, so none is named.
    assert advice(_ask("edit", ("Edit(//p/a.py)",), rule_helps=False)) == (
        "Allow it with --allowedTools or --permission-mode"
    )
    assert advice(_ask("execute", ())) == "Allow it with --allowedTools or --permission-mode"
    broken = _ask(
        "edit",
        ("Edit(//p/a.py)",),
        reason="s.json has errors, so every change asks until it is fixed",
    )
    assert advice(broken) == "No flag can allow it: the settings file must be fixed first"


async def test_files_go_to_disk_and_updates_to_the_sink(tmp_path: Path) -> None:
    seen: list[tuple[str, SessionUpdate]] = []
    host = HeadlessHost(inner=DiskHost(), on_update=lambda s, u: seen.append((s, u)))
    target = tmp_path / "new.py"
    assert host.buffer(target) is None
    result = await host.apply_changes(
        [FileChange(path=target, base=None, new_text="x = 1\n")], label="Write"
    )
    assert result.applied, result.failure
    assert target.read_text() == "x = 1\n"
    update = ToolCall(tool_call_id="t", title="Write")
    host.emit("s1", update)
    assert seen == [("s1", update)]


def test_max_retries_from_environment() -> None:
    assert max_retries_from({}) == 4
    assert max_retries_from({"LSP_AGENT_MAX_RETRIES": "0"}) == 0
    with pytest.raises(ValueError, match="LSP_AGENT_MAX_RETRIES"):
        max_retries_from({"LSP_AGENT_MAX_RETRIES": "-1"})


def test_api_key_source_never_shows_the_key() -> None:
    assert api_key_source({"ANTHROPIC_API_KEY": "sk-secret"}) == "ANTHROPIC_API_KEY"
    assert api_key_source({"ANTHROPIC_AUTH_TOKEN": "t"}) == "ANTHROPIC_AUTH_TOKEN"
    assert api_key_source({}) == "none"

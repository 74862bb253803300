"""Settings files and hooks through the LSP door: problems become diagnostics on the exact
range of the settings file (in the negotiated encoding) and are cleared when fixed; a broken
file never widens permissions; an untrusted workspace runs no project hooks while a trusted
one does; the editor's settings layer (``didChangeConfiguration``) takes effect at once; the
permission request names the rule and source that asked."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import VSCODE_ONLY, WAIT_S, Editor, Launch

# A syntax error after a non-BMP character, so the column differs per encoding.
BROKEN = (
    "{\n"
    '  "model": "\U0001f600", "permissions": {"allow": ["Bash(touch:*)"] '
    '"defaultMode": "bypassPermissions"}\n'
    "}\n"
)


def _root(tmp_path: Path) -> Path:
    """The workspace folder the ``launch`` fixture opens."""
    return tmp_path / "my ws é"


def _write_settings(root: Path, value: dict[str, Any] | str, name: str = "settings.json") -> Path:
    folder = root / ".claude"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2))
    return path


def _column(line: str, index: int, encoding: str) -> int:
    prefix = line[:index]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le")) // 2
    return len(prefix)


async def _diagnostics(
    editor: Editor, path: Path, *, empty: bool = False
) -> Sequence[types.Diagnostic]:
    """The diagnostics published for ``path`` once some (or, with ``empty``, none) are shown."""
    uri = path.as_uri()

    async def poll() -> Sequence[types.Diagnostic]:
        while True:
            found = editor.client.diagnostics.get(uri)
            if found is not None and (not found) == empty:
                return found
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(poll(), WAIT_S)


async def _message(editor: Editor, needle: str) -> types.ShowMessageParams:
    async def poll() -> types.ShowMessageParams:
        while True:
            for message in editor.client.messages:
                if needle in message.message:
                    return message
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(poll(), WAIT_S)


def _touch(name: str) -> Any:
    return scenario(
        reply(tool_use("Bash", {"command": f"touch {name}"}, id="toolu_1")),
        reply("done"),
    )


async def test_a_broken_settings_file_is_a_diagnostic_on_its_exact_range_and_never_widens(
    launch: Launch, tmp_path: Path
) -> None:
    settings = _write_settings(_root(tmp_path), BROKEN)
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": "touch widened.txt"}, id="toolu_1")),
            reply("ok", expect=expecting(tool_results=[ToolResultExpect(is_error=True)])),
        ),
        init_options={"trusted": True},
    )
    found = await _diagnostics(editor, settings)
    errors = [d for d in found if d.severity == types.DiagnosticSeverity.Error]
    (error,) = errors
    line = BROKEN.splitlines()[1]
    index = line.index('"defaultMode"')
    start = _column(line, index, editor.encoding)
    assert error.range == types.Range(
        start=types.Position(line=1, character=start),
        end=types.Position(line=1, character=start + 1),
    )
    assert "invalid JSON" in error.message
    assert error.source == "lsp-agent"
    # The user may never open the file: one message says it is broken, where and what then.
    notice = await _message(editor, "has errors")
    assert notice.message.startswith(f"lsp-agent: {settings} has errors: 2:")
    assert "invalid JSON" in notice.message and "ask before every change" in notice.message

    # Neither the allow rule nor bypassPermissions of the broken file applies: bypass is not
    # even offered, and the command asks (and is refused here).
    editor.permission = lambda _p: {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
    result = await editor.request(methods.SESSION_NEW, {})
    modes = [m["id"] for m in result["modes"]["availableModes"]]
    assert "bypassPermissions" not in modes
    assert result["modes"]["currentModeId"] == "default"
    session_id = result["sessionId"]
    await editor.prompt(session_id, "make a file")
    editor.scripted.assert_done()
    assert len(editor.permission_requests) == 1
    assert not (editor.root / "widened.txt").exists()
    try:
        await editor.request(
            methods.SESSION_SET_MODE, {"sessionId": session_id, "modeId": "bypassPermissions"}
        )
    except Exception as exc:
        assert "not available" in str(exc)
    else:
        raise AssertionError("setMode bypassPermissions was accepted with a broken settings file")


@VSCODE_ONLY
async def test_a_dont_ask_default_mode_denies_without_asking(
    launch: Launch, tmp_path: Path
) -> None:
    _write_settings(_root(tmp_path), {"permissions": {"defaultMode": "dontAsk"}})
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": "touch asked.txt"}, id="toolu_1")),
            reply(
                "ok",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="dontAsk mode")]
                ),
            ),
        ),
        init_options={"trusted": True},
    )
    result = await editor.request(methods.SESSION_NEW, {})
    assert result["modes"]["currentModeId"] == "dontAsk"
    assert "dontAsk" in [m["id"] for m in result["modes"]["availableModes"]]
    await editor.prompt(result["sessionId"], "make a file")
    editor.scripted.assert_done()
    assert editor.permission_requests == []
    assert not (editor.root / "asked.txt").exists()


@VSCODE_ONLY
async def test_fixing_the_file_clears_its_diagnostics(launch: Launch, tmp_path: Path) -> None:
    settings = _write_settings(_root(tmp_path), BROKEN)
    editor = await launch(scenario(), init_options={"trusted": True})
    await _diagnostics(editor, settings)
    uri = settings.as_uri()
    for attempt in range(int(WAIT_S / 0.5)):
        # The watcher arms in the background after initialize: write until it notices.
        fixed = {"permissions": {"allow": ["Bash(touch:*)"]}, "env": {"N": str(attempt)}}
        settings.write_text(json.dumps(fixed))
        await asyncio.sleep(0.5)
        if not editor.client.diagnostics.get(uri):
            break
    assert list(await _diagnostics(editor, settings, empty=True)) == []


@VSCODE_ONLY
async def test_a_malformed_rule_is_reported_on_its_range_and_ignored(
    launch: Launch, tmp_path: Path
) -> None:
    text = '{"permissions": {"allow": ["Bash(touch:*)", "Bash(unclosed"]}}\n'
    settings = _write_settings(_root(tmp_path), text)
    editor = await launch(_touch("ok.txt"), init_options={"trusted": True})
    found = await _diagnostics(editor, settings)
    (problem,) = found
    start = text.index('"Bash(unclosed"')
    assert problem.range.start == types.Position(line=0, character=start)
    assert problem.range.end == types.Position(line=0, character=start + len('"Bash(unclosed"'))
    assert "Bash(unclosed" in problem.message
    # The well-formed rule still applies: no prompt.
    await editor.prompt(await editor.new_session(), "touch")
    editor.scripted.assert_done()
    assert editor.permission_requests == []
    assert (editor.root / "ok.txt").exists()


def _sentinel_hook(root: Path, sentinel: Path) -> dict[str, Any]:
    script = root.parent / "hook.py"
    script.write_text(f"open({str(sentinel)!r}, 'w').write('ran')\n")
    command = f"{sys.executable} {script}"
    return {
        "permissions": {"allow": ["Bash(touch:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]
        },
    }


async def test_an_untrusted_workspace_ignores_project_hooks_and_says_so(
    launch: Launch, tmp_path: Path
) -> None:
    root = _root(tmp_path)
    sentinel = tmp_path / "hook-ran"
    settings = _write_settings(root, _sentinel_hook(root, sentinel))
    editor = await launch(_touch("made.txt"))  # trusted defaults to false
    notice = await _message(editor, "untrusted workspace")
    assert notice.type == types.MessageType.Warning
    (info,) = await _diagnostics(editor, settings)
    assert info.severity == types.DiagnosticSeverity.Information
    await editor.prompt(await editor.new_session(), "make a file")
    editor.scripted.assert_done()
    assert not sentinel.exists()
    # The project's allow rule is ignored too: the command asked.
    assert len(editor.permission_requests) == 1
    assert sum("untrusted workspace" in m.message for m in editor.client.messages) == 1


async def test_a_trusted_workspace_runs_project_hooks(launch: Launch, tmp_path: Path) -> None:
    root = _root(tmp_path)
    sentinel = tmp_path / "hook-ran"
    _write_settings(root, _sentinel_hook(root, sentinel))
    editor = await launch(_touch("made.txt"), init_options={"trusted": True})
    await editor.prompt(await editor.new_session(), "make a file")
    editor.scripted.assert_done()
    assert sentinel.read_text() == "ran"
    assert editor.permission_requests == []
    assert (editor.root / "made.txt").exists()
    assert not any("untrusted" in m.message for m in editor.client.messages)


@VSCODE_ONLY
async def test_editor_settings_from_initialize_and_did_change_configuration(
    launch: Launch,
) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": "touch one.txt"}, id="toolu_1")),
            reply(
                "first",
                expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
            ),
            reply(tool_use("Bash", {"command": "touch two.txt"}, id="toolu_2")),
            reply(
                "second",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="Bash(touch:*)")]
                ),
            ),
        ),
        init_options={"settings": {"permissions": {"allow": ["Bash(touch:*)"]}}},
    )
    session_id = await editor.new_session()
    await editor.prompt(session_id, "one")
    assert (editor.root / "one.txt").exists()
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"lspAgent": {"settings": {"permissions": {"deny": ["Bash(touch:*)", 7]}}}}
        )
    )
    # The malformed entry is reported (the editor's settings have no file: a message).
    await _message(editor, "editor settings")
    await editor.prompt(session_id, "two")
    editor.scripted.assert_done()
    assert not (editor.root / "two.txt").exists()
    assert editor.permission_requests == []


@VSCODE_ONLY
async def test_the_permission_request_names_rule_source_suggestions_and_scopes(
    launch: Launch, tmp_path: Path
) -> None:
    _write_settings(_root(tmp_path), {"permissions": {"ask": ["Bash(touch:*)"]}})
    editor = await launch(_touch("asked.txt"), init_options={"trusted": True})
    await editor.prompt(await editor.new_session(), "make a file")
    editor.scripted.assert_done()
    (request,) = editor.permission_requests
    assert request["rule"] == "Bash(touch:*)"
    assert request["source"] == "project"
    assert request["suggestedRules"] == ["Bash(touch asked.txt)"]
    assert request["scopes"] == ["session", "project", "user"]
    # An ask rule cannot be turned into an allow: no "always allow" option.
    assert "allow_always" not in {o["kind"] for o in request["options"]}


@VSCODE_ONLY
async def test_allow_always_for_the_user_is_saved_in_the_home_settings(
    launch: Launch, tmp_path: Path
) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": "touch u.txt"}, id="toolu_1")),
            reply("done", expect=expecting(tool_results=[ToolResultExpect(is_error=False)])),
        )
    )
    editor.permission = lambda _p: {
        "outcome": {"outcome": "selected", "optionId": "allow_always", "scope": "user"}
    }
    await editor.prompt(await editor.new_session(), "make a file")
    editor.scripted.assert_done()
    saved = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(touch u.txt)"]
    assert not (editor.root / ".claude").exists()


@VSCODE_ONLY
async def test_session_hooks_run_at_session_new_and_at_shutdown(
    launch: Launch, tmp_path: Path
) -> None:
    root = _root(tmp_path)
    log = tmp_path / "events.log"
    script = tmp_path / "record.py"
    script.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(event['hook_event_name'] + '\\n')\n"
    )
    command = f"{sys.executable} {script}"
    hook = [{"hooks": [{"type": "command", "command": command}]}]
    _write_settings(root, {"hooks": {"SessionStart": hook, "SessionEnd": hook}})
    editor = await launch(scenario(), init_options={"trusted": True})
    await editor.new_session()

    async def logged(count: int) -> list[str]:
        while not log.exists() or len(log.read_text().split()) < count:
            await asyncio.sleep(0.02)
        return log.read_text().split()

    assert await asyncio.wait_for(logged(1), WAIT_S) == ["SessionStart"]
    await asyncio.wait_for(editor.client.shutdown_session(), WAIT_S)  # shutdown + exit
    editor.client.capabilities = None  # already shut down: the fixture's teardown skips it
    assert log.read_text().split() == ["SessionStart", "SessionEnd"]

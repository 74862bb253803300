"""Settings: layering, exact problem ranges, fallbacks that never widen, trust, persistence,
watching, and LSP-shaped diagnostics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lsp_agent.config.diagnostics import problems_to_diagnostics
from lsp_agent.config.jsonpos import parse_document, parse_json, position
from lsp_agent.config.loader import managed_settings_path
from lsp_agent.config.persist import add_permission_rules
from lsp_agent.config.store import SettingsStore
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.protocol.permissions import PermissionMode


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.cwd = (tmp_path / "proj").resolve()
        self.home = (tmp_path / "home").resolve()
        self.managed = (tmp_path / "etc" / "managed-settings.json").resolve()
        for d in (self.cwd / ".claude", self.home / ".claude", self.managed.parent):
            d.mkdir(parents=True, exist_ok=True)

    @property
    def project(self) -> Path:
        return self.cwd / ".claude" / "settings.json"

    @property
    def local(self) -> Path:
        return self.cwd / ".claude" / "settings.local.json"

    @property
    def user(self) -> Path:
        return self.home / ".claude" / "settings.json"

    def store(self, **kw: object) -> SettingsStore:
        kw.setdefault("trusted", True)
        return SettingsStore(cwd=self.cwd, home=self.home, managed_path=self.managed, **kw)  # type: ignore[arg-type]

    def engine(self, store: SettingsStore, mode: PermissionMode = "default") -> PermissionEngine:
        return PermissionEngine(
            mode=mode, roots=(self.cwd,), home=self.home, policy=store.policy, persist=store.persist
        )


def write(path: Path, value: object) -> None:
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2))


def bash(engine: PermissionEngine, command: str) -> str:
    return engine.decide(
        tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": command}
    ).behavior


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def test_layers_merge_with_deny_over_ask_over_allow_and_record_sources(env: Env) -> None:
    write(env.user, {"permissions": {"allow": ["Bash(make:*)", "Bash(npm test)"]}})
    write(
        env.project,
        {"permissions": {"deny": ["Bash(make deploy:*)"], "defaultMode": "acceptEdits"}},
    )
    write(env.local, {"permissions": {"ask": ["Bash(npm test)"], "defaultMode": "plan"}})
    write(env.managed, {"permissions": {"ask": ["Bash(make release:*)"]}})
    store = env.store()
    assert store.loaded.problems == ()
    e = env.engine(store)
    assert bash(e, "make build") == "allow"
    d = e.decide(
        tool="Bash",
        read_only=False,
        kind="execute",
        paths=(),
        raw_input={"command": "make deploy x"},
    )
    assert (d.behavior, d.source, d.rule) == ("deny", "project", "Bash(make deploy:*)")
    d = e.decide(
        tool="Bash",
        read_only=False,
        kind="execute",
        paths=(),
        raw_input={"command": "make release"},
    )
    assert (d.behavior, d.source) == ("ask", "managed")
    assert bash(e, "npm test") == "ask"
    assert store.loaded.default_mode() == "plan"  # local beats project
    write(env.managed, {"permissions": {"defaultMode": "default"}})
    assert store.reload().default_mode() == "default"  # managed beats everything


def test_malformed_json_is_reported_at_its_position_and_falls_back_to_asking(env: Env) -> None:
    write(env.project, '{\n  "permissions": {\n    "allow": ["Bash(make)",]\n  }\n}\n')
    store = env.store()
    (problem, note) = [p for p in store.loaded.problems if p.path == env.project]
    assert problem.severity == "error" and "invalid JSON" in problem.message
    assert problem.start == (2, len('    "allow": ["Bash(make)",'))
    assert "asking before every change" in note.message
    e = env.engine(store)
    assert bash(e, "make") == "ask"
    # Even bypassPermissions is off while a file is broken.
    assert env.engine(store, mode="bypassPermissions").effective_mode() == "default"


def test_a_broken_file_keeps_its_last_good_version(env: Env) -> None:
    write(env.project, {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(make)"]}})
    store = env.store()
    e = env.engine(store)
    assert bash(e, "rm -rf x") == "deny"
    write(env.project, '{"permissions": {"deny": [')
    loaded = store.reload()
    assert any("last valid version" in p.message for p in loaded.problems)
    assert bash(e, "rm -rf x") == "deny"
    assert bash(e, "make") == "allow"
    write(env.project, {"permissions": {}})
    store.reload()
    assert bash(e, "rm -rf x") == "ask"


def test_bad_allow_rules_are_ignored_with_a_diagnostic_on_their_exact_range(env: Env) -> None:
    text = (
        '{"permissions": {"allow": ["Bash(make)", "Bash(npm test", "Foo(bar)", 7, "bash", '
        '"Frobnicate", "Bash(ls:*)) "]}}'
    )
    write(env.project, text)
    store = env.store()
    problems = [p for p in store.loaded.problems if p.path == env.project]
    messages = [p.message for p in problems]
    assert any("Bash(npm test" in m and "ignored" in m for m in messages)
    assert any("Foo(bar)" in m for m in messages)
    assert any("must be a string" in m for m in messages)
    case = next(p for p in problems if "case-sensitive" in p.message)
    assert case.severity == "error" and "did you mean Bash" in case.message
    warning = next(p for p in problems if "not a known tool" in p.message)
    assert warning.severity == "warning" and "Frobnicate" in warning.message
    junk = next(p for p in problems if "unbalanced" in p.message)
    start = text.index('"Bash(ls:*)) "')
    assert junk.start == (0, start) and junk.end == (0, start + len('"Bash(ls:*)) "'))
    bad = next(p for p in problems if "Bash(npm test" in p.message)
    start = text.index('"Bash(npm test"')
    assert bad.start == (0, start) and bad.end == (0, start + len('"Bash(npm test"'))
    # A bad allow entry only loses a permission: the file is not degraded.
    assert not any("asking before every change" in m for m in messages)
    e = env.engine(store)
    assert bash(e, "make") == "allow"
    assert bash(e, "npm test") == "ask"
    assert env.engine(store, mode="bypassPermissions").effective_mode() == "bypassPermissions"


BAD_RESTRICTING_ENTRIES = [
    '"Bash(rm:*"',
    '"bash(rm:*)"',
    '["Bash(rm:*)"]',
    '"Bash(rm:*)) "',
    "null",
    '{"rule": "Bash(rm:*)"}',
    '"Bash(rm:*)) Bash(curl:*)"',
]


@pytest.mark.parametrize("behavior", ["deny", "ask"])
@pytest.mark.parametrize("entry", BAD_RESTRICTING_ENTRIES)
def test_a_bad_deny_or_ask_entry_fails_closed_and_is_reported_on_its_range(
    env: Env, entry: str, behavior: str
) -> None:
    text = '{"permissions": {"allow": ["Bash"], "B": ["Bash(curl:*)", E]}}'
    text = text.replace('"B"', f'"{behavior}"').replace("E]", f"{entry}]")
    write(env.user, text)
    store = env.store()
    problems = [p for p in store.loaded.problems if p.path == env.user]
    error = next(p for p in problems if p.severity == "error")
    start = text.index(entry, text.index(f'"{behavior}"'))
    assert (error.start, error.end) == ((0, start), (0, start + len(entry))), error
    assert "fail closed" in error.message
    assert any("asking before every change" in p.message for p in problems)
    for mode in ("default", "bypassPermissions"):
        e = env.engine(store, mode=mode)
        assert e.effective_mode() == "default"
        assert bash(e, "rm victim.txt") == "ask"
        # The file's readable restrictions stay in force; its allow rule does not apply.
        assert bash(e, "curl x") == ("deny" if behavior == "deny" else "ask")
        inside = e.roots[0] / "README.md"
        read = e.decide(tool="Read", read_only=True, kind="read", paths=(inside,), raw_input={})
        assert read.behavior == "allow"


async def test_a_broken_deny_rule_never_lets_the_command_run(env: Env) -> None:
    """Real tool calls through the executor: with a malformed deny entry and ``allow: ["Bash"]``
    (or bypassPermissions) the victim survives; with the file fixed to allow it, it does not
    (so the survival means something)."""
    from lsp_agent.agent.executor import ExecutorEnv, execute_tool_uses
    from lsp_agent.model.types import ToolUseBlock
    from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
    from lsp_agent.tools.base import ReadState, ToolContext
    from lsp_agent.tools.registry import default_tools
    from lsp_agent.workspace.disk_host import DiskHost
    from lsp_agent.workspace.workspace import Workspace

    async def decline(request: PermissionRequest) -> PermissionResponse:
        return PermissionResponse(outcome="selected", option_id="reject_once")

    victim = env.cwd / "victim.txt"

    async def run_rm(store: SettingsStore, mode: PermissionMode) -> bool:
        victim.write_text("precious\n")
        host = DiskHost(permission_handler=decline)
        executor_env = ExecutorEnv(
            tools=default_tools(),
            permissions=env.engine(store, mode=mode),
            ctx=ToolContext(
                session_id="s",
                cwd=env.cwd,
                roots=(env.cwd,),
                workspace=Workspace(host=host, roots=(env.cwd,)),
                read_state=ReadState(),
            ),
        )
        await execute_tool_uses(
            [ToolUseBlock(id="t", name="Bash", input={"command": "rm victim.txt"})],
            env=executor_env,
            results={},
        )
        return victim.exists()

    for entry in BAD_RESTRICTING_ENTRIES[:4]:
        write(env.user, '{"permissions": {"allow": ["Bash"], "deny": [E]}}'.replace("E", entry))
        assert await run_rm(env.store(), "default"), entry
        write(env.user, '{"permissions": {"deny": [E]}}'.replace("E", entry))
        assert await run_rm(env.store(), "bypassPermissions"), entry
    write(env.user, {"permissions": {"allow": ["Bash"]}})
    assert not await run_rm(env.store(), "default")


def test_a_broken_deny_entry_keeps_the_last_good_restrictions_only(env: Env) -> None:
    write(env.project, {"permissions": {"deny": ["Bash(git push:*)"], "allow": ["Bash(make)"]}})
    store = env.store()
    e = env.engine(store)
    assert bash(e, "make") == "allow"
    write(env.project, {"permissions": {"deny": ["Bash(rm:*"], "allow": ["Bash(make)"]}})
    store.reload()
    assert bash(e, "git push origin main") == "deny"  # from the last good version
    assert bash(e, "make") == "ask"  # grants of a broken file do not apply
    assert env.engine(store, mode="bypassPermissions").effective_mode() == "default"


def test_duplicate_keys_are_errors_and_fail_closed(env: Env) -> None:
    text = '{"permissions": {"deny": ["Bash(rm:*)"]},\n "permissions": {"allow": ["Bash"]}}'
    write(env.project, text)
    store = env.store()
    (error,) = [p for p in store.loaded.problems if p.severity == "error"]
    start = text.rindex('"permissions"')
    assert error.start == (1, 1) and error.end == (1, 1 + len('"permissions"'))
    assert text.index('"permissions"') < start and "line 1" in error.message
    assert "duplicate key 'permissions'" in error.message
    e = env.engine(store, mode="bypassPermissions")
    assert e.effective_mode() == "default"
    assert bash(e, "rm -rf x") == "ask"
    nested = '{"permissions": {"deny": ["Bash(rm:*)"], "deny": []}}'
    write(env.project, nested)
    (error,) = [p for p in store.reload().problems if p.severity == "error"]
    assert error.start == (0, nested.rindex('"deny"'))
    assert bash(env.engine(store), "rm -rf x") == "ask"


@pytest.mark.parametrize(
    ("text", "fails_closed"),
    [
        ('{"permissions": {"deny": null}}', True),
        ('{"permissions": {"ask": null}}', True),
        ('{"permissions": null}', True),
        ('{"permissions": {"Deny": ["Bash(rm:*)"]}}', True),
        ('{"Permissions": {"deny": ["Bash(rm:*)"]}}', True),
        ('{"permissions": {"allow": null}}', False),
        ('{"permissions": {"Allow": ["Bash"]}}', False),
    ],
)
def test_null_lists_and_misspelt_keys_are_reported(env: Env, text: str, fails_closed: bool) -> None:
    write(env.user, {"permissions": {"allow": ["Bash(make)"]}})
    write(env.project, text)
    store = env.store()
    errors = [p for p in store.loaded.problems if p.path == env.project and p.severity == "error"]
    assert errors, text
    e = env.engine(store)
    assert bash(e, "make") == ("ask" if fails_closed else "allow")
    assert bash(e, "rm x") == "ask"


def test_unknown_permission_keys_get_a_warning(env: Env) -> None:
    write(env.project, {"permissions": {"allow": ["Bash(make)"], "denyy": ["Bash(rm:*)"]}})
    store = env.store()
    (problem,) = store.loaded.problems
    assert problem.severity == "warning" and "denyy" in problem.message


def test_an_empty_settings_file_is_a_warning_and_reads_as_empty(env: Env) -> None:
    write(env.user, {"permissions": {"allow": ["Bash(make)"]}})
    write(env.project, "  \n")
    store = env.store()
    (problem,) = store.loaded.problems
    assert problem.path == env.project and problem.severity == "warning"
    assert "empty" in problem.message
    e = env.engine(store, mode="bypassPermissions")
    assert e.effective_mode() == "bypassPermissions"
    assert bash(env.engine(store), "make") == "allow"


def test_switches_are_strict_booleans(env: Env) -> None:
    write(env.managed, {"disableAllHooks": "no", "allowManagedHooksOnly": 0})
    write(env.user, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}})
    store = env.store()
    messages = [p.message for p in store.loaded.problems]
    assert any("disableAllHooks must be true or false" in m for m in messages)
    assert any("allowManagedHooksOnly must be true or false" in m for m in messages)
    # A malformed switch restricts ("no" is not read as false).
    assert store.loaded.hooks() == {}


def test_malformed_deny_list_never_widens(env: Env) -> None:
    write(env.user, {"permissions": {"allow": ["Bash(make:*)"]}})
    write(env.project, {"permissions": {"deny": "Bash(make:*)"}})
    store = env.store()
    assert any("must be a list" in p.message for p in store.loaded.problems)
    assert bash(env.engine(store), "make") == "ask"


def test_untrusted_workspace_ignores_repository_settings_with_a_notice(env: Env) -> None:
    write(
        env.project,
        {
            "permissions": {"allow": ["Bash(make:*)"]},
            "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]},
        },
    )
    write(env.local, {"permissions": {"allow": ["Bash(npm:*)"]}})
    write(env.user, {"permissions": {"allow": ["Bash(cargo build)"]}})
    store = env.store(trusted=False)
    notices = [p for p in store.loaded.problems if "not trusted" in p.message]
    assert {p.path for p in notices} == {env.project, env.local}
    assert all(p.severity == "information" for p in notices)
    e = env.engine(store)
    assert bash(e, "make") == "ask" and bash(e, "npm x") == "ask"
    assert bash(e, "cargo build") == "allow"
    assert store.loaded.hooks() == {}
    assert bash(e, "git status") == "ask"  # git reads the repository's config
    store.set_trusted(True)
    assert bash(e, "make") == "allow" and bash(e, "git status") == "allow"
    assert "PreToolUse" in store.loaded.hooks()


def test_editor_settings_layer_and_its_problems(env: Env) -> None:
    store = env.store(lsp_settings={"permissions": {"allow": ["Bash(make)", "Bash(oops"]}})
    (problem,) = store.loaded.problems
    assert problem.path is None and "Bash(oops" in problem.message
    assert bash(env.engine(store), "make") == "allow"
    store.set_lsp_settings({"permissions": {"deny": ["Bash(make)"]}})
    assert bash(env.engine(store), "make") == "deny"
    # A bad ask entry from the editor fails closed too.
    store.set_lsp_settings({"permissions": {"allow": ["Bash(make)"], "ask": ["Bash(oops"]}})
    assert bash(env.engine(store), "make") == "ask"
    assert env.engine(store, mode="bypassPermissions").effective_mode() == "default"


def test_hooks_config_validation_and_managed_switches(env: Env) -> None:
    write(
        env.project,
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": "echo pre", "timeout": 5}],
                    },
                    {"matcher": "(", "hooks": [{"type": "command", "command": "x"}]},
                    {
                        "matcher": "Edit",
                        "hooks": [
                            {"type": "prompt", "prompt": "x"},
                            {"type": "command", "command": "", "timeout": -1},
                        ],
                    },
                ],
                "OnFire": [{"hooks": [{"type": "command", "command": "x"}]}],
            }
        },
    )
    write(env.user, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]}})
    store = env.store()
    messages = " | ".join(p.message for p in store.loaded.problems)
    for expected in (
        "regular expression",
        "not supported",
        "non-empty command",
        "unknown hook event 'OnFire'",
    ):
        assert expected in messages
    hooks = store.hook_matchers()
    assert [(src, m.matcher) for src, m in hooks["PreToolUse"]] == [("project", "Bash")]
    assert hooks["Stop"][0][0] == "user"
    write(
        env.managed,
        {
            "allowManagedHooksOnly": True,
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "audit"}]}]},
        },
    )
    assert [m.hooks[0].command for _, m in store.reload().hooks()["Stop"]] == ["audit"]
    write(env.managed, {"disableAllHooks": True})
    assert store.reload().hooks() == {}


def test_persisted_always_rules_are_honoured_next_session(env: Env) -> None:
    write(env.local, {"model": "keep-me", "permissions": {"allow": ["Bash(ls:*)"]}})
    store = env.store()
    e = env.engine(store)
    e.remember(tool="Bash", raw_input={"command": "make build"}, allow=True, scope="project")
    e.remember(tool="Bash", raw_input={"command": "rm -rf dist"}, allow=False, scope="user")
    data = json.loads(env.local.read_text())
    assert data["model"] == "keep-me"
    assert data["permissions"]["allow"] == ["Bash(ls:*)", "Bash(make build)"]
    assert json.loads(env.user.read_text())["permissions"]["deny"] == ["Bash(rm -rf dist)"]
    fresh = env.engine(env.store())
    assert bash(fresh, "make build") == "allow"
    assert bash(fresh, "rm -rf dist") == "deny"


def test_persist_never_clobbers_a_malformed_file(env: Env) -> None:
    write(env.local, "{ not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        add_permission_rules(env.local, behavior="allow", rules=["Bash(make)"])
    assert env.local.read_text() == "{ not json"
    write(env.local, "[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        add_permission_rules(env.local, behavior="allow", rules=["Bash(make)"])
    # A repository's file nested deeper than the parser goes is malformed too.
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    write(env.local, deep)
    with pytest.raises(ValueError, match="nested too deeply"):
        add_permission_rules(env.local, behavior="allow", rules=["Bash(make)"])
    assert env.local.read_text() == deep
    fresh = env.cwd / "sub" / ".claude" / "settings.local.json"
    assert add_permission_rules(fresh, behavior="deny", rules=["Bash(x)"])
    assert not add_permission_rules(fresh, behavior="deny", rules=["Bash(x)"])
    assert json.loads(fresh.read_text()) == {"permissions": {"deny": ["Bash(x)"]}}


def test_additional_directories_extend_the_roots(env: Env, tmp_path: Path) -> None:
    extra = (tmp_path / "shared").resolve()
    extra.mkdir()
    write(env.project, {"permissions": {"additionalDirectories": [str(extra), "../proj"]}})
    store = env.store()
    e = env.engine(store)
    assert extra in e.all_roots()
    assert (
        e.decide(
            tool="Read", read_only=True, kind="read", paths=(extra / "x",), raw_input={}
        ).behavior
        == "allow"
    )


async def test_watcher_reloads_when_a_settings_file_changes(env: Env) -> None:
    changed = asyncio.Event()
    store = env.store(on_change=lambda _loaded: changed.set())
    e = env.engine(store)
    assert bash(e, "make") == "ask"
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(store.watch(stop=stop, ready=ready))
    try:
        await asyncio.wait_for(ready.wait(), 10)
        write(env.local, {"permissions": {"allow": ["Bash(make)"]}})
        async with asyncio.timeout(20):
            while bash(e, "make") != "allow":
                await changed.wait()
                changed.clear()
        write(env.local, '{"permissions": ')
        async with asyncio.timeout(20):
            while not any(p.path == env.local for p in store.loaded.problems):
                await changed.wait()
                changed.clear()
        assert bash(e, "make") == "allow"  # the last good version stays in force
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


def test_diagnostics_use_the_negotiated_encoding(env: Env) -> None:
    text = '{"model": "\U0001f600", "permissions": {"allow": ["Bash("]}}'
    write(env.project, text)
    store = env.store()
    diags = problems_to_diagnostics(
        store.loaded.problems, files=store.watched_files(), encoding="utf-16"
    )
    uri = env.project.as_uri()
    (diag,) = diags[uri]
    start = text.index('"Bash("')
    assert diag["range"]["start"] == {
        "line": 0,
        "character": start + 1,
    }  # the emoji is 2 UTF-16 units
    assert diag["severity"] == 1 and diag["source"] == "lsp-agent"
    utf8 = problems_to_diagnostics(store.loaded.problems, encoding="utf-8")
    assert utf8[uri][0]["range"]["start"]["character"] == start + 3
    assert diags[env.user.as_uri()] == []  # files without problems are cleared


def test_json_positions() -> None:
    text = '{\r\n "a": [1,\n  {"b": true}]}'
    value, spans = parse_json(text)
    assert value == {"a": [1, {"b": True}]}
    span = spans[("a", 1, "b")]
    assert position(text, span.start) == (2, 8)
    assert position(text, span.key_start or 0) == (2, 3)


def test_duplicate_keys_are_found_at_every_depth() -> None:
    text = '{"a": {"x": 1, "x": {"y": 1, "y": 2}}, "b": [{"k": 1, "k": 2}], "c": 1}'
    document = parse_document(text)
    assert document.value["a"]["x"] == {"y": 2}
    assert [path for path, _ in document.duplicates] == [("a", "x"), ("a", "x", "y"), ("b", 0, "k")]
    (_, first_x) = next(d for d in document.duplicates if d[0] == ("a", "x"))
    assert first_x.key_start == text.index('"x"')
    assert parse_document('{"a": 1}').duplicates == ()


def test_managed_path_per_platform() -> None:
    assert managed_settings_path("linux") == Path("/etc/claude-code/managed-settings.json")
    assert "ClaudeCode" in str(managed_settings_path("darwin"))
    assert "ClaudeCode" in str(managed_settings_path("win32"))


def test_misspelled_keys_are_reported_as_unrecognized_fields(env: Env) -> None:
    text = (
        '{"permisions": {"allow": ["Bash(make)"]}, "statusLine": {"type": "command"},\n'
        ' "permissions": {"defaultMod": "acceptEdits"}, "modle": "x"}'
    )
    write(env.project, text)
    problems = {p.message: p for p in env.store().loaded.problems if p.path == env.project}
    top = problems["unrecognized field 'permisions' (did you mean 'permissions'?); ignored"]
    assert top.severity == "warning"
    assert top.start == (0, 1) and top.end == (0, len('{"permisions"'))
    inner = "unrecognized field 'defaultMod' in permissions (did you mean 'defaultMode'?); ignored"
    assert problems[inner].severity == "warning"
    assert "unrecognized field 'modle' (did you mean 'model'?); ignored" in problems
    # Claude Code's own keys are not misspellings.
    assert not any("statusLine" in m for m in problems)
    assert top.log_line().endswith(
        ":1:2: warning: unrecognized field 'permisions' (did you mean 'permissions'?); ignored"
    )


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("yolo", "unknown defaultMode 'yolo'; expected one of default, acceptEdits, plan, "),
    ],
)
def test_an_unknown_default_mode_names_every_mode(tmp_path: Path, mode: str, expected: str) -> None:
    env = Env(tmp_path)
    write(env.project, {"permissions": {"defaultMode": mode}})
    [problem] = [p for p in env.store().loaded.problems if p.path == env.project]
    assert problem.message.startswith(expected)
    for name in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"):
        assert name in problem.message


def test_dont_ask_is_a_settings_mode(tmp_path: Path) -> None:
    env = Env(tmp_path)
    write(env.project, {"permissions": {"defaultMode": "dontAsk"}})
    loaded = env.store().loaded
    assert not [p for p in loaded.problems if p.path == env.project]
    assert loaded.default_mode() == "dontAsk"


def test_the_mode_lists_agree() -> None:
    """One list of modes: the settings', the protocol's and the editor options' are the same,
    and ``--permission-mode`` takes the same."""
    from typing import get_args

    from lsp_agent.cli.parser import PERMISSION_MODES as FLAG_MODES
    from lsp_agent.config.settings import MODES
    from lsp_agent.lsp.options import PERMISSION_MODES as OPTION_MODES

    assert get_args(PermissionMode) == MODES == OPTION_MODES
    assert MODES == FLAG_MODES

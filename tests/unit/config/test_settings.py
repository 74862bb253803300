"""Settings: layering, exact problem ranges, fallbacks that never widen, trust, persistence,
watching, and LSP-shaped diagnostics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lsp_agent.config.diagnostics import problems_to_diagnostics
from lsp_agent.config.jsonpos import parse_json, position
from lsp_agent.config.loader import managed_settings_path
from lsp_agent.config.persist import add_permission_rules
from lsp_agent.config.store import SettingsStore
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.permissions.types import PermissionMode


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


def test_bad_rules_are_ignored_with_a_diagnostic_on_their_exact_range(env: Env) -> None:
    text = '{"permissions": {"allow": ["Bash(make)", "Bash(npm test", "Foo(bar)", 7, "bash"]}}'
    write(env.project, text)
    store = env.store()
    problems = [p for p in store.loaded.problems if p.path == env.project]
    messages = [p.message for p in problems]
    assert any("Bash(npm test" in m and "ignored" in m for m in messages)
    assert any("Foo(bar)" in m for m in messages)
    assert any("must be a string" in m for m in messages)
    warning = next(p for p in problems if "not a known tool" in p.message)
    assert warning.severity == "warning" and "did you mean Bash" in warning.message
    bad = next(p for p in problems if "Bash(npm test" in p.message)
    start = text.index('"Bash(npm test"')
    assert bad.start == (0, start) and bad.end == (0, start + len('"Bash(npm test"'))
    e = env.engine(store)
    assert bash(e, "make") == "allow"
    assert bash(e, "npm test") == "ask"


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
    store = env.store(lsp_settings={"permissions": {"allow": ["Bash(make)"], "ask": ["Bash(oops"]}})
    (problem,) = store.loaded.problems
    assert problem.path is None and "Bash(oops" in problem.message
    assert bash(env.engine(store), "make") == "allow"
    store.set_lsp_settings({"permissions": {"deny": ["Bash(make)"]}})
    assert bash(env.engine(store), "make") == "deny"


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


def test_managed_path_per_platform() -> None:
    assert managed_settings_path("linux") == Path("/etc/claude-code/managed-settings.json")
    assert "ClaudeCode" in str(managed_settings_path("darwin"))
    assert "ClaudeCode" in str(managed_settings_path("win32"))

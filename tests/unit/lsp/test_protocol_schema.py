"""The ``lspAgent/*`` protocol has one source (the method table and its models): the generated
files are current, the server serves exactly the table, docs/protocol.md names exactly the
table's methods, and the editor clients call only methods the server serves."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import get_args

import pytest

from lsp_agent.lsp import codegen, methods, outgoing, schema, schema_gen
from lsp_agent.lsp.server import create_server
from lsp_agent.protocol.events import WireModel

REPO = Path(__file__).resolve().parents[3]
VSCODE_SRC = REPO / "editor-clients/vscode/src"
NEOVIM_LUA = REPO / "editor-clients/neovim/lua"

ALL = {m.name for m in methods.METHODS}
CLIENT_TO_SERVER = {m.name for m in methods.METHODS if m.direction == "client_to_server"}
SERVER_TO_CLIENT = ALL - CLIENT_TO_SERVER


def test_generated_files_are_current() -> None:
    assert schema_gen.stale(REPO) == [], "generated protocol files are stale: run `make protocol`"


def test_the_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    (tmp_path / "editor-clients").mkdir()
    assert schema_gen.main(["--root", str(tmp_path), "--check"]) == 1  # nothing generated yet
    assert schema_gen.main(["--root", str(tmp_path)]) == 0
    assert schema_gen.main(["--root", str(tmp_path), "--check"]) == 0
    lua = tmp_path / schema_gen.LUA
    lua.write_text(lua.read_text().replace("SESSION_NEW =", "SESSION_NEU ="))
    assert schema_gen.stale(tmp_path) == [schema_gen.LUA]
    assert schema_gen.main(["--root", str(tmp_path), "--check"]) == 1


def test_every_model_the_table_names_exists() -> None:
    found = schema.models()
    for method in methods.METHODS:
        assert method.params in found, method.name
        assert (method.result is None) == (method.kind == "notification"), method.name
        if method.result is not None:
            assert method.result in found, method.name
    defs = schema.json_schema()["$defs"]
    refs = set(re.findall(r'"#/\$defs/(\w+)"', str(defs).replace("'", '"')))
    assert refs <= set(defs), f"dangling $refs: {refs - set(defs)}"


def test_python_constants_match_the_generated_keys() -> None:
    for method in methods.METHODS:
        assert getattr(methods, codegen.constant_key(method.name)) == method.name


def test_server_registers_exactly_the_methods_it_serves() -> None:
    server = create_server()
    registered = {name for name in server.protocol.fm.features if name.startswith("lspAgent/")}
    assert registered == methods.SERVED
    assert methods.SERVED <= CLIENT_TO_SERVER
    for method in methods.METHODS:
        if method.capability is not None:
            # An optional method is served exactly when its capability is advertised.
            assert (method.name in registered) == methods.CAPABILITIES[method.capability]
        elif method.direction == "client_to_server":
            assert method.name in registered, method.name
    assert sorted(server.protocol.fm.commands) == sorted(
        (*methods.COMMANDS, methods.COMMAND_APPROVE_IMPORTS)
    )


def test_advertised_capabilities_match_their_model() -> None:
    sent = methods.agent_capabilities("1.2.3")
    assert outgoing.AgentCapabilities.model_validate(sent).to_wire() == sent
    assert sent["loadSession"] is True


def test_wire_check_catches_a_misspelt_key() -> None:
    good = {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": 1, "size": 9}}
    assert schema.wire_problems(methods.SESSION_UPDATE, good) == []
    bad = {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "usd": 1, "size": 9}}
    assert schema.wire_problems(methods.SESSION_UPDATE, bad)
    extra = {"sessionId": "s", "cwd": "/w", "busy": False, "titel": "x"}
    assert schema.wire_problems(methods.SESSION_LIST, {"sessions": [extra]}, result=True)


def test_a_new_file_diff_conforms() -> None:
    new_file = {"type": "diff", "path": "/w/new.py", "uri": "file:///w/new.py", "newText": "x"}
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [new_file]}
    assert schema.wire_problems(methods.SESSION_UPDATE, {"sessionId": "s", "update": update}) == []


def test_sent_models_have_no_required_nullable_field() -> None:
    """``to_wire()`` leaves ``None`` out, so a field that may be ``None`` needs a default, or
    the check of what the server sends could not read the message back."""
    found = schema.models()
    for name in schema.json_schema()["$defs"]:
        model = found.get(name) or schema.find_model(name)
        if model is None or not issubclass(model, WireModel):
            continue
        for field_name, field in model.model_fields.items():
            nullable = type(None) in get_args(field.annotation)
            assert not (nullable and field.is_required()), f"{name}.{field_name}"


# ---- docs/protocol.md -------------------------------------------------------------------------

_METHOD_NAME = re.compile(r"lspAgent/[A-Za-z]+/[A-Za-z]+")


def test_protocol_doc_names_exactly_the_methods() -> None:
    text = (REPO / "docs/protocol.md").read_text(encoding="utf-8")
    named = set(_METHOD_NAME.findall(text))
    assert named == ALL, f"undocumented: {ALL - named}; not in the table: {named - ALL}"
    headings = set(_METHOD_NAME.findall("\n".join(re.findall(r"^#+ .*$", text, re.MULTILINE))))
    assert headings == ALL, f"methods without a section: {ALL - headings}"
    for method in methods.METHODS:
        if method.capability is not None:
            assert method.capability in text, f"{method.name}: its capability is not documented"


# ---- the clients ------------------------------------------------------------------------------


def _sources(root: Path, suffix: str, generated: Path) -> dict[Path, str]:
    return {
        path: path.read_text(encoding="utf-8")
        for path in sorted(root.rglob(f"*{suffix}"))
        if path != generated
    }


_QUOTED = re.compile(r"""['"](lspAgent/[^'"\s]*)['"]""")


def _client_methods(
    sources: dict[Path, str], reference: re.Pattern[str], key_of: dict[str, str]
) -> dict[str, set[Path]]:
    """Methods the sources use through the generated table (by key), with the files using
    them. Quoted method names outside the table are an error: they drift."""
    used: dict[str, set[Path]] = {}
    for path, text in sources.items():
        quoted = _QUOTED.findall(text)
        assert not quoted, f"{path}: lspAgent/* names must come from the generated table: {quoted}"
        for key in reference.findall(text):
            assert key in key_of, f"{path}: no lspAgent/* method has the key {key!r}"
            used.setdefault(key_of[key], set()).add(path)
    return used


def _check_client(used: dict[str, set[Path]], sources: dict[Path, str], gate: str) -> None:
    for name, paths in used.items():
        method = methods.BY_NAME[name]
        if method.direction == "server_to_client":
            continue
        if method.capability is None:
            assert name in methods.SERVED, f"the client calls {name}; the server does not serve it"
            continue
        # An optional method: the files that call it check the capability first.
        for path in paths:
            assert gate in sources[path], f"{path} calls {name} without checking {gate}"
    handled = {name for name in used if name in SERVER_TO_CLIENT}
    ignored = SERVER_TO_CLIENT - handled
    assert not ignored, f"server messages the client does not handle: {ignored}"


@pytest.mark.skipif(not VSCODE_SRC.is_dir(), reason="no VS Code extension sources")
def test_vscode_extension_calls_only_served_methods() -> None:
    sources = _sources(VSCODE_SRC, ".ts", REPO / schema_gen.TYPESCRIPT)
    keys = {codegen.method_key(name): name for name in ALL}
    used = _client_methods(sources, re.compile(r"\bMethods\.(\w+)"), keys)
    _check_client(used, sources, "MethodCapabilities")


@pytest.mark.skipif(not NEOVIM_LUA.is_dir(), reason="no Neovim plugin sources")
def test_neovim_plugin_calls_only_served_methods() -> None:
    sources = _sources(NEOVIM_LUA, ".lua", REPO / schema_gen.LUA)
    keys = {codegen.constant_key(name): name for name in ALL}
    used = _client_methods(sources, re.compile(r"\bmethods\.([A-Z_]+)"), keys)
    _check_client(used, sources, "M.serves(client, methods.")


def test_a_client_calling_an_unserved_method_fails(tmp_path: Path) -> None:
    """The client check is not vacuous: a call of the gated method without the check, and a
    quoted method name, both fail it."""
    keys = {codegen.constant_key(name): name for name in ALL}
    ungated = {tmp_path / "a.lua": "compat.request(client, methods.SESSION_LOAD, {})"}
    used = _client_methods(ungated, re.compile(r"\bmethods\.([A-Z_]+)"), keys)
    with pytest.raises(AssertionError, match="without checking"):
        _check_client(used, ungated, "M.serves(client, methods.")
    quoted = {tmp_path / "b.lua": "compat.request(client, 'lspAgent/session/resume', {})"}
    with pytest.raises(AssertionError, match="must come from the generated table"):
        _client_methods(quoted, re.compile(r"\bmethods\.([A-Z_]+)"), keys)
    shutil.rmtree(tmp_path)

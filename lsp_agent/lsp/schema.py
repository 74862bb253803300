"""The ``lspAgent/*`` protocol as data: a JSON Schema of every payload and a method table.

Built from the single source — the method table :data:`lsp_agent.lsp.methods.METHODS` and the
pydantic models it names — in the shape ACP publishes (``schema.json`` with ``$defs``, and
``meta.json`` with the methods). :mod:`lsp_agent.lsp.schema_gen` writes both and generates the
clients' TypeScript and Lua from them.

Two adjustments to pydantic's schema, both to describe the wire exactly:

* models sent through ``WireModel.to_wire()`` never carry ``null`` (it leaves ``None``
  fields out, so a field that may be ``None`` is optional) and always carry their tag
  (``sessionUpdate``, ``type``): their ``required`` lists and types say so;
* the ``Literal`` aliases of :data:`NAMED_ENUMS` become named ``$defs`` (``ToolKind``,
  ``PermissionMode`` …) referenced where pydantic would inline them.
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from lsp_agent import protocol
from lsp_agent.agent.loop import PromptStopReason
from lsp_agent.lsp import methods, outgoing, params
from lsp_agent.protocol.events import (
    SessionUpdate,
    ToolCallContent,
    ToolCallStatus,
    ToolKind,
    WireModel,
)
from lsp_agent.protocol.permissions import PermissionMode, PermissionOptionKind, RuleScope

SCHEMA_ID = "https://github.com/lsp-agent/lsp-agent/schema/schema.json"
"""``$id`` of the generated schema (a name, not fetched)."""

NAMED_ENUMS: dict[str, tuple[Any, ...]] = {
    "ToolKind": get_args(ToolKind),
    "ToolCallStatus": get_args(ToolCallStatus),
    "PermissionMode": get_args(PermissionMode),
    "PermissionOptionKind": get_args(PermissionOptionKind),
    "RuleScope": get_args(RuleScope),
    "StopReason": get_args(PromptStopReason),
}
"""String unions named in the schema, by their name there."""

NAMED_UNIONS: dict[str, tuple[type[BaseModel], ...]] = {
    "SessionUpdate": get_args(SessionUpdate),
    "ToolCallContent": get_args(ToolCallContent),
    "ContentBlock": tuple(params.CONTENT_BLOCKS.values()),
}
"""Unions of models named in the schema (``ContentBlock``: the items of ``PromptParams.prompt``)."""

_UNION_DOCS = {
    "SessionUpdate": "The `update` of lspAgent/session/update, by its `sessionUpdate` tag (ACP).",
    "ToolCallContent": "ACP `ToolCallContent`: what a tool call shows.",
    "ContentBlock": "An ACP content block of a prompt, by its `type` tag.",
}

_EXTRA_MODELS: tuple[type[BaseModel], ...] = (
    outgoing.AgentCapabilities,
    params.WireDiagnostic,
    *params.CONTENT_BLOCKS.values(),
)
"""Models not named by the method table but referenced by it or by the ``initialize`` answer."""

_MODULES = (params, outgoing, protocol.events, protocol.permissions)


def models() -> dict[str, type[BaseModel]]:
    """Every model of the protocol by its name: those :data:`methods.METHODS` names (looked up
    in the protocol's modules) and :data:`_EXTRA_MODELS`. Raises ``LookupError`` for a name
    that is no pydantic model of those modules."""
    found: dict[str, type[BaseModel]] = {m.__name__: m for m in _EXTRA_MODELS}
    for method in methods.METHODS:
        for name in (method.params, method.result):
            if name is None or name in found:
                continue
            for module in _MODULES:
                candidate = getattr(module, name, None)
                if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                    found[name] = candidate
                    break
            else:
                raise LookupError(f"{method.name}: no protocol model named {name!r}")
    return found


def _walk(node: Any, visit: Any) -> Any:
    if isinstance(node, dict):
        node = visit({key: _walk(value, visit) for key, value in node.items()})
    elif isinstance(node, list):
        node = [_walk(item, visit) for item in node]
    return node


def _refs(node: dict[str, Any]) -> frozenset[str] | None:
    options = node.get("oneOf") or node.get("anyOf")
    if not options or not all("$ref" in o for o in options):
        return None
    return frozenset(str(o["$ref"]).rsplit("/", 1)[-1] for o in options)


def _name_types(node: dict[str, Any]) -> dict[str, Any]:
    refs = _refs(node)
    if refs is not None:
        for name, members in NAMED_UNIONS.items():
            if refs == frozenset(m.__name__ for m in members):
                kept = {k: v for k, v in node.items() if k in ("default", "description")}
                return {"$ref": f"#/$defs/{name}", **kept}
    values = node.get("enum")
    if values is None:
        return node
    for name, named in NAMED_ENUMS.items():
        if tuple(values) == named:
            out: dict[str, Any] = {"$ref": f"#/$defs/{name}"}
            if "default" in node:
                out["default"] = node["default"]
            return out
    return node


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    options = [o for o in prop.get("anyOf", ()) if o != {"type": "null"}]
    rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
    if len(options) == 1:
        return {**options[0], **rest}
    return {"anyOf": options, **rest} if options else rest


def _as_sent(definition: dict[str, Any]) -> dict[str, Any]:
    """A ``WireModel``'s schema as ``to_wire()`` sends it (see the module docstring): a field
    that may be ``None`` is left out instead, so it is optional and never ``null``; a tag (a
    ``const`` field such as ``sessionUpdate``) is required, since it is always sent and clients
    dispatch on it. Other fields with defaults stay optional, so clients keep their defaults
    (as ACP's schema does)."""
    props: dict[str, Any] = definition.get("properties", {})
    required: list[str] = list(definition.get("required", ()))
    for key, prop in props.items():
        if {"type": "null"} in prop.get("anyOf", ()):
            props[key] = _without_null(prop)
            if key in required:
                required.remove(key)
        elif "const" in prop and key not in required:
            required.insert(0, key)
    if required:
        definition["required"] = required
    else:
        definition.pop("required", None)
    return definition


def json_schema() -> dict[str, Any]:
    """The protocol's JSON Schema (draft 2020-12): every payload under ``$defs``, by name."""
    by_name = models()
    _, top = models_json_schema(
        [(model, "validation") for model in by_name.values()], ref_template="#/$defs/{model}"
    )
    defs: dict[str, Any] = top["$defs"]
    for name, definition in defs.items():
        model = by_name.get(name) or find_model(name)
        if model is not None and issubclass(model, WireModel):
            defs[name] = _as_sent(definition)
    for definition in defs.values():
        # pydantic's per-field titles ("Toolcallid") only repeat the key.
        for key, prop in definition.get("properties", {}).items():
            prop.pop("title", None)
            definition["properties"][key] = prop
    defs = {name: _walk(definition, _name_types) for name, definition in defs.items()}
    for name, values in NAMED_ENUMS.items():
        defs[name] = {"title": name, "type": "string", "enum": list(values)}
    for name, members in NAMED_UNIONS.items():
        tag = "sessionUpdate" if name == "SessionUpdate" else "type"
        defs[name] = {
            "title": name,
            "description": _UNION_DOCS[name],
            "oneOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in members],
            "discriminator": {
                "propertyName": tag,
                "mapping": {_tag(m, tag): f"#/$defs/{m.__name__}" for m in members},
            },
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "lsp-agent lspAgent/* protocol",
        "description": (
            f"Payloads of the lspAgent/* methods, protocol version {methods.PROTOCOL_VERSION}. "
            "Generated by `python -m lsp_agent.lsp.schema_gen`; do not edit."
        ),
        "$defs": dict(sorted(defs.items())),
    }


def _tag(model: type[BaseModel], key: str) -> str:
    """The literal tag a union member carries in its field ``key`` (name or wire alias)."""
    for name, field in model.model_fields.items():
        if key in (name, field.alias):
            return str(get_args(field.annotation)[0])
    raise LookupError(f"{model.__name__} has no tag field {key!r}")


def find_model(name: str) -> type[BaseModel] | None:
    """A model pydantic reached through a field (not listed itself), by class name."""
    for module in _MODULES:
        candidate = getattr(module, name, None)
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def meta() -> dict[str, Any]:
    """The method table as JSON (like ACP's ``meta.json``): each method's direction, kind,
    params and result ``$defs`` names, gating capability and docs/protocol.md section; the
    advertised capabilities, the commands and the code-action kinds."""
    return {
        "protocolVersion": methods.PROTOCOL_VERSION,
        "methods": {
            m.name: {
                "direction": m.direction,
                "kind": m.kind,
                "params": m.params,
                **({"result": m.result} if m.result else {}),
                **({"capability": m.capability} if m.capability else {}),
                "section": m.section,
                "summary": m.summary,
            }
            for m in methods.METHODS
        },
        "capabilities": dict(methods.CAPABILITIES),
        "commands": list(methods.COMMANDS),
        "codeActionKinds": list(methods.CODE_ACTION_KINDS),
    }


def wire_problems(method: str, payload: Any, *, result: bool = False) -> list[str]:
    """What is wrong with a message the server sent: the ``params`` of its request or
    notification ``method``, or (``result=True``) its answer to the client's request ``method``.

    The payload must validate as the model the method table names and, for models sent through
    ``to_wire()``, come out of that model unchanged (so an unknown or misspelt key, or a value
    the model would spell differently, is a problem). Returns one line per problem; ``[]``
    when the payload conforms or the method sends nothing the server builds.
    """
    entry = methods.BY_NAME.get(method)
    if entry is None:
        return [f"{method}: not in the method table"]
    name = entry.result if result else entry.params
    model = models().get(name) if name else None
    if model is None or not issubclass(model, WireModel):
        return []
    where = f"{method} {'result' if result else 'params'}"
    try:
        parsed = model.model_validate(payload)
    except ValidationError as exc:
        return [f"{where}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"]
    if isinstance(parsed, WireModel) and parsed.to_wire() != payload:
        return [f"{where}: {payload!r} does not round-trip through {name}"]
    return []

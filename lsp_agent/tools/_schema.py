"""Tidying of tool input JSON Schemas: the schema is prompt text, so it should carry no noise.

Pydantic copies the input model's docstring into the schema, writes ``title`` on every
property and spells optional fields as
``anyOf: [{type: X}, {type: null}]`` with ``default: null``; Claude Code's own schemas say
just ``type: X`` and leave the field out of ``required``. Input models set
``model_config = ConfigDict(json_schema_extra=tidy_schema)``; validation still accepts ``null``.
"""

from __future__ import annotations

from typing import Any


def tidy_schema(schema: dict[str, Any]) -> None:
    """Rewrite an object schema in place: drop the model's docstring (developer docs; the
    tool description is the prompt), property titles, and collapse ``X | None``."""
    schema.pop("description", None)
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for prop in properties.values():
        if not isinstance(prop, dict):
            continue
        prop.pop("title", None)
        variants = prop.get("anyOf")
        if isinstance(variants, list):
            non_null = [v for v in variants if v != {"type": "null"}]
            if len(non_null) == 1 and len(variants) == 2 and isinstance(non_null[0], dict):
                del prop["anyOf"]
                prop.update(non_null[0])
                if prop.get("default", ...) is None:
                    del prop["default"]

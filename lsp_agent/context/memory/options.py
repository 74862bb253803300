"""Memory options read from Claude Code's settings files.

* ``claudeMdExcludes``: globs over absolute paths of memory files to skip; arrays merge across
  every applied layer (docs: "Exclude specific CLAUDE.md files").
* ``autoMemoryEnabled``: the highest layer that sets it wins; ``CLAUDE_CODE_DISABLE_AUTO_MEMORY``
  in the environment turns auto memory off.
* ``pluginConfigs["agents-md@builtin"].options.instructionFiles``: whether ``AGENTS.md`` is read;
  honoured from managed, ``--settings`` and user settings only, like Claude Code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from lsp_agent.context.memory.loader import InstructionFiles

INSTRUCTION_FILES: tuple[InstructionFiles, ...] = (
    "claude-md-or-agents-md",
    "claude-md-and-agents-md",
    "claude-md",
)


@dataclass(frozen=True, kw_only=True)
class MemoryOptions:
    """The settings that shape memory loading."""

    excludes: tuple[str, ...] = ()
    instruction_files: InstructionFiles = "claude-md-or-agents-md"
    auto_memory: bool = True


def memory_options(
    layers: Sequence[tuple[str, Mapping[str, Any]]], env: Mapping[str, str] | None = None
) -> MemoryOptions:
    """:class:`MemoryOptions` from the applied settings layers, highest precedence first, each
    as (source, the keys the settings model does not know); values of the wrong type are
    ignored."""
    disabled = (env or {}).get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "") not in ("", "0", "false")
    excludes: list[str] = []
    auto: bool | None = None
    files: InstructionFiles | None = None
    for source, extra in layers:
        value = extra.get("claudeMdExcludes")
        if isinstance(value, list):
            excludes.extend(v for v in value if isinstance(v, str))
        enabled = extra.get("autoMemoryEnabled")
        if auto is None and isinstance(enabled, bool):
            auto = enabled
        if files is None and source in ("managed", "flagSettings", "user"):
            files = _instruction_files(extra.get("pluginConfigs"))
    return MemoryOptions(
        excludes=tuple(dict.fromkeys(excludes)),
        instruction_files=files or "claude-md-or-agents-md",
        auto_memory=(auto if auto is not None else True) and not disabled,
    )


def _instruction_files(value: object) -> InstructionFiles | None:
    if not isinstance(value, dict):
        return None
    plugin = value.get("agents-md@builtin")
    options = plugin.get("options") if isinstance(plugin, dict) else None
    chosen = options.get("instructionFiles") if isinstance(options, dict) else None
    if chosen in INSTRUCTION_FILES:
        return cast(InstructionFiles, chosen)
    return None

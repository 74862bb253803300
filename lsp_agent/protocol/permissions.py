"""Permission requests and answers (shapes from ACP ``session/request_permission``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from lsp_agent.protocol.events import ToolCall, WireModel

PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
"""ACP ``PermissionOptionKind``."""

RuleScope = Literal["session", "project", "user"]
"""Where an "always" answer is kept: this session only, the project's
``.claude/settings.local.json``, or the user's ``~/.claude/settings.json``."""

ALL_SCOPES: tuple[RuleScope, ...] = ("session", "project", "user")


class PermissionOption(WireModel):
    """One button of a permission prompt."""

    option_id: str
    name: str
    kind: PermissionOptionKind


DEFAULT_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
)
"""The four ACP options; "always" is kept in the scope the answer names (default session)."""

NO_ALLOW_ALWAYS_OPTIONS: tuple[PermissionOption, ...] = tuple(
    o for o in DEFAULT_OPTIONS if o.kind != "allow_always"
)
"""Options when an allow rule could not help (an ask rule or the sandbox asked)."""


class PermissionRequest(WireModel):
    """Ask the user whether ``tool_call`` may run.

    ``tool_call`` carries the title, the raw input and, for edits, ``diff`` content.
    ``reason`` says why the engine asks (for the prompt UI and logs); ``rule``/``source`` name
    the rule and settings layer that asked, if one did. ``suggested_rules`` are the rules an
    "always" answer saves (shown before saving); ``suggested_rule_labels`` say the same in
    the user's words, one per rule (``Edit src/calc.py`` for ``Edit(//abs/src/calc.py)``), for
    the prompt, which keeps the rule text as a detail; ``scopes`` are where they may be saved.
    """

    tool_call: ToolCall
    options: tuple[PermissionOption, ...] = DEFAULT_OPTIONS
    reason: str = ""
    session_id: str | None = None
    rule: str | None = None
    source: str | None = None
    suggested_rules: tuple[str, ...] = ()
    suggested_rule_labels: tuple[str, ...] = ()
    scopes: tuple[RuleScope, ...] = ALL_SCOPES


class PermissionResponse(BaseModel):
    """The user's answer. ``outcome="cancelled"`` when the prompt was dismissed by a cancel.

    ``feedback`` is optional text from the user that goes back to the model (with a rejection,
    or as a remark with an approval). ``edited_text`` maps absolute file paths to the full text
    the user approved instead of the proposal (per-hunk review, or an edited proposal); it is
    only honoured with an allow option and only for files the call changes. ``scope`` says
    where an "always" answer is kept (``None``: the session).
    """

    model_config = ConfigDict(frozen=True)

    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None
    feedback: str | None = None
    edited_text: dict[str, str] | None = None
    scope: RuleScope | None = None

    def kind(self, options: tuple[PermissionOption, ...] = DEFAULT_OPTIONS) -> str:
        """The option kind chosen, or ``"cancelled"`` (unknown option ids count as rejects)."""
        if self.outcome == "cancelled":
            return "cancelled"
        for option in options:
            if option.option_id == self.option_id:
                return option.kind
        return "reject_once"


PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
"""Claude Code's permission modes (``dontAsk``: deny whatever no rule allows, without asking)."""


RefusalKind = Literal["denied", "rejected", "cancelled", "hook_blocked"]
"""Why a tool call did not run: ``denied`` by a rule, the mode, the sandbox or the door's
policy; ``rejected`` by the user; ``cancelled``: the prompt was dismissed by a cancel;
``hook_blocked`` by a PreToolUse hook."""


class Refusal(WireModel):
    """A tool call that was refused before it ran, as data.

    ``reason`` says why in words fit for the model and the user (for ``rejected``: what the user
    said, possibly empty; for ``cancelled``: why nobody answered, possibly empty);
    ``rule``/``source`` name the rule and settings layer that decided, if one did. The executor
    renders it into the tool_result text in one place and sends it as ``rawOutput.refusal`` of
    the call's final ``tool_call_update``, where doors read it (the headless door's
    ``permission_denials`` are the ``denied`` ones).
    """

    kind: RefusalKind
    reason: str = ""
    rule: str | None = None
    source: str | None = None

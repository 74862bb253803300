"""The offline trial model of ``lsp-agent serve --offline``: a small scripted model that lets
a user try an editor without an API key.

It is a :data:`~lsp_agent.testing.scripted.Responder` for the scripted Messages-API server,
so the server reaches it through the real ``anthropic`` SDK over HTTP on 127.0.0.1, exactly
as it reaches Claude. It reads the request the agent sends and answers from simple rules; it
never pretends to be Claude (every answer says what it is):

- a question about a file (the file attached by the editor — ``:AgentAsk``, an ``@path``
  mention — or a path in the prompt): it reads the file with ``Read``, then says how long it
  is, what it defines and how it starts;
- "edit"/"change"/"fix"/"comment" with a file: it reads the file, then proposes one ``Edit``
  with two hunks (a note above the first line and one after line :data:`SECOND_NOTE_AFTER`),
  so the review shows hunk-by-hunk approval;
- "run" with a command in backticks (else ``ls``): it runs it with ``Bash`` and reports the
  exit and the first lines of output;
- a rejected tool call: it acknowledges it, says nothing was changed, and ends the turn;
- anything else: what it can do.

Pure functions of the request body (no state between requests: the conversation in the
request is the state), so any number of sessions can share it. Its wording fits the door it
serves (:data:`Door`): an editor reviews edits in its buffers, while ``run -p --offline``
writes to disk only what its flags allow and ends with the run.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal

from lsp_agent.sessions.titles import TITLE_SYSTEM
from lsp_agent.testing.scenario import ScriptedResponse, ScriptedText, ScriptedToolUse

if TYPE_CHECKING:
    from lsp_agent.model.base import Model

TRIAL_MODEL = "lsp-agent-offline-trial"
"""The model name the offline server reports (shown where an editor shows the model)."""

SIGNATURE = (
    "(lsp-agent's offline trial model: scripted answers, not Claude; "
    "set ANTHROPIC_API_KEY and restart the server for the real thing.)"
)

CLI_SIGNATURE = (
    "(lsp-agent's offline trial model: scripted answers, not Claude; "
    "set ANTHROPIC_API_KEY and leave out --offline for the real thing.)"
)

Door = Literal["editor", "cli"]
"""Where the trial model answers: ``serve --offline`` (an editor) or ``run -p --offline``."""


@dataclass(frozen=True, kw_only=True)
class Wording:
    """The sentences of the trial model that depend on the door it serves."""

    signature: str
    can_do: str
    offer: str
    edit_lead: str
    edit_done: str


_WORDING: dict[str, Wording] = {
    "editor": Wording(
        signature=SIGNATURE,
        can_do="I can answer a question about a file (attach it: `:AgentAsk` in Neovim, `@file` "
        'in the prompt), propose a two-hunk edit ("edit @file"), or run a command '
        '("run `ls`").',
        offer="Ask me to *edit* it to see a reviewed two-hunk edit, or to *run* a command "
        "(e.g. run `ls`).",
        edit_lead="I'll add two notes to the file: one at the top and one further down, so you "
        "can review each hunk.",
        edit_done="Done: the edit of `{name}` was applied to your buffer (only the hunks you "
        "accepted). Undo works as usual.",
    ),
    "cli": Wording(
        signature=CLI_SIGNATURE,
        can_do="I can answer a question about a file (`@file` or its path in the prompt), "
        'add two notes to it ("edit @file", with --permission-mode acceptEdits), or run a '
        'command ("run `ls`"; one that changes files needs --allowedTools Bash).',
        offer="Ask me to *edit* it (with --permission-mode acceptEdits) or to *run* a command "
        "(e.g. run `ls`; one that changes files needs --allowedTools Bash).",
        edit_lead="I'll add two notes to the file: one at the top and one further down.",
        edit_done="Done: `{name}` now has two notes, written to disk. `lsp-agent rewind` "
        "takes them back.",
    ),
}

SECOND_NOTE_AFTER = 10
"""The second hunk's note goes after this line (1-based), far enough from the first note
that a diff shows two hunks (more than twice the 3 lines of context apart)."""

DEFAULT_COMMAND = "ls"

_EDIT_WORDS = ("edit", "change", "fix", "comment", "refactor", "improve", "annotate")
_RUN_WORDS = ("run", "execute", "command", "shell")
_RESOURCE = re.compile(r'<resource path="([^"]+?)(?: \(lines [0-9-]+\))?">')
_MENTION = re.compile(r"(?:^|\s)@([^\s`'\"]+)")
_MCP_RESOURCE = re.compile(r"<mcp-resource .*?(?:/>|</mcp-resource>)", re.DOTALL)
_SERVER_URI = re.compile(r"[\w.-]+:[^/\\\s]")
"""An ``@server:uri`` MCP resource mention (attached by the door, not a file to Read); a
Windows drive (``C:/``, ``C:\\``) is not one."""
_TRAILING = ".,;:!?)"
"""Sentence punctuation that ends a mention or a path rather than belonging to it (Claude Code
reads ``@main.py?`` as ``main.py``)."""
_PATHLIKE = re.compile(r"(?:^|\s)([\w./~-]+\.[A-Za-z0-9]{1,8})(?=$|[\s,.;:!?)])")
_BACKTICKS = re.compile(r"`([^`\n]+)`")
_CWD = re.compile(r"^Working directory: (.+)$", re.MULTILINE)
_NUMBERED = re.compile(r"^\s*(\d+)[\t→|](.*)$")
_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|fn|func|local function|interface|"
    r"struct|enum|type)\s+([A-Za-z_][\w.:]*)"
)

_COMMENT_PREFIX = {
    **dict.fromkeys(
        (".py", ".sh", ".bash", ".rb", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".r", ".pl"),
        "#",
    ),
    **dict.fromkeys(
        (".js", ".jsx", ".ts", ".tsx", ".c", ".h", ".cc", ".cpp", ".hpp", ".go", ".rs"), "//"
    ),
    **dict.fromkeys((".java", ".kt", ".swift", ".cs", ".scala", ".dart", ".php"), "//"),
    **dict.fromkeys((".lua", ".sql", ".hs"), "--"),
}


# ---- reading the request ----------------------------------------------------------------------


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, Mapping)]


def _text_of(message: Mapping[str, Any]) -> str:
    return "\n".join(str(b.get("text", "")) for b in _blocks(message) if b.get("type") == "text")


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(part.get("text", ""))
        for part in content or ()
        if isinstance(part, Mapping) and part.get("type") == "text"
    )


def _prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """The user's last typed prompt (the last user message without tool results), without the
    ``<system-reminder>`` blocks the agent puts in front of it (memory files, whose paths
    would otherwise be taken for the file asked about)."""
    for message in reversed(messages):
        blocks = _blocks(message)
        if message.get("role") != "user":
            continue
        if any(b.get("type") == "tool_result" for b in blocks):
            continue
        return "\n".join(
            str(b.get("text", ""))
            for b in blocks
            if b.get("type") == "text"
            and not str(b.get("text", "")).lstrip().startswith("<system-reminder>")
        )
    return ""


def _calls(messages: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Every tool_use block of the conversation, by id."""
    return {
        str(b.get("id")): b
        for m in messages
        if m.get("role") == "assistant"
        for b in _blocks(m)
        if b.get("type") == "tool_use"
    }


def _cwd(body: Mapping[str, Any]) -> str | None:
    """The working directory the agent's system prompt names."""
    system = body.get("system")
    if isinstance(system, list):
        system = "\n".join(str(b.get("text", "")) for b in system if isinstance(b, Mapping))
    found = _CWD.search(system) if isinstance(system, str) else None
    return found.group(1).strip() if found else None


def target_file(prompt: str, *, cwd: str | None = None) -> str | None:
    """The file a prompt is about: an attached ``<resource>``, an ``@path`` mention, or a
    path-like word (``src/app.py``), in that order. Trailing sentence punctuation
    (:data:`_TRAILING`) is not part of it, unless a file of that very name exists in ``cwd``."""
    prompt = _MCP_RESOURCE.sub("", prompt)
    for pattern in (_RESOURCE, _MENTION, _PATHLIKE):
        found = next(
            (m for m in pattern.finditer(prompt) if not _SERVER_URI.match(m.group(1))), None
        )
        if found:
            raw = found.group(1)
            stripped = raw.rstrip(_TRAILING)
            if stripped != raw and cwd is not None and (Path(cwd) / raw).is_file():
                return raw
            return stripped or raw
    return None


def _typed(prompt: str) -> str:
    """The typed part of a prompt (attached resources removed), lower case."""
    return re.sub(r"<resource .*?</resource>", "", prompt, flags=re.DOTALL).lower()


def _intent(prompt: str) -> str:
    typed = _typed(prompt)
    words = set(re.findall(r"[a-z]+", typed))
    if words & set(_EDIT_WORDS):
        return "edit"
    if words & set(_RUN_WORDS) or _BACKTICKS.search(prompt):
        return "run"
    return "ask"


# ---- the answers ------------------------------------------------------------------------------


def _say(text: str, door: Door = "editor") -> ScriptedResponse:
    signature = _WORDING[door].signature
    return ScriptedResponse(content=(ScriptedText(text=f"{text}\n\n{signature}"),))


def _use(step: int, lead: str, name: str, tool_input: Mapping[str, Any]) -> ScriptedResponse:
    return ScriptedResponse(
        content=(
            ScriptedText(text=lead),
            ScriptedToolUse(id=f"toolu_trial_{step:03d}", name=name, input=dict(tool_input)),
        )
    )


def file_lines(read_output: str) -> list[str]:
    """The file's lines from a ``Read`` result (``cat -n`` style: number, tab, text)."""
    lines: list[str] = []
    for raw in read_output.splitlines():
        match = _NUMBERED.match(raw)
        if match:
            lines.append(match.group(2))
    return lines


def describe(path: str, lines: Sequence[str], *, door: Door = "editor") -> str:
    """The trial model's answer about a file: size, definitions, first line."""
    name = PurePath(path).name
    definitions = [m.group(1) for line in lines if (m := _DEFINITION.match(line))]
    parts = [f"`{name}` has {len(lines)} line{'s' if len(lines) != 1 else ''}."]
    if definitions:
        shown = ", ".join(f"`{d}`" for d in definitions[:8])
        more = f" and {len(definitions) - 8} more" if len(definitions) > 8 else ""
        parts.append(f"It defines {shown}{more}.")
    else:
        parts.append("I found no function or class definitions in it.")
    first = next((line.strip() for line in lines if line.strip()), "")
    if first:
        parts.append(f"It starts with `{first[:80]}`.")
    return " ".join(parts) + "\n\n" + _WORDING[door].offer


def two_hunk_edit(path: str, lines: Sequence[str]) -> dict[str, str] | None:
    """``Edit`` input adding a note above line 1 and one after line :data:`SECOND_NOTE_AFTER`
    (or the last line of a shorter file); ``None`` for an empty file."""
    if not lines:
        return None
    prefix = _COMMENT_PREFIX.get(PurePath(path).suffix.lower(), "#")
    span = list(lines[: min(len(lines), SECOND_NOTE_AFTER)])
    new = [
        f"{prefix} Reviewed with lsp-agent's offline trial model.",
        *span,
        f"{prefix} (The trial model looked at the lines above.)",
    ]
    return {"file_path": path, "old_string": "\n".join(span), "new_string": "\n".join(new)}


def _after_results(
    prompt: str,
    results: Sequence[Mapping[str, Any]],
    calls: Mapping[str, Mapping[str, Any]],
    door: Door,
) -> ScriptedResponse:
    """The answer once the tools of the previous step have run (or were refused)."""
    result = results[-1]
    call = calls.get(str(result.get("tool_use_id")), {})
    name = str(call.get("name", "the tool"))
    tool_input = call.get("input") if isinstance(call.get("input"), Mapping) else {}
    assert isinstance(tool_input, Mapping)
    text = _result_text(result)
    step = len(calls) + 1
    if result.get("is_error"):
        if "rejected this tool call" in text:
            return _say(
                f"OK, I won't. The {name} call did not run and nothing was changed. "
                "Tell me what you would like instead.",
                door,
            )
        first = next((line for line in text.splitlines() if line.strip()), text)
        return _say(f"The {name} call failed: {first}", door)
    if name == "Read":
        path = str(tool_input.get("file_path", ""))
        lines = file_lines(text)
        if _intent(prompt) == "edit":
            edit = two_hunk_edit(path, lines)
            if edit is None:
                return _say(f"`{PurePath(path).name}` is empty; there is nothing to edit.", door)
            return _use(step, _WORDING[door].edit_lead, "Edit", edit)
        return _say(describe(path, lines, door=door), door)
    if name == "Edit":
        path = PurePath(str(tool_input.get("file_path", ""))).name
        return _say(_WORDING[door].edit_done.format(name=path), door)
    if name == "Bash":
        command = str(tool_input.get("command", ""))
        shown = "\n".join(text.splitlines()[:10]) or "(no output)"
        return _say(f"`{command}` ran. Its output begins:\n\n```\n{shown}\n```", door)
    if name.startswith("mcp__"):
        shown = "\n".join(text.splitlines()[:10]) or "(no text)"
        return _say(f"The MCP tool `{name}` returned:\n\n```\n{shown}\n```", door)
    return _say(f"The {name} call finished.", door)


def _mcp_tool(body: Mapping[str, Any], prompt: str) -> str | None:
    """The offered MCP tool the typed prompt names (``mcp__pics__red_square`` or just
    ``red_square``) and that needs no arguments; ``None`` when there is none."""
    typed = _typed(_MCP_RESOURCE.sub("", prompt))
    raw = body.get("tools")
    for tool in raw if isinstance(raw, list) else []:
        name = str(tool.get("name", "")) if isinstance(tool, Mapping) else ""
        short = name.split("__", 2)[-1].lower()
        schema = tool.get("input_schema") if isinstance(tool, Mapping) else None
        needs = schema.get("required") if isinstance(schema, Mapping) else None
        if name.startswith("mcp__") and not needs and re.search(rf"\b{re.escape(short)}\b", typed):
            return name
    return None


def _mcp_resources(prompt: str) -> str | None:
    """What the ``<mcp-resource>`` blocks the door attached say (their first lines, or the
    error); ``None`` when there are none."""
    parts = []
    for block in _MCP_RESOURCE.findall(prompt):
        head = block.split(">", 1)[0]
        server = re.search(r'server="([^"]*)"', head)
        uri = re.search(r'uri="([^"]*)"', head)
        where = f"`{server.group(1) if server else '?'}:{uri.group(1) if uri else '?'}`"
        error = re.search(r'error="([^"]*)"', head)
        if error:
            parts.append(f"{where} could not be read: {error.group(1)}")
            continue
        body = block.split(">", 1)[1].rsplit("</mcp-resource>", 1)[0].strip("\n")
        shown = "\n".join(body.splitlines()[:10]) or "(empty)"
        parts.append(f"The MCP resource {where} says:\n\n```\n{shown}\n```")
    return "\n\n".join(parts) or None


def _background_answer(body: Mapping[str, Any], prompt: str, door: Door) -> ScriptedResponse | None:
    """The answer to a request made off the user's turn: a session title (the first words of
    the prompt it quotes) or a compaction summary; ``None`` for the user's own requests."""
    system = body.get("system")
    parts = system if isinstance(system, list) else [{"text": system}]
    if any(TITLE_SYSTEM in str(p.get("text", "")) for p in parts if isinstance(p, Mapping)):
        quoted = prompt.split("<message>", 1)[-1].split("</message>", 1)[0]
        title = "Trial: " + " ".join(quoted.split()[:5])
        if title.count("`") % 2:  # cut inside a code span: close it
            title += "`"
        return ScriptedResponse(content=(ScriptedText(text=title),))  # a title: no signature
    if "CONTEXT CHECKPOINT" in prompt:
        return _say(
            "1. Goal: try lsp-agent with the offline trial model (no model behind it).", door
        )
    return None


def respond(body: Mapping[str, Any], *, door: Door = "editor") -> ScriptedResponse:
    """The trial model's answer to one ``/v1/messages`` request body (see the module doc),
    worded for ``door``."""
    raw = body.get("messages")
    messages = [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []
    if not messages:
        return _say("Hello! Ask me about a file.", door)
    last = messages[-1]
    prompt = _prompt(messages)
    background = _background_answer(body, _text_of(last), door)
    if background is not None:
        return background
    results = [b for b in _blocks(last) if b.get("type") == "tool_result"]
    calls = _calls(messages)
    if last.get("role") == "user" and results:
        return _after_results(prompt, results, calls, door)
    intent = _intent(prompt)
    step = len(calls) + 1
    tool = _mcp_tool(body, prompt)
    if tool is not None:
        return _use(step, f"I'll call the MCP tool `{tool}`.", tool, {})
    resources = _mcp_resources(prompt)
    if resources is not None and target_file(prompt, cwd=_cwd(body)) is None:
        return _say(resources, door)
    if intent == "run":
        commands = _BACKTICKS.findall(prompt)
        command = commands[0] if commands else DEFAULT_COMMAND
        return _use(
            step, f"I'll run `{command}`.", "Bash", {"command": command, "description": "Trial"}
        )
    cwd = _cwd(body)
    path = target_file(prompt, cwd=cwd)
    if path is None:
        return _say(_WORDING[door].can_do, door)
    if not PurePath(path).is_absolute() and cwd is not None:
        path = str(PurePath(cwd) / path.removeprefix("./"))
    lead = "Let me read the file first." if intent == "edit" else "Let me read it."
    return _use(step, lead, "Read", {"file_path": path})


# ---- serving it -------------------------------------------------------------------------------


@contextlib.contextmanager
def trial_endpoint(door: Door = "editor") -> Iterator[str]:
    """The trial model, worded for ``door``, behind a scripted Messages-API server on
    127.0.0.1, in a thread of this process, for the duration of the ``with`` block; yields its
    base URL."""
    from lsp_agent.testing.scenario import Scenario
    from lsp_agent.testing.thread import ScriptedServerThread

    server = ScriptedServerThread(
        scenario=Scenario(name="offline-trial", steps=()),
        responder=lambda body: respond(body, door=door),
    )
    base_url = server.start()
    try:
        yield base_url
    finally:
        server.stop()


_PROVIDER_VARIABLES = (
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_MODEL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)


OFFLINE_ENV = "LSP_AGENT_OFFLINE_RUN"
"""Set in an offline run's environment: its ``ANTHROPIC_API_KEY`` is the trial endpoint's
stand-in, not a credential of the user's (the init event says ``apiKeySource: "none"``)."""


def offline_environ(environ: Mapping[str, str], *, base_url: str) -> dict[str, str]:
    """``environ`` pointed at the trial endpoint at ``base_url`` (for ``run -p --offline``):
    its base URL and the scripted server's key, no retries, and none of the variables that
    would pick another provider, credential or model."""
    from lsp_agent.testing.scripted import SCRIPTED_API_KEY

    env = {k: v for k, v in environ.items() if k not in _PROVIDER_VARIABLES}
    env["ANTHROPIC_BASE_URL"] = base_url
    env["ANTHROPIC_API_KEY"] = SCRIPTED_API_KEY
    env[OFFLINE_ENV] = "1"
    env["LSP_AGENT_MAX_RETRIES"] = "0"
    return env


def trial_model_factory(base_url: str) -> Callable[[], Model]:
    """Model clients for the trial endpoint at ``base_url``: the real SDK client, with the
    scripted server's key (the endpoint accepts any) and no retries."""
    from lsp_agent.model.anthropic import AnthropicModel
    from lsp_agent.testing.scripted import SCRIPTED_API_KEY

    def make() -> Model:
        return AnthropicModel(api_key=SCRIPTED_API_KEY, base_url=base_url, max_retries=0)

    return make

#!/usr/bin/env python3
"""A long session that overflows a small context window many times.

``--turns`` user prompts (default 300), each answered by a ``Read`` of a project file and a
short text answer, run in one session on the real SDK against the scripted Messages-API server
on 127.0.0.1, with the ``scripted-20k`` model (a 20,000-token window). Each answer of the user's
turns takes ``--model-ms`` (time to first byte). Summaries are prepared ahead of time in the
background (past 70% of the compaction threshold), answered by the scenario's background
script after ``--summary-ms``; a compaction that finds none ready asks for it on the spot,
answered at once by a scenario route (requests whose last user message holds the summary
instruction), so the main script is simply played in order however often the session compacts.

Reported (Markdown; ``--json OUT`` writes the raw figures):

- whether the session completed, how many compactions and clearings happened;
- prompt tokens per request (request bytes / 4, as the scripted server counts them) by tenth
  of the run: flat means the history stays bounded instead of growing with the turn number;
- prefix reuse: the share of each request's prompt that repeats the previous request's prompt
  byte for byte (tools, system, then whole messages; ``cache_control`` markers ignored), i.e.
  what the prompt cache would read; given apart for requests right after a compaction;
- the simulated cache-read share of input tokens (``lsp_agent.testing.prompt_cache``: the
  API's rule, an entry per breakpoint, reads of the longest written prefix ending at or up to
  20 blocks before a breakpoint) per request outside compaction and clearing requests, and
  over all of them;
- per request outside rewrites: the distribution of the cache-read share (min, p10, p25,
  median), the share of requests reading >= 95%, and why a request reads less: the part it
  adds to the previous request (new by nature) or *lost* tokens (blocks the previous request
  sent at the same place that the cache did not give back: a breakpoint too far back, a
  re-rendered block);
- the compaction pause: agent time spent in the engine before the request that compacted,
  apart for compactions that used the summary prepared ahead of time and for those that had to
  wait for a summary request (its round trip included);
- every user prompt present verbatim in the final history, every tool_use paired.

``--model`` picks the model-table entry, so the window: ``scripted-20k`` (default) or a 200k
model such as ``claude-sonnet-4-5`` (the scripted server answers any name).

    python tools/bench_long_session.py [--turns 300] [--model scripted-20k] [--model-ms 20]
        [--summary-ms 200] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_agent.agent.env import AgentConfig
from lsp_agent.context.compaction import pairing_problems
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.protocol.events import ContextCompacted, SessionUpdate
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.compose import build_sessions
from lsp_agent.testing.prompt_cache import PromptCache, prompt_blocks
from lsp_agent.testing.scenario import Route, Scenario, expecting, reply, text, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.workspace.disk_host import DiskHost

MODEL = "scripted-20k"
FILE = "".join(
    f"def handler_{i}(request):\n    return respond(request, {i})\n\n" for i in range(40)
)
SUMMARY = (
    "1. Goal: answer the user's questions about the project files.\n"
    "2. User instructions: see the user's messages, kept verbatim.\n"
    "3. Decisions: none.\n4. Files: app.py read.\n5. Errors: none.\n"
    "6. Pending work: the next question.\n7. Current step: waiting for the user."
)


def common_tokens(prev: dict[str, Any], cur: dict[str, Any]) -> int:
    """Tokens (bytes / 4) of the blocks ``cur`` repeats from the start of ``prev``, block by
    block as the cache sees them: what a perfect cache would give back to ``cur``."""
    same = 0
    for (a, _), (b, _) in zip(prompt_blocks(prev), prompt_blocks(cur), strict=False):
        if a != b:
            break
        same += len(b.encode())
    return same // 4


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def build(turns: int, cwd: Path, *, model_ms: int, summary_ms: int) -> Scenario:
    steps = []
    for i in range(turns):
        steps.append(
            reply(
                text(f"Reading for question {i}."),
                tool_use("Read", {"file_path": f"{cwd}/app.py"}),
                delay_ms=model_ms,
            )
        )
        steps.append(
            reply(
                f"Answer {i}: handler_{i % 40} returns respond(request, {i % 40}).",
                delay_ms=model_ms,
            )
        )
    asked = expecting(last_user_contains="CONTEXT CHECKPOINT")
    route = Route(
        expect=asked,
        response=reply(SUMMARY).response,  # type: ignore[arg-type]
        note="compaction summary",
    )
    ahead = tuple(reply(SUMMARY, expect=asked, delay_ms=summary_ms) for _ in range(turns))
    background = {"summary": ahead, "title": (reply("Questions about app.py handlers"),)}
    return Scenario(name="long_session", steps=tuple(steps), routes=(route,), background=background)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))


def prefix_reuse(prev: dict[str, Any], cur: dict[str, Any]) -> float:
    """Share of ``cur``'s prompt bytes that repeat ``prev``'s prompt from its start."""
    head_prev = _strip([prev.get("tools"), prev.get("system")])
    head_cur = _strip([cur.get("tools"), cur.get("system")])
    total = _size(head_cur) + sum(_size(_strip(m)) for m in cur["messages"])
    if head_prev != head_cur:
        return 0.0
    same = _size(head_cur)
    for a, b in zip(prev["messages"], cur["messages"], strict=False):
        if _strip(a) != _strip(b):
            break
        same += _size(_strip(b))
    return same / total


async def run(
    turns: int, *, model: str = MODEL, model_ms: int = 20, summary_ms: int = 200
) -> dict[str, Any]:
    os.environ.setdefault(BACKGROUND_ENV, "1")  # LSP_AGENT_BACKGROUND_REQUESTS=0: the waiting path
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "project"
        cwd.mkdir()
        (cwd / "app.py").write_text(FILE)
        server = ScriptedServer(
            scenario=build(turns, cwd, model_ms=model_ms, summary_ms=summary_ms)
        )
        await server.start()
        client = AnthropicModel(api_key="bench", base_url=server.base_url, max_retries=0)
        events: list[SessionUpdate] = []
        host = DiskHost()
        original_emit = host.emit

        def emit(session_id: str, update: SessionUpdate) -> None:
            events.append(update)
            original_emit(session_id, update)

        host.emit = emit  # type: ignore[method-assign]
        manager = build_sessions(
            host=host,
            model_factory=lambda: client,
            config=AgentConfig(
                model=model, permission_mode="acceptEdits", state_dir=Path(tmp) / "state"
            ),
        )
        session = manager.new(cwd=cwd)
        engine = session.engine()
        pauses: list[float] = []
        ready_pauses: list[float] = []
        inner_prepare = engine.prepare

        async def timed_prepare(**kw: Any) -> Any:
            used = session.context.early_used
            start = time.perf_counter()
            prepared = await inner_prepare(**kw)
            if prepared.boundary is not None:
                pause = (time.perf_counter() - start) * 1000
                (ready_pauses if session.context.early_used > used else pauses).append(pause)
            return prepared

        engine.prepare = timed_prepare  # type: ignore[method-assign]
        prompts = [
            f"Question {i}: what does handler_{i % 40} return? Keep answers short."
            for i in range(turns)
        ]
        failures = []
        start = time.perf_counter()
        for p in prompts:
            result = await session.prompt([PromptText(text=p)])
            if result.error or result.stop_reason != "end_turn":
                failures.append(result.error or result.stop_reason)
        wall = time.perf_counter() - start
        await manager.aclose()
        await server.stop()
        problems = server.failures + [f"unconsumed steps: {len(server.unconsumed())}"] * bool(
            server.unconsumed()
        )
        main = [
            e
            for e in server.exchanges
            if e.outcome == "response"
            and (e.step or 0) >= 0
            and e.step is not None
            and e.background is None
        ]
        ahead = [e for e in server.exchanges if e.background == "summary"]
        cache = PromptCache()
        usage = {id(e): cache.account(e.body) for e in server.exchanges if e.outcome == "response"}
        shares = [usage[id(e)] for e in main[1:]]
        bodies = [e.body for e in main]
        sizes = [
            _size(_strip([b.get("tools"), b.get("system"), b["messages"]])) // 4 for b in bodies
        ]
        reuse = [prefix_reuse(bodies[i - 1], bodies[i]) for i in range(1, len(bodies))]
        rewritten = [_rewritten(bodies[i - 1], bodies[i]) for i in range(1, len(bodies))]
        steady = [r for r, w in zip(reuse, rewritten, strict=True) if not w]
        cached = [u for u, w in zip(shares, rewritten, strict=True) if not w]
        growth = [
            1 - u.cache_read_input_tokens / u.total for u in cached
        ]  # the part each request adds to the previous one
        after = [r for r, w in zip(reuse, rewritten, strict=True) if w]
        steady_pairs = [
            (bodies[i - 1], bodies[i], shares[i - 1])
            for i in range(1, len(bodies))
            if not rewritten[i - 1]
        ]
        lost = [max(0, common_tokens(a, b) - u.cache_read_input_tokens) for a, b, u in steady_pairs]
        under = [u for u in cached if u.read_share < 0.95]
        under_lost = sum(1 for u, x in zip(cached, lost, strict=True) if u.read_share < 0.95 and x)
        read_shares = [u.read_share for u in cached]
        # Outside compaction only: clearing requests count (a compaction rewrites the
        # conversation's first message, a clearing only older tool results).
        compacted = [
            w and _strip(bodies[i]["messages"][0]) != _strip(bodies[i + 1]["messages"][0])
            for i, w in enumerate(rewritten)
        ]
        outside = [u for u, c in zip(shares, compacted, strict=True) if not c]
        final_start = session.history[0].text() if session.history else ""
        kept = sum(
            1
            for p in prompts[-5:]
            if p in final_start or any(p in m.text() for m in session.history)
        )
        tenth = max(1, len(sizes) // 10)
        return {
            "turns": turns,
            "requests": len(bodies),
            "failures": failures[:5],
            "server_problems": problems[:5],
            "wall_s": wall,
            "compactions": sum(isinstance(e, ContextCompacted) for e in events),
            "tokens_by_tenth": [
                int(statistics.mean(sizes[i : i + tenth])) for i in range(0, len(sizes), tenth)
            ],
            "tokens_max": max(sizes),
            "reuse_steady_median": statistics.median(steady) if steady else 0.0,
            "reuse_steady_min": min(steady) if steady else 0.0,
            "reuse_steady_share_ge_95": sum(r >= 0.95 for r in steady) / max(1, len(steady)),
            "model": model,
            "cache_read_share_steady_median": statistics.median(read_shares),
            "cache_read_share_steady_p25": _quantile(read_shares, 0.25),
            "cache_read_share_steady_p10": _quantile(read_shares, 0.10),
            "cache_read_share_steady_min": min(read_shares),
            "steady_requests": len(cached),
            "steady_requests_under_95": len(under),
            "steady_under_95_with_lost_tokens": under_lost,
            "lost_tokens_steady_total": sum(lost),
            "lost_tokens_steady_max": max(lost) if lost else 0,
            "cache_read_share_steady_ge_95": sum(u.read_share >= 0.95 for u in cached)
            / max(1, len(cached)),
            "cache_read_share_steady_overall": sum(u.cache_read_input_tokens for u in cached)
            / max(1, sum(u.total for u in cached)),
            "clearing_requests": sum(rewritten) - sum(compacted),
            "cache_read_share_outside_compaction_ge_95": sum(u.read_share >= 0.95 for u in outside)
            / max(1, len(outside)),
            "cache_read_share_outside_compaction_overall": sum(
                u.cache_read_input_tokens for u in outside
            )
            / max(1, sum(u.total for u in outside)),
            "cache_read_share_all_overall": sum(u.cache_read_input_tokens for u in shares)
            / max(1, sum(u.total for u in shares)),
            "new_part_steady_max": max(growth),
            "rewrites": len(after),
            "reuse_after_rewrite_median": statistics.median(after) if after else 0.0,
            "summaries_prepared_ahead": len(ahead),
            "compactions_with_prepared_summary": len(ready_pauses),
            "pause_ms_prepared_median": statistics.median(ready_pauses) if ready_pauses else 0.0,
            "pause_ms_prepared_max": max(ready_pauses) if ready_pauses else 0.0,
            "compactions_waiting_for_summary": len(pauses),
            "pause_ms_waiting_median": statistics.median(pauses) if pauses else 0.0,
            "pause_ms_waiting_max": max(pauses) if pauses else 0.0,
            "newest_prompts_verbatim": f"{kept}/5",
            "pairing_problems": len(pairing_problems(session.history)),
            "_steady_detail": [  # --json only: (prompt tokens, read share, lost tokens)
                (u.total, round(u.read_share, 4), x) for u, x in zip(cached, lost, strict=True)
            ],
        }


def _rewritten(prev: dict[str, Any], cur: dict[str, Any]) -> bool:
    """Whether ``cur`` does not simply extend ``prev`` (a clearing or a compaction happened)."""
    old, new = prev["messages"], cur["messages"]
    return len(new) < len(old) or any(
        _strip(a) != _strip(b) for a, b in zip(old, new, strict=False)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--model", default=MODEL, help="model-table entry (its window)")
    parser.add_argument("--model-ms", type=int, default=20, help="time to first byte, ms")
    parser.add_argument("--summary-ms", type=int, default=200, help="background summary, ms")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures = asyncio.run(
        run(args.turns, model=args.model, model_ms=args.model_ms, summary_ms=args.summary_ms)
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    print("| figure | value |\n| --- | --- |")
    for key, value in figures.items():
        if key.startswith("_"):
            continue
        shown = f"{value:.3f}" if isinstance(value, float) else value
        print(f"| {key} | {shown} |")
    ok = not figures["failures"] and not figures["server_problems"]
    return 0 if ok and figures["pairing_problems"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Generated malformed messages against one real ``lsp-agent serve``, a valid probe after each:
0 crashes, 0 hangs, 0 unanswered requests, 0 wrong error codes (docs/security.md has the
figures)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from .generate import cases
from .wire import RawServer, frame

CASES = int(os.environ.get("LSP_AGENT_FUZZ_CASES", "2000"))
SEED = int(os.environ.get("LSP_AGENT_FUZZ_SEED", "20261201"))


def test_generated_malformed_messages(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "fuzz.py").write_text("x = 1\n")
    generated = cases(root_uri=root.as_uri(), count=CASES, seed=SEED)
    assert len(generated) >= CASES
    server = RawServer(root=root)
    failures: list[str] = []
    tally: Counter[str] = Counter()
    try:
        assert server.initialize() is not None
        for index, case in enumerate(generated):
            seen = len(server.null_errors_since(0))
            server.write(frame(case.body))
            answer = server.wait_answer(case.msg_id) if case.msg_id is not None else None
            probed = server.probe()
            tally[case.family] += 1
            where = f"case {index} ({case.family}) {case.body[:160]!r}"
            if not server.alive():
                failures.append(f"crash after {where}:\n{server.stderr()}")
                break
            if not probed:
                failures.append(f"hang: the probe after {where} was not answered")
                break
            if case.msg_id is not None:
                if answer is None:
                    failures.append(f"unanswered: {where}")
                    continue
                code = answer["error"]["code"] if "error" in answer else None
                if code not in case.codes:
                    failures.append(f"wrong answer {answer!r:.300} to {where}")
                continue
            codes = [e["error"]["code"] for e in server.null_errors_since(seen)]
            expected = list(case.codes) if case.family in ("parse", "envelope") else []
            if case.family == "nested" and codes == [-32700]:
                continue  # too deep to parse: it could not be known to be a notification
            if codes != expected:
                failures.append(f"got {codes} (expected {expected}) for {where}")
    finally:
        exit_code = server.close()
    print(f"fuzz: {len(generated)} cases {dict(tally)}; failures {len(failures)}")
    assert failures == [], "\n".join(failures[:20])
    assert exit_code == 0, server.stderr()

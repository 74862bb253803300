"""The OAuth credentials file: per server name and URL, 0600, atomic, fail-closed on a broken
file; and the ``oauth.callbackPort`` key of a server definition."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from lsp_agent.mcp.config import ServerSpec, read_config_text
from lsp_agent.mcp.oauth_store import entry_key, load_entry, oauth_path, update_entry


def test_entries_are_kept_per_name_and_url_in_a_private_file(tmp_path: Path) -> None:
    update_entry(tmp_path, "tracker", "https://a.example/mcp", tokens={"access_token": "t1"})
    update_entry(tmp_path, "tracker", "https://b.example/mcp", tokens={"access_token": "t2"})
    path = oauth_path(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    # The same name at another URL never gets the first server's token.
    assert load_entry(tmp_path, "tracker", "https://a.example/mcp")["tokens"] == {
        "access_token": "t1"
    }
    assert load_entry(tmp_path, "tracker", "https://b.example/mcp")["tokens"] == {
        "access_token": "t2"
    }
    assert load_entry(tmp_path, "other", "https://a.example/mcp") == {}
    data = json.loads(path.read_text())
    assert data["version"] == 1
    assert set(data["servers"]) == {
        entry_key("tracker", "https://a.example/mcp"),
        entry_key("tracker", "https://b.example/mcp"),
    }


def test_none_removes_a_field_and_an_empty_entry(tmp_path: Path) -> None:
    url = "https://a.example/mcp"
    update_entry(tmp_path, "s", url, tokens={"access_token": "t"}, client_info={"client_id": "c"})
    update_entry(tmp_path, "s", url, tokens=None)
    assert load_entry(tmp_path, "s", url) == {
        "server": "s",
        "url": url,
        "client_info": {"client_id": "c"},
    }
    update_entry(tmp_path, "s", url, client_info=None)
    assert json.loads(oauth_path(tmp_path).read_text())["servers"] == {}


def test_a_broken_file_reads_as_no_credentials_and_is_not_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = oauth_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"servers": {"s u": {"tokens": {"access_token": "secret-token"}}')
    assert load_entry(tmp_path, "s", "u") == {}
    assert "unreadable" in caplog.text and "secret-token" not in caplog.text
    # Writing replaces the broken file with a good one.
    update_entry(tmp_path, "s", "u", tokens={"access_token": "new"})
    assert load_entry(tmp_path, "s", "u")["tokens"] == {"access_token": "new"}


def _server(entry: object) -> tuple[ServerSpec | None, tuple[str, ...]]:
    file = read_config_text(
        json.dumps({"mcpServers": {"s": entry}}), path=None, scope="cli", environ={}
    )
    return (file.servers[0] if file.servers else None), tuple(p.message for p in file.problems)


def test_oauth_callback_port_is_read_and_checked() -> None:
    spec, problems = _server(
        {"type": "http", "url": "https://x/mcp", "oauth": {"callbackPort": 8765}}
    )
    assert problems == () and spec is not None and spec.callback_port == 8765
    spec, problems = _server({"type": "http", "url": "https://x/mcp"})
    assert problems == () and spec is not None and spec.callback_port is None
    for bad in ({"callbackPort": "8765"}, {"callbackPort": 70000}, {"callbackPort": True}):
        spec, problems = _server({"type": "http", "url": "https://x/mcp", "oauth": bad})
        assert spec is None and "callbackPort" in problems[0]
    spec, problems = _server({"type": "http", "url": "https://x/mcp", "oauth": []})
    assert spec is None and '"oauth" must be an object' in problems[0]


def test_a_pre_registered_client_is_read_with_its_secret_expanded_and_never_shown() -> None:
    entry = {
        "type": "http",
        "url": "https://x/mcp",
        "oauth": {
            "clientId": "cid",
            "clientSecret": "${SECRET}",
            "scopes": "read  write",
            "callbackPort": 8080,
        },
    }
    file = read_config_text(
        json.dumps({"mcpServers": {"s": entry}}),
        path=None,
        scope="cli",
        environ={"SECRET": "s3cret-value"},
    )
    (spec,) = file.servers
    assert file.problems == ()
    assert (spec.client_id, spec.client_secret, spec.scopes) == (
        "cid",
        "s3cret-value",
        "read write",
    )
    assert "s3cret-value" not in repr(spec) and "s3cret-value" not in spec.describe()
    spec, _ = _server({"type": "http", "url": "https://x/mcp", "oauth": {"scopes": ["a", "b"]}})
    assert spec is not None and spec.scopes == "a b" and spec.client_id is None


@pytest.mark.parametrize(
    ("oauth", "key"),
    [
        ({"clientId": ""}, "clientId"),
        ({"clientId": 7}, "clientId"),
        ({"clientSecret": "s"}, "needs"),
        ({"clientId": "c", "clientSecret": ["s"]}, "clientSecret"),
        ({"scopes": ""}, "scopes"),
        ({"scopes": [1]}, "scopes"),
    ],
)
def test_a_malformed_oauth_client_is_a_problem(oauth: dict[str, object], key: str) -> None:
    spec, problems = _server({"type": "http", "url": "https://x/mcp", "oauth": oauth})
    assert spec is None and key in problems[0]


def _login_many(home: str, prefix: str) -> None:
    for i in range(30):
        update_entry(Path(home), f"{prefix}{i}", "https://x.example/mcp", tokens={"t": i})


def test_concurrent_writers_keep_each_others_entries(tmp_path: Path) -> None:
    """Two processes (an editor's server refreshing a token, ``lsp-agent mcp login``) update
    the file at once: each one's entries survive the other's writes."""
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    workers = [spawn.Process(target=_login_many, args=(str(tmp_path), p)) for p in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    missing = [
        f"{p}{i}"
        for p in "ab"
        for i in range(30)
        if not load_entry(tmp_path, f"{p}{i}", "https://x.example/mcp")
    ]
    assert missing == []

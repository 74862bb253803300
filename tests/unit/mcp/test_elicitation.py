"""Elicitation forms as button questions: which forms buttons can answer, and the answers."""

from __future__ import annotations

from lsp_agent.mcp.elicitation import question_for


def test_forms_buttons_can_answer() -> None:
    empty = question_for({"type": "object", "properties": {}})
    assert empty is not None and empty.choices == ("Accept", "Decline")
    assert empty.answer("Accept") == ("accept", {})
    flag = question_for({"type": "object", "properties": {"proceed": {"type": "boolean"}}})
    assert flag is not None and flag.choices == ("Yes", "No", "Decline")
    assert flag.answer("No") == ("accept", {"proceed": False})
    assert flag.answer("Decline") == ("decline", None)
    assert flag.answer(None) == ("cancel", None)  # dismissed
    assert flag.answer("Something else") == ("cancel", None)
    pick = question_for({"properties": {"size": {"type": "string", "enum": ["S", "M"]}}})
    assert pick is not None and pick.choices == ("S", "M", "Decline")
    assert pick.answer("M") == ("accept", {"size": "M"})


def test_other_forms_are_not_shown() -> None:
    two = {"properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    assert question_for(two) is None
    assert question_for({"properties": {"name": {"type": "string"}}}) is None
    assert question_for({"properties": {"x": {"enum": ["Decline", "Go"]}}}) is None
    assert question_for({"properties": {"x": {"enum": [str(i) for i in range(11)]}}}) is None


def test_a_url_request_is_asked_naming_its_host_and_showing_the_whole_url() -> None:
    from lsp_agent.mcp.elicitation import url_consent, url_host

    url = "https://Accounts.Example.com:8443/connect?session=s1"
    question, button = url_consent("pages", "Connect your account", url) or ("", "")
    assert question == (
        "MCP server 'pages' asks you to open a page on accounts.example.com: "
        f"Connect your account\n{url}"
    )
    assert button == "Open accounts.example.com"
    assert url_host("http://127.0.0.1:9/x") == "127.0.0.1"
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "https://", "vscode://x/y", "[::"):
        assert url_host(bad) is None and url_consent("s", "m", bad) is None


def test_url_consent_names_the_host_the_browser_would_open() -> None:
    """The consent button names a host; browsers parse URLs by the WHATWG rules, where a
    backslash ends the host of an http(s) URL ("https://evil.example\\@docs.example/" opens
    evil.example, while Python's parser reads docs.example) and userinfo before "@" is a
    classic disguise: such URLs are not asked (declined). A host in another script is named
    in its ASCII (punycode) form, as the browser's address bar shows it."""
    from lsp_agent.mcp.elicitation import url_consent, url_host

    for bad in (
        "https://evil.example\\@docs.example/",
        "https://evil.example\\docs.example/",
        "https://docs.example@evil.example/",
        "https://user:pass@docs.example/",
    ):
        assert url_host(bad) is None and url_consent("s", "m", bad) is None, bad
    assert url_host("https://\u0430pple.com/login") == "xn--pple-43d.com"
    assert url_host("https://docs.example/path\\with\\backslash") == "docs.example"

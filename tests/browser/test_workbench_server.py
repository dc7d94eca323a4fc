"""The workbench's HTTP surface: loopback bind, static files only, 400s naming the field."""

from __future__ import annotations

import json

import pytest
from workbench_helpers import get

from memcommit.workbench import BankSource, make_server


def test_binds_loopback_by_default() -> None:
    server = make_server(BankSource())
    try:
        assert server.server_address[0] == "127.0.0.1"
        assert server.url.startswith("http://127.0.0.1:")
    finally:
        server.server_close()
        server.source.close()


def test_page_and_assets_are_served_with_a_strict_policy(bank_url: str) -> None:
    status, headers, body = get(bank_url, "/")
    assert status == 200 and b"Memory bank: pack a bounded context" in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    for name, kind in (("app.js", "javascript"), ("style.css", "text/css")):
        status, headers, _ = get(bank_url, f"/static/{name}")
        assert status == 200 and kind in headers["Content-Type"]


def test_the_favicon_browsers_ask_for_is_there(bank_url: str) -> None:
    status, headers, body = get(bank_url, "/favicon.ico")
    assert status == 200 and headers["Content-Type"].startswith("image/svg+xml")
    assert body == get(bank_url, "/static/favicon.svg")[2] and body.startswith(b"<svg")
    assert b'rel="icon" href="/static/favicon.svg"' in get(bank_url, "/")[2]


@pytest.mark.parametrize(
    "path",
    [
        "/static/../server.py",
        "/static/%2e%2e/server.py",
        "/static/..%2fserver.py",
        "/static/..%5cserver.py",
        "/static/../../../../etc/passwd",
        "/static//etc/passwd",
        "/static/",
        "/../pyproject.toml",
        "/static/static/app.js",
        "/server.py",
    ],
)
def test_path_traversal_is_refused(bank_url: str, path: str) -> None:
    status, _, body = get(bank_url, path)
    assert status == 404
    assert b"import" not in body and b"root:" not in body


def test_only_get_is_allowed(bank_url: str) -> None:
    status, headers, body = get(bank_url, "/api/recall", method="POST")
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    assert json.loads(body)["error"]["field"] == "method"


def test_foreign_host_header_is_refused(bank_url: str) -> None:
    status, _, body = get(bank_url, "/api/config", host="evil.example:80")
    assert status == 400 and json.loads(body)["error"]["field"] == "host"


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("budget=abc", "budget"),
        ("budget=-1", "budget"),
        ("max_records=1.5", "max_records"),
        ("recency=2", "recency"),
        ("recency=nan", "recency"),
        ("store=cache", "store"),
        ("tenant=team-c", "tenant"),
        ("question=nope", "question"),
        ("max_age=-3", "max_age"),
        ("previous=maybe", "previous"),
        ("latest=2", "latest"),
        ("outcome=some", "outcome"),
        ("limit=0", "limit"),
        ("budget=1&budget=2", "budget"),
    ],
)
def test_bad_parameters_get_400_naming_the_field(bank_url: str, query: str, field: str) -> None:
    status, headers, body = get(bank_url, "/api/rows?" + query)
    assert status == 400
    assert headers["Content-Type"].startswith("application/json")
    error = json.loads(body)["error"]
    assert error["field"] == field
    assert field in error["message"]


def test_recall_answer_carries_the_context_and_rows_page_it(bank_url: str) -> None:
    status, _, body = get(bank_url, "/api/recall?budget=11")
    selection = json.loads(body)
    assert status == 200
    assert selection["selected"] == ["M4"]
    assert selection["context"]["unit"] == "words" and selection["context"]["budget"] == 11
    assert selection["rendered"] == "- " + selection["selected_memories"][0]["content"]
    status, _, body = get(bank_url, "/api/rows?budget=11&limit=4&offset=8")
    rows = json.loads(body)
    assert status == 200 and rows["total"] == 10
    assert [r["id"] for r in rows["rows"]] == ["M9", "M10"]
    assert rows["counts"]["selected"] == 1 and sum(rows["counts"]["reasons"].values()) == 9


def test_unknown_api_is_404(bank_url: str) -> None:
    status, _, body = get(bank_url, "/api/write")
    assert status == 404 and json.loads(body)["error"]["field"] == "path"

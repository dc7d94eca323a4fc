"""What the workbench's API takes and how it refuses the rest: ASCII whole numbers, bounded
answers, the typed text in an error, and the documented error body on every status."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from urllib.parse import quote

import pytest
from workbench_helpers import get, running

import memcommit
from memcommit.workbench import BankSource, StoreSource, make_server

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
#: The documented bounds of one recall of the page (docs/workbench.md, "Bounds").
MAX_BUDGET, MAX_RECORDS = 20_000, 1_000


def error_of(url: str, path: str, method: str = "GET", host: str | None = None):
    """(status, error body) of a refused request."""
    status, _, body = get(url, path, method=method, host=host)
    return status, json.loads(body).get("error", {})


@pytest.fixture(scope="module")
def live_url(tmp_path_factory):
    """A served store of one tenant, for the live-only fields (pools)."""
    path = tmp_path_factory.mktemp("inputs") / "m.db"
    with memcommit.open(str(path)) as store, store.commit(message="seed", now=NOW) as tx:
        for i in range(5):
            tx.add(f"deploy note {i}", tenant="alpha")
    source = StoreSource(memcommit.open(str(path), read_only=True), clock=lambda: NOW)
    yield from running(make_server(source))
    source.close()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("budget=" + quote("١٠"), "budget"),  # Arabic-Indic digits: int() reads them
        ("budget=10_000", "budget"),  # int() reads this too
        ("max_records=" + quote("５"), "max_records"),  # fullwidth 5
        ("max_age=1_0", "max_age"),
        ("offset=" + quote("٣"), "offset"),
        ("recency=" + quote("٠.٥"), "recency"),
        ("recency=0.0_1", "recency"),  # float() reads this as 0.01
    ],
)
def test_numbers_are_ascii_digits_only(bank_url: str, query: str, field: str) -> None:
    status, error = error_of(bank_url, "/api/recall?" + query)
    assert status == 400 and error["field"] == field
    assert error["reason"].startswith("must be a")


def test_budget_and_records_are_bounded_for_the_page(bank_url: str) -> None:
    for field, cap in (("budget", MAX_BUDGET), ("max_records", MAX_RECORDS)):
        status, error = error_of(bank_url, f"/api/recall?{field}=10000000")
        assert status == 400 and error["field"] == field and error["value"] == "10000000"
        assert error["reason"] == f"must be between 0 and {cap}"
        status, _, _ = get(bank_url, f"/api/recall?{field}={cap}")
        assert status == 200


@pytest.mark.parametrize(
    ("pools", "reason"),
    [
        ("a:99999999999999999999:1", "words must be between"),
        ("a:5:99999999999999999999", "entries must be between"),
        ("a:x:1", "words must be a whole number"),
        ("big:150:1 small:100:1", "reserve more than the budget"),  # recall's own refusal
    ],
)
def test_a_refused_pool_is_quoted_as_typed(live_url: str, pools: str, reason: str) -> None:
    query = f"tenant=alpha&query=deploy&budget=200&pools={quote(pools)}"
    status, error = error_of(live_url, "/api/recall?" + query)
    assert status == 400 and error["field"] == "pools"
    assert error["value"] in pools and "Pool(" not in error["value"]
    assert error["reason"].startswith(reason)
    if "budget" in reason:
        assert error["value"] == pools


def test_every_error_body_has_the_documented_keys(bank_url: str) -> None:
    keys = {"field", "value", "reason", "message"}
    for status, error in (
        error_of(bank_url, "/api/write"),
        error_of(bank_url, "/nope"),
        error_of(bank_url, "/api/recall", method="POST"),
        error_of(bank_url, "/api/config", host="evil.example:80"),
    ):
        assert status in (400, 404, 405) and set(error) == keys and error["reason"]


def test_an_internal_error_has_the_documented_keys(monkeypatch) -> None:
    source = BankSource()

    def broken(params):
        raise RuntimeError("a bug")

    monkeypatch.setattr(source, "config", broken)
    for url in running(make_server(source)):
        status, error = error_of(url, "/api/config")
        assert status == 500 and set(error) == {"field", "value", "reason", "message"}
        assert "a bug" in error["reason"]
    source.close()


def test_on_port_80_the_host_header_without_a_port_is_this_machine() -> None:
    server = make_server(BankSource())
    try:
        server.server_address = ("127.0.0.1", 80)  # (binding 80 itself needs privileges)
        for header in ("127.0.0.1", "localhost", "[::1]", "127.0.0.1:80", "localhost:80"):
            assert server.allowed_host(header), header
        for header in ("evil.example", "evil.example:80", "127.0.0.1:81", None):
            assert not server.allowed_host(header), header
        server.server_address = ("127.0.0.1", 8766)
        assert not server.allowed_host("127.0.0.1")  # elsewhere the port must be said
        assert server.allowed_host("127.0.0.1:8766")
    finally:
        server.server_close()
        server.source.close()

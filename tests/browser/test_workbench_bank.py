"""The teaching bank under memcommit's own recall(): both walkthroughs of seed 004, exactly.

These run without a browser (the page tests repeat the walkthroughs in Chromium).
"""

from __future__ import annotations

import pytest

from memcommit.workbench import BankSource
from memcommit.workbench.bank import QUESTIONS, RECORDS, TENANTS

PROCEDURE = {
    "question": "timeout-procedure",
    "store": "procedural",
    "tenant": "team-a",
    "previous": "1",
    "max_age": "168",
    "latest": "0",
    "recency": "0",
    "budget": "11",
    "max_records": "3",
}
INCIDENT = {**PROCEDURE, "question": "timeout-incident", "store": "all", "budget": "80"}
INCIDENT["max_records"] = "1"


@pytest.fixture(scope="module")
def bank() -> BankSource:
    source = BankSource()
    yield source
    source.close()


def ask(bank: BankSource, base: dict[str, str], **changes: object) -> dict:
    """The page's two answers for these settings: the selection and every row."""
    params = {k: [str(v)] for k, v in {**base, **changes}.items()}
    return {**bank.recall(params), **bank.rows(params)}


def reasons(result: dict) -> dict[str, str | None]:
    return {row["id"]: row["reason"] for row in result["rows"]}


def test_bank_is_ten_records_across_four_stores_and_two_tenants() -> None:
    assert [r.id for r in RECORDS] == [f"M{i}" for i in range(1, 11)]
    assert {r.kind for r in RECORDS} == {"fact", "event", "procedure", "working"}
    assert {r.tenant for r in RECORDS} == set(TENANTS)
    assert len(QUESTIONS) == 4


@pytest.mark.parametrize(
    ("budget", "selected", "found"),
    [
        (11, ["M4"], ["M4"]),
        (10, ["M7"], []),
        (9, [], []),
        (20, ["M4"], ["M4"]),
        (21, ["M4", "M7"], ["M4"]),
    ],
)
def test_walkthrough_one_budget(bank: BankSource, budget: int, selected: list, found: list) -> None:
    result = ask(bank, PROCEDURE, budget=budget)
    assert result["selected"] == selected
    assert result["coverage"] == {"declared": ["M4"], "found": found}
    why = reasons(result)
    if "M4" not in selected:
        assert why["M4"] == "over_budget"
    if budget == 10:
        # M7 shares only "logs" with the question, yet it is the next candidate that fits.
        rows = {r["id"]: r for r in result["rows"]}
        assert 0 < rows["M7"]["cosine"] < rows["M4"]["cosine"]
        assert rows["M7"]["words"] == 10 and rows["M4"]["words"] == 11


def test_walkthrough_one_record_limit(bank: BankSource) -> None:
    result = ask(bank, PROCEDURE, budget=21, max_records=1)
    assert result["selected"] == ["M4"]
    assert reasons(result)["M7"] == "over_record_limit"


def test_walkthrough_two_recency(bank: BankSource) -> None:
    cosine_only = ask(bank, INCIDENT, recency=0)
    recency_only = ask(bank, INCIDENT, recency=1)
    assert cosine_only["selected"] == ["M3"]
    assert recency_only["selected"] == ["M5"]


@pytest.mark.parametrize("recency", ["0", "1"])
def test_walkthrough_two_age_boundary(bank: BankSource, recency: str) -> None:
    at_47 = ask(bank, INCIDENT, store="episodic", recency=recency, max_age=47)
    at_48 = ask(bank, INCIDENT, store="episodic", recency=recency, max_age=48)
    assert reasons(at_47)["M3"] == "too_old"
    assert at_47["selected"] == []
    assert at_48["selected"] == ["M3"]


@pytest.mark.parametrize("max_age", ["48", "168", "1000", ""])
def test_walkthrough_two_previous_sessions_off(bank: BankSource, max_age: str) -> None:
    result = ask(bank, INCIDENT, store="episodic", previous=0, max_age=max_age)
    assert reasons(result)["M3"] == "previous_session"
    assert result["selected"] == []


@pytest.mark.parametrize("question", [q.id for q in QUESTIONS])
@pytest.mark.parametrize("tenant", list(TENANTS))
def test_tenants_never_select_each_others_records(
    bank: BankSource, question: str, tenant: str
) -> None:
    result = ask(
        bank, PROCEDURE, question=question, tenant=tenant, store="all", budget=500, max_records=10
    )
    owners = {r.id: r.tenant for r in RECORDS}
    assert all(owners[i] == tenant for i in result["selected"])
    assert len(result["rows"]) == 10  # every record stays visible
    for row in result["rows"]:
        if owners[row["id"]] != tenant:
            assert row["reason"] == "other_tenant" and row["cosine"] is None


def test_latest_per_key_excludes_older_even_when_newer_is_filtered(bank: BankSource) -> None:
    base = {**PROCEDURE, "question": "connection-limit", "store": "semantic", "budget": "100"}
    kept = ask(bank, base, latest=0)
    latest = ask(bank, base, latest=1)
    assert "M1" in kept["selected"]  # the stale limit, when every key version competes
    assert reasons(latest)["M1"] == "superseded"
    assert reasons(latest)["M6"] == "other_kind"  # the newer one is filtered out as well
    assert "M1" not in latest["selected"]


def test_latest_per_key_never_crosses_tenants(bank: BankSource) -> None:
    # M10 (Team B) shares M2's key and is newer; Team A's M2 must not be affected.
    result = ask(bank, PROCEDURE, store="semantic", max_age=1000, latest=1, budget=100)
    assert reasons(result)["M2"] != "superseded"


def test_zero_overlap_question_selects_nothing_and_says_why(bank: BankSource) -> None:
    result = ask(
        bank, PROCEDURE, question="lunch-venue", store="all", max_age="", budget=500, max_records=10
    )
    assert result["selected"] == []
    own = [r for r in result["rows"] if r["tenant"] == "team-a"]
    assert own and all(r["reason"] == "no_lexical_match" for r in own)
    assert result["coverage"] == {"declared": [], "found": []}


def test_every_row_has_a_reason_or_is_selected(bank: BankSource) -> None:
    result = ask(bank, INCIDENT)
    for row in result["rows"]:
        assert (row["outcome"] == "selected") == (row["reason"] is None)

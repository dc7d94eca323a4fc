"""Invariants of the workbench over the teaching bank, for any setting of its controls."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcommit.errors import InvalidInput
from memcommit.model import STORES
from memcommit.recall import Words, recall
from memcommit.workbench import BankSource
from memcommit.workbench.bank import BANK_NOW, CURRENT_SESSION, QUESTIONS, RECORDS

PARAMETERS = (
    "question",
    "store",
    "tenant",
    "previous",
    "max_age",
    "latest",
    "recency",
    "budget",
    "max_records",
    "offset",
    "limit",
    "outcome",
)
WORDS = {r.id: len(r.content.split()) for r in RECORDS}
OWNER = {r.id: r.tenant for r in RECORDS}


@pytest.fixture(scope="module")
def bank():
    source = BankSource()
    yield source
    source.close()


@settings(max_examples=120, deadline=None)
@given(
    question=st.sampled_from(QUESTIONS),
    store=st.sampled_from([*STORES, "all"]),
    tenant=st.sampled_from(sorted(CURRENT_SESSION)),
    previous=st.booleans(),
    max_age=st.one_of(st.none(), st.integers(0, 400)),
    latest=st.booleans(),
    recency=st.sampled_from([0.0, 0.05, 0.5, 0.95, 1.0]),
    budget=st.integers(0, 60),
    max_records=st.integers(0, 10),
)
def test_the_page_shows_exactly_what_recall_selects(
    bank, question, store, tenant, previous, max_age, latest, recency, budget, max_records
) -> None:
    params = {
        "question": question.id,
        "store": store,
        "tenant": tenant,
        "previous": "1" if previous else "0",
        "max_age": "" if max_age is None else str(max_age),
        "latest": "1" if latest else "0",
        "recency": str(recency),
        "budget": str(budget),
        "max_records": str(max_records),
    }
    query = {k: [v] for k, v in params.items()}
    result = {**bank.recall(query), **bank.rows(query)}
    direct = recall(
        bank.store,
        question.text,
        tenant=tenant,
        kinds=None if store == "all" else STORES[store],
        session=CURRENT_SESSION[tenant],
        include_previous_sessions=previous,
        max_age=None if max_age is None else timedelta(hours=max_age),
        latest_per_key=latest,
        recency_weight=recency,
        budget=Words(budget),
        max_records=max_records,
        scorer="tfidf",
        now=BANK_NOW,
    )
    # One source of truth: the page's selection is recall()'s, in render order.
    assert result["selected"] == [m.id for m in direct.selected]
    assert sorted(r["id"] for r in result["rows"]) == sorted(OWNER)  # every record visible
    assert sum(WORDS[i] for i in result["selected"]) <= budget
    assert len(result["selected"]) <= max_records
    assert all(OWNER[i] == tenant for i in result["selected"])
    for row in result["rows"]:
        assert (row["outcome"] == "selected") == (row["reason"] is None)
        assert (row["outcome"] == "selected") == (row["id"] in result["selected"])
    found = set(result["coverage"]["found"])
    assert found == set(question.supporting) & set(result["selected"])


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(PARAMETERS),
        st.lists(st.text(max_size=8), min_size=1, max_size=2),
        max_size=6,
    )
)
def test_any_parameters_give_an_answer_or_an_error_naming_a_field(bank, params) -> None:
    try:
        selection = bank.recall(params)
        rows = bank.rows(params)
    except InvalidInput as exc:
        assert exc.field in PARAMETERS
    else:
        assert len(selection["selected"]) <= 10
        assert rows["total"] <= 10

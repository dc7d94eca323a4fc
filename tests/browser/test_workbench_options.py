"""The workbench runs recall with RecallOptions: a live page starts from recall()'s own
defaults (issue 28 item 2), so it shows the agent's recall; the teaching bank keeps the seed's."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import memcommit
from memcommit.recall import RecallOptions, Words, recall
from memcommit.recall.scoring.registry import SCORERS as NAMED_SCORERS
from memcommit.workbench import StoreSource
from memcommit.workbench.api import SCORERS, RecallRequest, recall_options
from memcommit.workbench.source import BANK_DEFAULTS, BankSource

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def source(make_store):
    store = make_store(clock=lambda: NOW - timedelta(hours=3))
    with store.commit(message="seed") as tx:
        tx.add("Deploys run on Tuesdays.", tenant="acme", key="deploy.day")
        tx.add("Deploys moved to Wednesdays.", tenant="acme", key="deploy.day")
        tx.add("The deploy queue stalled twice.", tenant="acme", kind="event")
    return StoreSource(store, clock=lambda: NOW)


def test_a_live_page_starts_from_recalls_defaults(source):
    defaults, options = source.defaults(), RecallOptions()
    assert defaults.latest == options.latest_per_key is True
    assert defaults.scorer == options.scorer == "memory"
    assert defaults.previous == options.include_previous_sessions
    assert defaults.recency == options.recency_weight
    assert defaults.tiers == options.tiers
    assert tuple(NAMED_SCORERS) == SCORERS
    assert source.config({})["defaults"]["scorer"] == "memory"


def test_a_live_page_shows_the_agents_recall(source):
    page = source.recall({"tenant": ["acme"], "query": ["when do deploys run"]})
    agents = recall(
        source.store, "when do deploys run", tenant="acme", budget=Words(200), max_records=10,
        now=NOW,
    )  # fmt: skip
    assert page["selected"] == [m.id for m in agents.selected] and agents.selected
    assert page["context"] == agents.to_dict(rows=False)
    # The newest fact for the key wins, as for the agent: the older one is not selected.
    assert "Deploys run on Tuesdays." not in [m.content for m in agents.selected]


def test_a_request_is_one_recall_options_value(source):
    request = source.parse(
        {"tenant": ["acme"], "query": ["deploys"], "latest": ["0"], "scorer": ["tfidf"],
         "max_age": ["48"], "recency": ["0.5"], "tiers": ["short,archive"]}
    )  # fmt: skip
    assert isinstance(request, RecallRequest)
    assert recall_options(request, session=None, now=NOW) == RecallOptions(
        tenant="acme",
        max_age=timedelta(hours=48),
        latest_per_key=False,
        tiers=("short", "archive"),
        recency_weight=0.5,
        budget=Words(200),
        max_records=10,
        scorer="tfidf",
        now=NOW,
    )


def test_the_teaching_bank_keeps_the_seeds_formula_and_every_key_version():
    bank = BankSource()
    try:
        request = bank.parse({})
        assert (request.scorer, request.latest) == ("tfidf", False)
        assert (BANK_DEFAULTS.scorer, BANK_DEFAULTS.latest) == ("tfidf", False)
    finally:
        bank.close()


def test_memcommit_exports_the_options():
    assert memcommit.RecallOptions is RecallOptions

"""The scorer contract: one search under every formula, asked for only when needed, names, checks.

Jaccard is the formula added to show what one costs: its scores on a real
store must equal a direct computation from the stored texts. A TF-IDF search
is taken by every recall, but its bounds and lookups are computed only when
a scorer ranks by it; a search read after later commits keeps its moment's
numbers without filling the newer state's cache. Every scorer parameter is
checked when the scorer is built.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from memcommit.errors import InvalidInput
from memcommit.model import Memory
from memcommit.recall import Hybrid, PoolsplitScore, recall
from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.index.text import term_counts
from memcommit.recall.pipeline.sources import from_memories
from memcommit.recall.scoring import maxscore
from memcommit.recall.scoring.cosine import CosineSearch
from memcommit.recall.scoring.memory import MemoryScorer
from memcommit.recall.scoring.registry import DEFAULT_SCORER, SCORERS, make_scorer

NOW = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)


def texts(count: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    vocabulary = ["river", "stone", "cloud", "green", "light", *(f"w{i}" for i in range(40))]
    return [" ".join(rng.choice(vocabulary, size=int(rng.integers(1, 9)))) for _ in range(count)]


def memories(count: int) -> list[Memory]:
    return [
        Memory(id=f"m{i:04d}", content=text, tenant="a", created_at=NOW - timedelta(minutes=i))
        for i, text in enumerate(texts(count))
    ]


def jaccard(query: str, text: str) -> float:
    q, d = set(term_counts(query)), set(term_counts(text))
    return len(q & d) / len(q | d)


@pytest.mark.parametrize("query", ["river w3", "stone stone cloud w7 w11", "w1 unknownword", "zzz"])
def test_jaccard_scores_equal_a_direct_computation_on_a_store(make_store, query):
    store = make_store("jaccard.db")
    with store.commit(message="bank", now=NOW) as tx:
        for text in texts(300):
            tx.add(text, tenant="a")
    ctx = store.recall(query, tenant="a", scorer="jaccard", now=NOW, max_records=5)
    assert ctx.scorer == "jaccard"
    scored = 0
    for r in ctx.rows:
        expected = jaccard(query, r.memory.content)
        if expected == 0.0:
            assert r.score is None and r.reason == "no_lexical_match"
        else:
            assert r.score == pytest.approx(expected, rel=1e-12)
            scored += 1
    assert len(ctx.rows) == 300
    best = sorted((jaccard(query, r.memory.content) for r in ctx.rows), reverse=True)[:5]
    chosen = sorted((r.score for r in ctx.rows if r.outcome == "selected"), reverse=True)
    assert chosen == pytest.approx([b for b in best if b > 0], rel=1e-12)
    assert scored == sum(1 for r in ctx.rows if jaccard(query, r.memory.content) > 0)


def test_jaccard_blends_recency_like_the_seed():
    bank = memories(200)
    ctx = recall(bank, "river w3", tenant="a", scorer="jaccard", now=NOW, recency_weight=0.25)
    for r in ctx.rows:
        relevance = jaccard("river w3", r.memory.content)
        if relevance:
            age = (NOW - r.memory.created_at).total_seconds()
            recency = 2.0 ** (-age / timedelta(hours=24).total_seconds())
            assert r.score == pytest.approx(0.75 * relevance + 0.25 * recency, rel=1e-12)


class Missing(Exception):
    """Raised by a probe of the index's cache: nothing is stored for a computation that raises."""


def bounded(index: TenantIndex, term: str) -> bool:
    """Whether the index caches the bound of ``term``'s cosine (the probe stores nothing)."""

    def missing() -> float:
        raise Missing

    try:
        index.memo(("cosine bound", ("counts", index.vocabulary.get(term))), missing)
    except Missing:
        return False
    return True


def test_the_tfidf_search_is_worked_only_when_a_scorer_ranks_by_it():
    source = from_memories(memories(500), "a")
    ctx = recall(source, "river w3", tenant="a", scorer="memory", max_records=3, now=NOW)
    assert not bounded(source.index, "river")
    assert any(r.cosine > 0 for r in ctx.rows)  # the explanation still has every cosine
    assert not bounded(source.index, "river")
    recall(source, "river w3", tenant="a", scorer="tfidf", max_records=3, now=NOW)
    assert bounded(source.index, "river")


def test_a_search_read_after_a_change_keeps_its_moment_and_spares_the_cache():
    index = TenantIndex("a")
    index.put_many(memories(2_000))
    terms = Counter(["river", "w3", "stone"])
    reference = CosineSearch(index, terms).all()
    later = CosineSearch(index, terms)  # taken now, read after the change below
    index.put_many(
        Memory(id=f"n{i}", content="river river stone w3", tenant="a") for i in range(300)
    )
    assert later.all().tolist() == reference.tolist()
    docs = np.flatnonzero(reference)[::7]
    fresh = CosineSearch(index, terms)  # a new one reads the new state
    assert CosineSearch(index, terms).of(docs).tolist() != reference[docs].tolist()
    assert later.of(docs).tolist() == reference[docs].tolist()
    top, values = maxscore.best(later.levels(), 5)
    assert values.tolist() == reference[top].tolist()
    assert values.min() >= np.sort(reference)[-5]
    assert not bounded(index, "river")  # the old state's bound was not kept
    fresh.levels()
    assert bounded(index, "river")


def test_every_named_scorer_recalls():
    bank = memories(100)
    assert next(iter(SCORERS)) == DEFAULT_SCORER
    assert recall(bank, "river", tenant="a", now=NOW).scorer == DEFAULT_SCORER
    for name in SCORERS:
        ctx = recall(bank, "river w3", tenant="a", scorer=name, now=NOW, max_records=3)
        assert ctx.scorer == name and ctx.selected
        assert isinstance(make_scorer(name), SCORERS[name])  # type: ignore[arg-type]


def test_an_unknown_scorer_name_lists_the_names():
    with pytest.raises(InvalidInput) as raised:
        recall(memories(3), "river", tenant="a", scorer="bm42", now=NOW)
    assert raised.value.field == "scorer"
    assert all(name in str(raised.value) for name in SCORERS)


def embed(text: str) -> list[float]:
    return [float(len(text)), 1.0]


BAD = [
    (MemoryScorer, "k1", math.nan),
    (MemoryScorer, "k1", -1),
    (MemoryScorer, "k1", math.inf),
    (MemoryScorer, "k1", "x"),
    (MemoryScorer, "k1", True),
    (MemoryScorer, "b", 1.5),
    (MemoryScorer, "b", -0.1),
    (MemoryScorer, "b", math.nan),
    (MemoryScorer, "stems", "yes"),
    (MemoryScorer, "spelling", 1),
    (MemoryScorer, "neighbours", math.inf),
    (MemoryScorer, "neighbours", -0.5),
    (MemoryScorer, "session", -5),
    (MemoryScorer, "session", None),
    (MemoryScorer, "speaker", math.nan),
    (MemoryScorer, "dates", -math.inf),
    (lambda **kw: Hybrid(embed, **kw), "semantic", 1.5),
    (lambda **kw: Hybrid(embed, **kw), "semantic", math.nan),
    (lambda **kw: Hybrid(embed, **kw), "cache", -1),
    (lambda **kw: Hybrid(embed, **kw), "cache", 2.5),
    (Hybrid, "embed", "not callable"),
    (PoolsplitScore, "tags", "urgent"),
    (PoolsplitScore, "tags", [1, 2]),
    (PoolsplitScore, "project", 7),
]


@pytest.mark.parametrize(("make", "field", "value"), BAD)
def test_a_bad_scorer_parameter_is_refused_by_name(make, field, value):
    with pytest.raises(InvalidInput) as raised:
        make(**{field: value})
    assert raised.value.field == field


def test_good_scorer_parameters_are_kept():
    scorer = MemoryScorer(k1=0, b=1, neighbours=0, session=2, speaker=0.0, dates=3)
    assert (scorer.k1, scorer.b, scorer.session, scorer.dates) == (0.0, 1.0, 2.0, 3.0)
    assert Hybrid(embed, semantic=1, cache=0).semantic == 1.0
    assert PoolsplitScore(tags=("a",), project="p").tags == ["a"]


class Squared:
    """A user's batch scorer: it declares `score_docs` and asks the query for the cosines."""

    name = "squared"

    def score_docs(self, query, docs):
        cosines = query.tfidf.of(docs)
        return np.where(cosines > 0, cosines**2, np.nan)


def test_a_batch_scorer_asks_the_query_for_what_it_reads():
    bank = memories(300)
    options = dict(tenant="a", now=NOW, max_records=5)
    squared = recall(bank, "river w3 w5", scorer=Squared(), **options)
    seed = recall(bank, "river w3 w5", scorer="tfidf", **options)
    plain = recall(bank, "river w3 w5", scorer=lambda m, q: q.cosine(m) ** 2 or None, **options)
    assert squared.scorer == "squared"
    assert [m.id for m in squared.selected] == [m.id for m in seed.selected]
    assert [m.id for m in plain.selected] == [m.id for m in seed.selected]
    for mine, theirs in zip(squared.rows, seed.rows, strict=True):
        assert mine.memory.id == theirs.memory.id and mine.cosine == theirs.cosine
        if theirs.score is not None:
            assert mine.score == pytest.approx(theirs.score**2, rel=1e-12)

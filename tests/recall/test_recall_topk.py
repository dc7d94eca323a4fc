"""Top-k without reading every posting gives exactly what scoring everything gives.

The built-in scorers rank before filtering and stop at the level whose ceiling
no unread memory can beat (`memcommit.recall.scoring.maxscore`). The reference wraps
the same scorer so that recall cannot presort: it filters every memory and
scores every one that passed. Selection, every row (cosine, score, parts,
reason, cost) and the counts must be identical, on tenants large enough for
the common terms' postings to be skipped.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcommit.model import Memory
from memcommit.recall import Words, recall
from memcommit.recall.index.columns import NO_START, iso_micros, iso_micros_many, to_micros
from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.pipeline.filters import PASSED, Scope, apply, passes
from memcommit.recall.scoring import maxscore
from memcommit.recall.scoring.bm25 import StemBm25Search
from memcommit.recall.scoring.components import Components
from memcommit.recall.scoring.cosine import CosineSearch
from memcommit.recall.scoring.memory import MemoryScorer
from memcommit.recall.scoring.scorers import Tfidf

NOW = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
COMMON = ["river", "stone", "cloud", "green", "light"]  # in most memories (not stop words)
KINDS = ["fact", "event", "procedure", "working", "correction"]


class Everything:
    """The wrapped scorer, minus `presort`: recall scores every memory that passes."""

    def __init__(self, scorer: Tfidf | MemoryScorer) -> None:
        self.scorer, self.name = scorer, scorer.name

    def score_parts(self, query, docs):
        if isinstance(self.scorer, MemoryScorer):
            return self.scorer.score_parts(query, docs)
        return self.scorer.score_docs(query, docs), Components()

    def score_docs(self, query, docs):
        return self.score_parts(query, docs)[0]


def bank(seed: int, size: int) -> list[Memory]:
    """Zipf-like texts: a few common words in most memories, many rare ones."""
    rng = np.random.default_rng(seed)
    rare = [f"w{i}" for i in range(300)]
    weights = 1.0 / np.arange(1, len(rare) + 1)
    weights /= weights.sum()
    out = []
    for i in range(size):
        words = list(rng.choice(rare, size=int(rng.integers(2, 9)), p=weights))
        words += list(rng.choice(COMMON, size=int(rng.integers(0, 5))))
        kind = KINDS[int(rng.integers(0, len(KINDS)))]
        out.append(
            Memory(
                id=f"m{i:05d}",
                content=" ".join(rng.permutation(words)),
                kind=kind,
                tenant="a",
                key=f"k{int(rng.integers(0, 40))}" if rng.random() < 0.2 else None,
                session=f"s{i // 50}" if rng.random() < 0.7 else None,
                always=kind == "correction" and rng.random() < 0.05,
                tier=("short", "mid", "long", "archive")[int(rng.integers(0, 4))],
                created_at=NOW - timedelta(minutes=int(rng.integers(0, 5000))),
                created_commit=i + 1,
            )
        )
    return out


BANKS = {seed: bank(seed, 2_500) for seed in (1, 2)}


#: The scorers compared; "flat BM25" (no length normalisation, early saturation, no
#: neighbours) ties many BM25 parts, where the session factor then decides the order.
SCORERS = {
    "tfidf": Tfidf,
    "memory": MemoryScorer,
    "memory, flat BM25": lambda: MemoryScorer(k1=0.5, b=0.0, neighbours=0.0, speaker=0.0),
}


def outcome(ctx):
    rows = [
        (r.memory.id, r.stage, r.cosine, r.score, r.outcome, r.reason, r.pool, r.cost, r.components)
        for r in ctx.rows
    ]
    return [m.id for m in ctx.selected], rows, ctx.explanation.counts()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(sorted(BANKS)),
    st.lists(st.sampled_from([*COMMON, "w0", "w1", "w3", "w7", "w20", "w90", "w250"]), max_size=5),
    st.sampled_from(["tfidf", "memory", "memory, flat BM25"]),
    st.one_of(st.none(), st.integers(0, 12)),
    st.one_of(st.none(), st.integers(5, 200).map(Words)),
    st.sampled_from([None, ("short", "mid"), ("long",)]),
    st.booleans(),
    st.sampled_from([1, 3, 16, 256]),
)
def test_top_k_matches_scoring_everything(
    monkeypatch, seed, words, scorer, records, budget, tiers, latest, first
):
    """With impact levels from each term's ``first`` best up (the default scorer's session
    factor applies: most memories have a session), as with the default 256."""
    monkeypatch.setattr(maxscore, "FIRST_TOP", first)
    memories = BANKS[seed]
    chosen = SCORERS[scorer]()
    options = dict(
        tenant="a",
        now=NOW,
        max_records=records,
        budget=budget,
        tiers=tiers,
        latest_per_key=latest,
    )
    query = " ".join(words)
    fast = recall(memories, query, scorer=chosen, **options)
    full = recall(memories, query, scorer=Everything(chosen), **options)
    assert outcome(fast) == outcome(full)


def test_a_rare_word_spares_the_common_postings():
    """The top 5 of "river w20 stone cloud" is decided before the common postings are summed."""
    index = TenantIndex("a")
    index.put_many(BANKS[1])
    search = CosineSearch(index, Counter(["river", "w20", "stone", "cloud"]))
    found = search.levels()
    read = []
    tracked = [lambda level=level: read.append(level) or level() for level in found]
    docs, values = maxscore.best(tracked, 5)
    everything = search.all()
    order = np.argsort(-everything, kind="stable")
    assert sorted(docs.tolist()) == sorted(order[: len(docs)].tolist())
    assert values.tolist() == everything[docs].tolist()
    assert len(read) < len(found)  # the last level, every posting, was never read


def _tracked(found):
    """The levels, each noting itself in ``read`` when it is read."""
    read = []
    return read, [lambda level=level: read.append(level) or level() for level in found]


def test_common_words_only_are_decided_by_the_best_parts_of_each():
    """Each term of "river stone" is in about 800 memories; the first level read, the
    union of each term's 256 highest BM25 parts (an impact level), decides the top 5,
    before a level of a whole term's postings or every posting is read."""
    index = TenantIndex("a")
    index.put_many(BANKS[1])
    search = StemBm25Search(index, Counter(["river", "stone"]), 1.2, 1.0)
    assert all(len(term.docs) > 2 * maxscore.FIRST_TOP for term in search.terms)
    read, tracked = _tracked(search.levels())
    docs, values = maxscore.best(tracked, 5)
    everything = search.all()
    kth = np.sort(everything)[-5]
    assert sorted(docs.tolist()) == np.flatnonzero(everything >= kth).tolist()
    assert values.tolist() == everything[docs].tolist()
    assert [level.func for level in read] == [maxscore._top_level]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(BANKS)),
    st.lists(st.sampled_from([*COMMON, "w0", "w1", "w3", "w20", "w250"]), min_size=1, max_size=4),
    st.sampled_from([1, 3, 16, 256]),
    st.integers(1, 300),
    st.sampled_from([1.0, 2.5]),
)
def test_impact_levels_give_exactly_the_top_k(seed, words, first, count, factor):
    """Whatever level decides, the top ``count`` of a BM25 search and every document tied
    with its last are those of summing every posting, with the same values; with the
    ceilings scaled by ``factor`` too (what the default scorer's factors may add)."""
    index = TenantIndex("a")
    index.put_many(BANKS[seed])
    search = StemBm25Search(index, Counter(words), 1.2, 1.0)
    first_top = maxscore.FIRST_TOP
    maxscore.FIRST_TOP = first
    try:
        found = search.levels(factor=factor)
    finally:
        maxscore.FIRST_TOP = first_top
    docs, values = maxscore.best(found, count)
    everything = search.all()
    matched = np.flatnonzero(everything)
    if len(matched) > count:
        kth = np.sort(everything[matched])[-count]
        matched = matched[everything[matched] >= kth]
    assert docs.tolist() == matched.tolist()
    assert values.tolist() == everything[docs].tolist()


def test_best_reads_levels_until_one_decides():
    rng = np.random.default_rng(0)
    values = rng.random(1_000)
    docs = np.arange(1_000)

    def level(upto: int, ceiling: float):
        return lambda: (docs[values >= upto], values[values >= upto], ceiling)

    read = []

    def tracked(found):
        def call():
            read.append(found)
            return found()

        return call

    levels = [
        tracked(level(0.9, 0.9999)),  # its 10th best is below 0.9999: cannot decide
        tracked(level(0.5, 0.5)),  # decides: its 10th best beats 0.5
        tracked(lambda: (docs, values, 0.0)),
    ]
    best_docs, _ = maxscore.best(levels, 10)
    assert sorted(best_docs.tolist()) == sorted(np.argsort(-values)[:10].tolist())
    assert len(read) == 2


def test_a_memo_shared_by_threads_gives_each_the_values_of_its_documents():
    """An explanation's parts and a ranking's widening may read one search's memo from two
    threads: each call gets the values of its own documents, whatever the others write."""
    memo = maxscore.Memo()
    errors: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(3_000):
            docs = np.unique(rng.integers(0, 400, size=int(rng.integers(1, 60))))
            try:
                if not np.array_equal(memo(docs, lambda d: d * 2.0), docs * 2.0):
                    errors.append(f"wrong values for {docs.tolist()}")
            except Exception as exc:  # (the old memo: documents of one call, values of another)
                errors.append(repr(exc))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []


def test_union_of_sorted_arrays():
    parts = [np.array([1, 4, 9]), np.array([2, 4, 10]), np.array([], dtype=np.int64)]
    assert maxscore.union(parts).tolist() == [1, 2, 4, 9, 10]


def test_rows_read_after_later_commits_keep_the_recall_s_numbers(make_store):
    """Rows are computed on first read, from the statistics of the moment the recall ran."""
    store = make_store("later.db")
    with store.commit(message="first", now=NOW) as tx:
        for i in range(60):
            tx.add(f"river stone w{i % 7} note {i}", tenant="a")
    options = dict(tenant="a", now=NOW, max_records=3)
    eager = store.recall("river w3", explain=True, **options)
    lazy = store.recall("river w3", **options)
    with store.commit(message="later", now=NOW) as tx:  # new statistics: N, df, every norm
        for i in range(40):
            tx.add(f"w3 w3 river cloud {i}", tenant="a")
    store.recall("cloud", **options)  # the index has caught up with the later commit
    assert outcome(lazy) == outcome(eager)
    assert len(lazy.rows) == 60


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(st.none(), st.sets(st.sampled_from(KINDS), min_size=1).map(sorted)),
    st.one_of(st.none(), st.sets(st.sampled_from(KINDS), min_size=1).map(tuple)),
    st.one_of(st.none(), st.integers(0, 5000).map(lambda m: timedelta(minutes=m))),
    st.booleans(),
    st.sampled_from([None, ("short", "mid"), ("long", "archive"), ("archive",)]),
    st.sampled_from([None, "s3", "s40", "unknown"]),
)
def test_the_quick_filter_agrees_with_the_reasons(
    kinds, pool_kinds, max_age, latest, tiers, session
):
    index = TenantIndex("a")
    index.put_many(BANKS[2])
    snap = index.snapshot()
    scope = Scope.parse(
        kinds=kinds,
        max_age=max_age,
        latest_per_key=latest,
        tiers=tiers,
        session=session,
        include_previous_sessions=session is None,
    )
    scope = Scope(**{**scope.__dict__, "pool_kinds": pool_kinds})
    docs = np.arange(snap.size)
    now_us = to_micros(NOW, 0)
    expected = apply(snap, scope, now_us, docs) == PASSED
    assert passes(snap, scope, now_us, docs).tolist() == expected.tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(-62135596800000000, 253402300799999999),  # years 1 to 9999
            st.sampled_from([NO_START, 0, -1, -30610224000000001, 253402300799999999]),
        ),
        max_size=30,
    )
)
def test_many_instants_are_written_as_one_at_a_time(micros):
    """Packing writes its entries' times at once; poolsplit sees the strings it always did."""
    values = np.array(micros, dtype=np.int64)
    assert iso_micros_many(values) == [iso_micros(m) for m in micros]

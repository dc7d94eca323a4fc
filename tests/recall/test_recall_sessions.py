"""The default scorer's session and neighbour expansion, against a plain reference.

The scorer follows cached session links from its best matches only; the
reference sorts every member of every touched session, as the definition reads:
a turn gains from the best matches next to it, and a session's total is the
BM25 of its best matches.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memcommit.model import Memory
from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.memory import _TOP, MemoryScorer, bm25

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
WORDS = ["alpha", "beta", "gamma", "deploy", "cache", "pool"]


def reference(index: TenantIndex, query: Query, scorer: MemoryScorer) -> np.ndarray:
    base = bm25(index, dict(query.terms), scorer.k1, scorer.b)
    score = base.copy()
    hits = np.flatnonzero(base)
    if not len(hits):
        return score
    top = sorted(hits.tolist(), key=lambda d: -base[d])[:_TOP]
    cut = base[top[-1]]
    best_matches = {d for d in hits.tolist() if base[d] >= cut}
    codes = {int(index.session.data[d]) for d in best_matches} - {-1}
    alive = index.alive.view()
    members: dict[int, list[int]] = {}
    for doc in range(index.alive.size):
        code = int(index.session.data[doc])
        if alive[doc] and code in codes:
            members.setdefault(code, []).append(doc)
    totals = {}
    for code, docs in members.items():
        docs.sort(key=lambda d: (index.created.data[d], index.commit.data[d], index.ids[d]))
        matched = sum(base[d] for d in docs if d in best_matches)
        totals[code] = matched / len(docs) ** 0.5  # per square root of the session's turns
        for position, doc in enumerate(docs):

            def at(offset: int, position: int = position, docs: list[int] = docs) -> float:
                place = position + offset
                inside = 0 <= place < len(docs) and docs[place] in best_matches
                return base[docs[place]] if inside else 0.0

            near = max(at(-1), at(1)) + max(at(-2), at(2)) / 2.0
            score[doc] += scorer.neighbours * near
    if not totals:
        return score
    best = max(totals.values())
    for code, docs in members.items():
        for doc in docs:
            score[doc] *= 1.0 + scorer.session * totals[code] / best
    return score


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
            st.integers(0, 3),
            st.integers(0, 5),
        ),
        min_size=1,
        max_size=40,
    ),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    st.sets(st.integers(0, 39)),
)
def test_links_give_the_reference_expansion(specs, words, updated):
    index = TenantIndex("t")
    memories = [
        Memory(
            id=f"m{i:02d}",
            content=" ".join(text),
            tenant="t",
            session=None if session == 0 else f"s{session}",
            created_at=NOW - timedelta(minutes=age),
            created_commit=1 + age,
        )
        for i, (text, session, age) in enumerate(specs)
    ]
    index.put_many(memories)
    for i in sorted(updated):
        if i < len(memories):  # a new version: a new document, the old one retired
            index.put(Memory(**{**memories[i].__dict__, "content": "alpha pool"}))
    query = Query(" ".join(words), Counter(words), NOW, 0.0, timedelta(hours=1), index)
    scorer = MemoryScorer()
    assert np.allclose(scorer.relevance(query), reference(index, query, scorer), rtol=1e-12)


def test_only_the_best_matches_lend_to_their_neighbours_and_sessions():
    """Past `_TOP` matches, weaker ones neither lend to neighbours nor count in a session."""
    rng = np.random.default_rng(5)
    index = TenantIndex("t")
    size = 3 * _TOP
    index.put_many(
        Memory(
            id=f"m{i:04d}",
            content=" ".join(rng.choice(WORDS, size=int(rng.integers(1, 6)))),
            tenant="t",
            session=f"s{i % 7}" if i % 5 else None,
            created_at=NOW - timedelta(minutes=i),
            created_commit=1 + i,
        )
        for i in range(size)
    )
    for words in (["alpha"], ["cache", "pool"], ["beta", "gamma", "deploy"]):
        query = Query(" ".join(words), Counter(words), NOW, 0.0, timedelta(hours=1), index)
        scorer = MemoryScorer()
        assert np.count_nonzero(bm25(index, dict(query.terms), scorer.k1, scorer.b)) > _TOP
        assert np.allclose(scorer.relevance(query), reference(index, query, scorer), rtol=1e-12)

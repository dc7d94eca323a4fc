"""Snapshot strings read in place (ids, terms, stems) behave like the lists and dicts they replace,
before and after their tables decode themselves, with ids and terms added after a snapshot; a
snapshot's blocks are checked only when read, and a damaged one is never handed out."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcommit.errors import IndexDamaged
from memcommit.recall.index import persist
from memcommit.recall.index.blobs import DocIds, Sorted, Strings, encode, lookups_before_decoding
from memcommit.recall.index.sections import BLOCK, Section
from memcommit.recall.index.snapshot import Exported
from memcommit.recall.index.stem import stem
from memcommit.recall.index.vocabulary import SECTIONS, Vocabulary

texts = st.text(alphabet="abé\n\0ü ", min_size=1, max_size=4)


def strings(values: list[str]) -> Strings:
    blob, starts = encode(values)
    return Strings(Section.of(blob), Section.of(starts))


@given(
    st.lists(texts, unique=True, max_size=40),
    st.lists(texts, max_size=20),
    st.lists(st.frozensets(texts, max_size=80), max_size=3),
)
def test_a_sorted_table_finds_what_a_dict_finds(values, probes, batches):
    values = sorted(values)
    table = Sorted(strings(values))
    expected = {value: position for position, value in enumerate(values)}
    for batch in batches:  # many at once, before, while and after the table decodes itself
        assert table.among(batch) == batch & expected.keys()
    for probe in [*probes, *values] * 2:  # enough lookups to decode itself half way
        assert table.find(probe) == expected.get(probe)
        assert table.among(frozenset([probe])) == {probe} & expected.keys()
    assert [table[i] for i in range(len(table))] == values


def test_a_sorted_table_decodes_itself_after_many_lookups():
    values = sorted(f"w{i}" for i in range(300))
    table = Sorted(strings(values))
    for i in range(lookups_before_decoding(len(values)) + 1):
        assert table.find(values[i]) == i
    assert table.find("absent") is None
    assert table._decoded and len(table._found) == 300


def reference_ranks(ids: list[str]) -> list[int]:
    order = sorted(range(len(ids)), key=lambda doc: (ids[doc], doc))
    ranks = [0] * len(ids)
    for position, doc in enumerate(order):
        ranks[doc] = position
    return ranks


steps = st.lists(
    st.tuples(st.sampled_from(["add", "add", "forget"]), st.lists(texts, min_size=1, max_size=6)),
    max_size=8,
)


@settings(max_examples=150)
@given(st.lists(texts, unique=True, max_size=30), steps, st.booleans())
def test_document_ids_behave_like_a_list_and_a_dict(stored, history, decoded):
    docs = DocIds()
    docs.extend(stored)
    ids = DocIds.packed(*docs.take(np.arange(len(stored))))  # the ids as a snapshot holds them
    if decoded:  # the stored part decoded into a dict, as after many lookups
        for _ in range(lookups_before_decoding(len(stored)) + 1):
            ids.find("probe")
    names: list[str] = list(stored)
    current = {name: doc for doc, name in enumerate(stored)}
    for op, batch in history:
        if op == "add":
            ids.extend(batch)
            for name in batch:
                current[name] = len(names)
                names.append(name)
        else:
            for name in batch:
                ids.forget(name)
                current.pop(name, None)
    assert list(ids) == names and len(ids) == len(names)
    assert [ids[doc] for doc in range(len(names))] == names
    for name in {*names, "never"}:
        assert ids.find(name) == current.get(name)
    assert ids.ranks().tolist() == reference_ranks(names)
    keep = np.array(sorted(current.values()), dtype=np.int64)
    blob, starts, order = ids.take(keep)
    kept = [names[doc] for doc in keep.tolist()]
    assert strings(kept).blob.array.tobytes() == blob.tobytes()
    assert starts.tolist() == encode(kept)[1].tolist()
    assert order.tolist() == sorted(range(len(kept)), key=kept.__getitem__)


def test_stored_ids_are_found_by_bisection_and_new_ones_missed_without_decoding_the_table():
    stored = [f"{i:04d}" for i in range(10, 200, 2)]
    docs = DocIds()
    docs.extend(stored)
    ids = DocIds.packed(*docs.take(np.arange(len(stored))))
    for later in range(200, 200 + 2 * lookups_before_decoding(len(stored))):  # a commit's new ids
        assert ids.find(f"{later:04d}") is None
    assert ids._found is None  # still read in place: ids past every stored one cost no bisection
    for absent in ["0000", "0011", "0199", "1000", "", "0010x"]:
        assert ids.find(absent) is None
    for doc, name in enumerate(stored):
        assert ids.find(name) == doc


WORDS = ["hike", "hiking", "hiked", "hikes", "run", "running", "runs", "café", "cafés", "zebra"]


@given(
    st.lists(st.sampled_from(WORDS), min_size=1, unique=True),
    st.lists(st.sampled_from([*WORDS, "hiker", "ran", "cafe"]), unique=True),
)
def test_a_restored_vocabulary_answers_like_the_one_it_was_exported_from(first, later):
    built = Vocabulary()
    for word in first:
        built.id(word)
    arrays, renumber = built.export(np.arange(len(first)))
    restored = Vocabulary({name: Section.of(arrays[name]) for name in SECTIONS})
    for word in later:
        built.id(word)
        restored.id(word)

    def texts_of(vocabulary: Vocabulary, ids: list[int]) -> set[str]:
        names = {vocabulary.get(word): word for word in [*WORDS, "hiker", "ran", "cafe"]}
        return {names[tid] for tid in ids}

    every = frozenset([*WORDS, "hiker", "ran", "cafe", "absent"])
    assert restored.among(every) == built.among(every) == {*first, *later}
    for word in every:
        assert (restored.get(word) is None) == (built.get(word) is None)
        assert (word in restored) == (word in built)
        assert texts_of(restored, restored.variants(word)) == texts_of(built, built.variants(word))
    for word in first:
        assert restored.get(word) == renumber[built.get(word)]
    again, _ = restored.export(np.arange(len(restored)))  # stored terms and added ones, sorted
    assert Strings(Section.of(again["terms"]), Section.of(again["term_starts"])).decoded() == (
        sorted({*first, *later})
    )
    stems = Strings(Section.of(again["stems"]), Section.of(again["stem_starts"])).decoded()
    assert stems == sorted({stem(word) for word in {*first, *later}})


def test_only_the_blocks_read_are_checked_and_a_damaged_one_is_never_handed_out(tmp_path):
    values = np.arange(3 * BLOCK // 8, dtype=np.int64)  # three blocks
    path = tmp_path / "t.idx"
    persist.write(path, "t", persist.Stamp("s", 1, "c"), Exported({"values": values}))
    data = bytearray(path.read_bytes())
    data[len(data) - BLOCK - BLOCK // 2] ^= 1  # inside the second block
    path.write_bytes(bytes(data))
    opened = persist.read(path, "t", "s")
    section, per_block = opened.sections["values"], BLOCK // 8
    assert section.rows(0, 10).tolist() == list(range(10))
    assert section.rows(2 * per_block, 2 * per_block + 1).tolist() == [2 * per_block]
    assert opened.damage.section is None
    with pytest.raises(IndexDamaged, match="values"):
        section.rows(per_block - 1, per_block + 1)
    assert opened.damage.section == "values"
    with pytest.raises(IndexDamaged, match="values"):
        section.whole()

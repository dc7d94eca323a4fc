"""The dense ranking's candidate stage: sign codes, Hamming order, exact re-score, lazy checks."""

from __future__ import annotations

import pickle
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.errors import IndexDamaged
from memcommit.recall.index import dense, live, order, signs, vectorfile
from memcommit.recall.index.blobs import DocIds
from memcommit.recall.index.dense import DenseRows
from memcommit.recall.index.persist import Stamp

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=30)
DIMS = 96  # two 64-bit words of sign bits, the second half empty: padding is exercised


def _vectors(count: int, seed: int, pool: int | None = None) -> np.ndarray:
    """``count`` unit vectors, distinct, or drawn from ``pool`` distinct ones (many ties)."""
    rng = np.random.default_rng(seed)
    distinct = rng.standard_normal((pool or count, DIMS))
    distinct /= np.linalg.norm(distinct, axis=1, keepdims=True)
    return distinct if pool is None else distinct[rng.integers(0, pool, count)]


def _reference(rows: DenseRows, query: np.ndarray, allowed: np.ndarray, count: int) -> list[int]:
    """The ``count`` eligible rows of least Hamming distance, ties by row: plain Python."""
    bits = np.unpackbits(signs.signs_of(rows.codes[: rows.size]), axis=1)
    query_bits = np.unpackbits(signs.signs_of(dense.codes_of(query[None, :]))[0])
    found = [int((bits[row] != query_bits).sum()) for row in range(rows.size)]
    eligible = [row for row in range(rows.size) if rows.has[row] and allowed[row]]
    return sorted(sorted(eligible, key=lambda row: (found[row], row))[:count])


@pytest.fixture
def small_stage(monkeypatch):
    """The Hamming stage at test sizes: 8 candidates, no exact scan above 8 rows."""
    monkeypatch.setattr(dense, "EXACT_BELOW", 0)
    monkeypatch.setattr(dense, "MIN_CANDIDATES", 8)
    monkeypatch.setattr(dense, "CANDIDATES_PER_RANK", 2)


def test_sign_codes_are_padded_bits_of_the_positive_codes():
    codes = np.array([[5, -3, 0, 127] + [0] * 92], dtype=np.int8)
    packed = signs.signs_of(codes)
    assert packed.shape == (1, 16)  # 96 bits rounded up to two words
    assert packed[0, 0] == 0b1001_0000 and not packed[0, 1:].any()


@settings(max_examples=40, deadline=None)
@given(
    count=st.integers(1, 120),
    seed=st.integers(0, 2**16),
    pool=st.integers(1, 12),
    order_seed=st.integers(0, 2**16),
)
def test_candidates_are_the_hamming_best_ties_by_row_whatever_the_put_order(
    count, seed, pool, order_seed
):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dense, "EXACT_BELOW", 0)
        patch.setattr(dense, "MIN_CANDIDATES", 8)
        patch.setattr(dense, "CANDIDATES_PER_RANK", 2)
        vectors = _vectors(count, seed, pool)
        query = _vectors(1, seed + 1)[0]
        in_order, shuffled = DenseRows("e", DIMS), DenseRows("e", DIMS)
        in_order.put(np.arange(count), vectors)
        order = np.random.default_rng(order_seed).permutation(count)
        for part in np.array_split(order, 3):  # three puts, in a shuffled order of documents
            shuffled.put(part, vectors[part])
        allowed = np.random.default_rng(order_seed).random(count) < 0.8
        first = in_order.candidates(query, 2, allowed)
        assert first.tolist() == shuffled.candidates(query, 2, allowed).tolist()
        assert first.tolist() == _reference(in_order, query, allowed, 8)


@settings(max_examples=80, deadline=None)
@given(
    size=st.integers(1, 3_000),
    spread=st.integers(1, 400),
    share=st.floats(0.0, 1.0),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_best_is_the_least_distances_ties_by_row(size, spread, share, masked, seed):
    """Whatever the sample bounding the cut finds (a lucky or an unlucky one)."""
    rng = np.random.default_rng(seed)
    found = rng.integers(0, spread, size).astype(np.uint16)
    eligible = rng.random(size) < 0.6 if masked else None
    count = int(share * size)
    rows = range(size) if eligible is None else np.flatnonzero(eligible).tolist()
    expected = sorted(sorted(rows, key=lambda row: (found[row], row))[:count])
    assert signs.best(found, eligible, count).tolist() == expected


def test_the_re_score_equals_the_int8_scan_on_the_candidates(small_stage):
    rows = DenseRows("e", DIMS)
    rows.put(np.arange(300), _vectors(300, 3))
    query = _vectors(1, 4)[0]
    found, cosines = rows.nearest(query, 4, np.ones(300, dtype=bool))
    assert len(found) == 8
    assert cosines.tobytes() == rows.cosines(query)[found].tobytes()  # bit for bit


def test_rows_without_a_vector_or_not_allowed_are_never_candidates(small_stage):
    rows = DenseRows("e", DIMS)
    rows.put(np.arange(0, 200, 2), _vectors(100, 5))  # odd documents: no vector
    rows.grow(200)
    allowed = np.ones(200, dtype=bool)
    allowed[:100] = False
    found, _ = rows.nearest(_vectors(1, 6)[0], 4, allowed)
    assert len(found) == 8 and (found >= 100).all() and (found % 2 == 0).all()


def test_a_small_tenant_is_scanned_exactly():
    rows = DenseRows("e", DIMS)
    rows.put(np.arange(500), _vectors(500, 7))
    allowed = np.ones(500, dtype=bool)
    allowed[10] = False
    found, cosines = rows.nearest(_vectors(1, 8)[0], 100, allowed)
    assert found.tolist() == [doc for doc in range(500) if doc != 10]
    assert not np.isnan(cosines).any()


def _written(tmp_path, count=2_000):
    rows = DenseRows("e", DIMS)
    rows.put(np.arange(count), _vectors(count, 9))
    stamp = Stamp("s", 1, "c")
    path = tmp_path / "rows.vec"
    vectorfile.write(path, "t", stamp, rows, np.arange(count))
    return rows, path, stamp


def test_a_vector_file_keeps_the_sign_codes_and_reads_code_rows_as_candidates_need_them(
    tmp_path, small_stage
):
    rows, path, stamp = _written(tmp_path)
    again = vectorfile.read(path, "t", "e", DIMS, stamp)
    assert again.signs.tobytes() == rows.signs.tobytes()
    assert again.unchecked is not None  # the int8 codes are not read whole at open
    query = _vectors(1, 10)[0]
    found, cosines = again.nearest(query, 4, np.ones(2_000, dtype=bool))
    expected, exact = rows.nearest(query, 4, np.ones(2_000, dtype=bool))
    assert found.tolist() == expected.tolist() and cosines.tobytes() == exact.tobytes()


def test_a_damaged_code_row_is_refused_when_a_candidate_reads_it(tmp_path):
    rows, path, stamp = _written(tmp_path)
    data = bytearray(path.read_bytes())
    row = rows.codes[1_500].tobytes()
    at = data.find(row)
    assert at >= 0
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    again = vectorfile.read(path, "t", "e", DIMS, stamp)  # opens: the codes are not checked yet
    with pytest.raises(IndexDamaged):
        again.cosines(_vectors(1, 11)[0], np.array([1_500]))


def test_a_recall_that_meets_a_damaged_vector_file_rebuilds_and_answers(tmp_path, recall_snapshots):
    texts = [f"note {i} about the garden and topic {i % 7}" for i in range(30)]
    with memcommit.open(tmp_path / "v.db", embedder="hash") as store:
        with store.commit(message="notes", now=T0) as tx:
            for text in texts:
                tx.add(text, kind="event", tenant="t")
        expected = store.recall("garden topic", tenant="t", now=LATER, explain=True)
        live.store_index(store).save("t")  # the snapshot, now with its vector file
        (rows,) = live.store_index(store).tenants["t"].dense.values()
        row = rows.codes[17].tobytes()
    (path,) = recall_snapshots.rglob("*.vec")
    data = bytearray(path.read_bytes())
    at = data.find(row)
    assert at >= 0
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    with memcommit.open(tmp_path / "v.db", embedder="hash") as store:
        again = store.recall("garden topic", tenant="t", now=LATER, explain=True)
        assert live.store_index(store).opened["t"] == "built: snapshot damaged (codes)"
    assert [(r.memory.id, r.score, r.components) for r in again.rows] == [
        (r.memory.id, r.score, r.components) for r in expected.rows
    ]


def test_a_lexical_match_outside_the_candidates_keeps_its_exact_cosine(tmp_path, monkeypatch):
    monkeypatch.setattr(dense, "EXACT_BELOW", 0)
    monkeypatch.setattr(dense, "MIN_CANDIDATES", 2)
    monkeypatch.setattr(dense, "CANDIDATES_PER_RANK", 0)
    store = memcommit.open(tmp_path / "c.db", embedder="hash")
    try:
        with store.commit(message="notes", now=T0) as tx:
            for i in range(30):
                tx.add(f"note {i} about the garden and topic {i % 7}", kind="event", tenant="t")
        ctx = store.recall("garden", tenant="t", now=LATER, max_records=30, explain=True)
        ranked = [row for row in ctx.rows if row.score is not None]
        assert len(ranked) == 30  # every memory matches the word
        dense_ranked = [row for row in ranked if "dense_rank" in row.components]
        assert len(dense_ranked) == 2  # only the two candidates are ranked by meaning
        others = [row for row in ranked if "dense_rank" not in row.components]
        assert all(row.components["vector"] == 1.0 for row in others)  # they have a vector
        assert all(-1.0 <= row.components["dense"] <= 1.0 for row in others)  # its cosine shown
    finally:
        store.close()


@settings(max_examples=60, deadline=None)
@given(
    times=st.lists(st.integers(0, 4), min_size=1, max_size=40),
    names=st.randoms(use_true_random=False),
    picked=st.randoms(use_true_random=False),
)
def test_birth_order_of_some_documents_is_birth_rank_restricted_to_them(times, names, picked):
    ids = DocIds()
    labels = [f"m{i:03d}" for i in range(len(times))]
    names.shuffle(labels)  # ids not in document order, so ties are broken by the ids
    ids.extend(labels)
    created = np.array(times, dtype=np.int64)
    docs = np.array(picked.sample(range(len(times)), picked.randint(1, len(times))))
    full = order.birth_rank(created, ids)
    assert (
        order.birth_order(created, ids, docs).tolist()
        == np.argsort(np.argsort(full[docs])).tolist()
    )


def test_index_damaged_crosses_a_process_boundary():
    """A worker process's IndexDamaged reaches its pool whole (pickled and back)."""
    again = pickle.loads(pickle.dumps(IndexDamaged("rows.vec", "codes")))
    assert (again.field, again.value, again.section) == ("snapshot", "rows.vec", "codes")


def test_a_vector_file_refuses_other_blocks_and_the_layout_before_row_sums(tmp_path):
    from memcommit.recall.index import persist
    from memcommit.recall.index.persist import SnapshotRefused

    rows, path, stamp = _written(tmp_path)
    arrays = {name: values.reshape(-1) for name, values in rows.export(np.arange(2_000)).items()}
    named = {vectorfile.NAMES.get(name, name): values for name, values in arrays.items()}
    persist.write(path, "t\ne", stamp, persist.Exported(named), 1 << 14)  # the snapshot's blocks
    with pytest.raises(SnapshotRefused):
        vectorfile.read(path, "t", "e", DIMS, stamp)
    del arrays["sums"]
    arrays["signs"] = signs.signs_of(rows.codes[:2_000]).reshape(-1)  # rows of sign bytes
    persist.write(path, "t\ne", stamp, persist.Exported(arrays), vectorfile.BLOCK)
    with pytest.raises(SnapshotRefused, match="row sums"):
        vectorfile.read(path, "t", "e", DIMS, stamp)


def _damaged(tmp_path, row):
    """A vector file of 2,000 rows with one bit of code row ``row`` flipped, opened."""
    rows, path, stamp = _written(tmp_path)
    data = bytearray(path.read_bytes())
    at = data.find(rows.codes[row].tobytes())
    assert at >= 0
    data[at + 7] ^= 0x40
    path.write_bytes(bytes(data))
    return rows, vectorfile.read(path, "t", "e", DIMS, stamp)


def test_a_damaged_code_row_fails_every_read(tmp_path):
    """Rows read beside a damaged one pass (no block around them is checked), the damaged
    one fails each time it is read, and so does a read of every row."""
    rows, again = _damaged(tmp_path, 1_500)
    query = _vectors(1, 13)[0]
    near = np.array([1_499, 1_501])
    assert again.cosines(query, near).tobytes() == rows.cosines(query, near).tobytes()
    for _ in range(2):
        with pytest.raises(IndexDamaged):
            again.cosines(query, np.array([3, 1_500]))
    with pytest.raises(IndexDamaged):
        again.export(np.arange(2_000))
    with pytest.raises(IndexDamaged):
        again.cosines(query)


def test_a_code_row_that_passed_is_not_checked_again_in_the_process(tmp_path):
    """A row's sums are checked at its first read only: a row damaged on disk after it
    passed is read as it now is, one damaged before its first read fails."""
    rows, path, stamp = _written(tmp_path)
    again = vectorfile.read(path, "t", "e", DIMS, stamp)
    query = _vectors(1, 13)[0]
    passed = again.cosines(query, np.array([40]))
    assert passed.tobytes() == rows.cosines(query, np.array([40])).tobytes()
    with path.open("r+b") as file:  # the mapping shows the file's bytes as they change
        data = path.read_bytes()
        for row in (40, 41):
            at = data.find(rows.codes[row].tobytes()) + 7
            file.seek(at)
            file.write(bytes([data[at] ^ 0x40]))
    assert again.cosines(query, np.array([40])).tobytes() != passed.tobytes()
    with pytest.raises(IndexDamaged):
        again.cosines(query, np.array([41]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), at=st.integers(0, DIMS - 1), value=st.integers(-128, 127))
def test_row_sums_change_with_any_one_code(seed, at, value):
    codes = dense.codes_of(_vectors(1, seed))
    changed = codes.copy()
    changed[0, at] = value
    same = dense.row_sums(changed) == dense.row_sums(codes)
    assert same.all() if value == codes[0, at] else not same.any()


@pytest.mark.skipif(not hasattr(np, "bitwise_count"), reason="numpy < 2 counts by the table")
def test_the_bit_count_by_table_equals_numpys():
    words = np.random.default_rng(3).integers(0, 2**63, 5_000, dtype=np.uint64) * np.uint64(3)
    by_table, counted = np.empty(5_000, np.uint8), np.empty(5_000, np.uint8)
    signs.count_by_table(words, by_table)
    np.bitwise_count(words, out=counted)
    assert by_table.tolist() == counted.tolist()

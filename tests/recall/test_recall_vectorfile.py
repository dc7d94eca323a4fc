"""Vector files beside the recall snapshot: written with it, read by the next process, erased."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

import memcommit
from memcommit.embedding.hashed import HashEmbedder
from memcommit.recall.index.dense import codes_of
from memcommit.recall.index.live import index_dir, store_index

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=30)
SECRET = "the vault code is seven seven three"


def _stored(path, count=1_200):
    store = memcommit.open(path, embedder="hash")
    with store.commit(message="bulk", now=T0) as tx:
        for i in range(count):
            tx.add(f"note {i} on topic {i % 13}", kind="event", tenant="t")
        secret = tx.add(SECRET, kind="event", tenant="t")
    return store, secret


def _folder_bytes(store) -> bytes:
    """Every byte of every file in the store's recall folder."""
    return b"".join(f.read_bytes() for f in sorted(index_dir(store).iterdir()) if f.is_file())


def _every_row_held(store) -> bool:
    """Whether every current document of tenant t has its vector in the index's rows."""
    index = store_index(store).index("t")
    return bool(index.dense["hash-ngram-v1/64"].has[np.flatnonzero(index.alive.view())].all())


def test_the_next_process_reads_the_rows_from_the_vector_file(tmp_path):
    path = tmp_path / "v.db"
    store, _ = _stored(path)
    first = store.recall("vault code", tenant="t", now=LATER, max_records=5)
    folder = index_dir(store)
    store.close()
    assert [f.suffix for f in sorted(folder.iterdir()) if f.suffix == ".vec"] == [".vec"]
    again = memcommit.open(path, embedder="hash")
    try:
        index = store_index(again).index("t")
        assert index.dense_file is not None  # restored from a snapshot: its vector file is read
        second = again.recall("vault code", tenant="t", now=LATER, max_records=5)
        assert [m.id for m in second.selected] == [m.id for m in first.selected]
        assert _every_row_held(again)
    finally:
        again.close()


def test_a_vector_file_of_another_snapshot_is_not_read(tmp_path):
    path = tmp_path / "v.db"
    store, _ = _stored(path)
    store.recall("vault code", tenant="t", now=LATER)
    folder = index_dir(store)
    (vec,) = [f for f in folder.iterdir() if f.suffix == ".vec"]
    old = vec.read_bytes()
    with store.commit(message="more", now=T0 + timedelta(hours=1)) as tx:
        for i in range(1_100):  # enough to write the snapshot again
            tx.add(f"later note {i}", kind="event", tenant="t")
    store.recall("vault code", tenant="t", now=LATER)
    store.close()
    vec.write_bytes(old)  # the rows of an earlier snapshot
    again = memcommit.open(path, embedder="hash")
    try:
        ctx = again.recall("vault code", tenant="t", now=LATER, max_records=1)
        assert ctx.selected[0].content == SECRET  # rows came from the store, not the old file
        assert _every_row_held(again)
    finally:
        again.close()


def test_purge_erases_the_vector_from_every_file(tmp_path):
    path = tmp_path / "v.db"
    store, secret = _stored(path)
    store.recall("vault code", tenant="t", now=LATER)
    codes = codes_of(HashEmbedder(64).embed([SECRET]))[0].tobytes()
    assert codes in _folder_bytes(store)  # the secret's codes are in its vector file
    with store.commit(message="purge", now=T0 + timedelta(hours=1)) as tx:
        tx.purge(secret.id)
    assert codes not in _folder_bytes(store)
    assert SECRET.encode() not in _folder_bytes(store)
    ctx = store.recall("vault code", tenant="t", now=LATER, explain=True)
    assert all(row.memory.id != secret.id for row in ctx.rows)
    store.close()


def test_purge_of_a_tenant_not_open_erases_its_vector_file(tmp_path):
    path = tmp_path / "v.db"
    store, secret = _stored(path)
    store.recall("vault code", tenant="t", now=LATER)
    store.close()
    other = memcommit.open(path, embedder="hash")  # a process that never opened tenant t
    try:
        with other.commit(message="purge", now=T0 + timedelta(hours=1)) as tx:
            tx.purge(secret.id)
        codes = codes_of(HashEmbedder(64).embed([SECRET]))[0].tobytes()
        assert codes not in _folder_bytes(other)
    finally:
        other.close()

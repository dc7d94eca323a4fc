"""Vector files beside the recall snapshot: written with it, read by the next process, erased."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

import memcommit
from memcommit import upkeep
from memcommit.embedding.hashed import HashEmbedder
from memcommit.recall.index import files, persist, vectorfile, vectors
from memcommit.recall.index.dense import codes_of
from memcommit.recall.index.live import index_dir, snapshot_name, store_index
from memcommit.recall.pipeline import run

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


TEXTS = ["beta gamma", "alpha deploy", "cache the pool", "deploy logs nate", "alpha alpha", "pool"]


def _hybrid(store) -> list:
    """Every row of a hybrid recall: id, score and the dense parts (bit for bit)."""
    ctx = store.recall("alpha deploy", tenant="t", now=LATER, hybrid=True, max_records=4)
    return [(r.memory.id, r.score, r.components) for r in ctx.rows]


def _reordered(path):
    """A process whose index holds tenant t's documents out of id order, its snapshot and
    vector file written (a memory rewritten after the build comes last)."""
    store = memcommit.open(path, embedder="hash")
    with store.commit(message="seed", now=T0) as tx:
        added = [tx.add(text, tenant="t") for text in TEXTS]
    _hybrid(store)  # built in id order, every row given its vector
    with store.commit(message="rewrite", now=T0 + timedelta(hours=1)) as tx:
        tx.update(added[0].id, content="gamma pool logs")
    _hybrid(store)
    store_index(store).save("t")
    return store


def _built(path, tmp_path, monkeypatch) -> list:
    """The hybrid rows of a process that builds tenant t from the store (an empty folder)."""
    with monkeypatch.context() as patch:
        patch.setenv("MEMCOMMIT_INDEX_DIR", str(tmp_path / "empty"))
        with memcommit.open(path, embedder="hash") as fresh:
            return _hybrid(fresh)


def test_a_snapshot_written_again_at_its_commit_never_takes_the_older_vector_file(
    tmp_path, recall_snapshots, monkeypatch
):
    """A rebuild at the same commit writes a snapshot of the same stamp in another document
    order, and no vector file (its rows have none yet): the older file stays beside it and
    must not be read, or its vectors land on other memories."""
    path = tmp_path / "v.db"
    first = _reordered(path)
    with memcommit.open(path, embedder="hash") as second:
        store_index(second).rebuild("t")  # id order, same commit
    with memcommit.open(path, embedder="hash") as late:
        assert _hybrid(late) == _built(path, tmp_path, monkeypatch)
        assert store_index(late).opened["t"].startswith("loaded")
    first.close()


def test_a_vector_file_written_after_the_snapshot_was_opened_is_not_read_for_it(
    tmp_path, recall_snapshots, monkeypatch
):
    """A process opens a snapshot (its vector file is read at its first hybrid recall);
    meanwhile another process at the same commit writes both files in its own order."""
    path = tmp_path / "v.db"
    first = _reordered(path)
    with memcommit.open(path, embedder="hash") as late:
        late.recall("alpha deploy", tenant="t", now=LATER, hybrid=False)  # first's snapshot
        with memcommit.open(path, embedder="hash") as second:
            store_index(second).rebuild("t")  # id order, same commit
            _hybrid(second)
            store_index(second).save("t")
        assert store_index(late).opened["t"].startswith("loaded")
        assert _hybrid(late) == _built(path, tmp_path, monkeypatch)
    first.close()


def _counting_fills(monkeypatch) -> list[int]:
    """How many vectors each recall's `fill` put into the index from the store."""
    put: list[int] = []

    def counted(*args):
        put.append(vectors.fill(*args))
        return put[-1]

    monkeypatch.setattr(run, "fill", counted)
    return put


def _tokens(store) -> tuple[str, list[str]]:
    """The write token of tenant t's snapshot, and of each vector file beside it."""
    snapshot = index_dir(store) / snapshot_name("t")
    companions = files.companions(snapshot.parent, snapshot.name)
    return persist.described(snapshot)["token"], [persist.described(p)["token"] for p in companions]


def test_a_writer_that_never_ranks_by_meaning_keeps_the_vector_file(tmp_path, monkeypatch):
    """A writer's keep (no embedder, no recall) writes the snapshot again: the vector file
    goes with it, so the next process reads the rows from it, not every vector from the
    store (before: a 53,000-memory tenant's first recall 1.3 s instead of 0.06)."""
    monkeypatch.setattr(upkeep, "KEEP_AFTER", 50)
    path = tmp_path / "v.db"
    store, _ = _stored(path)
    first = store.recall("vault code", tenant="t", now=LATER, max_records=5)
    store.close()
    with memcommit.open(path) as writer:  # never recalls, embeds nothing
        with writer.commit(message="more", now=T0 + timedelta(hours=1)) as tx:
            for i in range(100):
                tx.add(f"later note {i}", kind="event", tenant="t")
        token, beside = _tokens(writer)
        assert store_index(writer).index("t").dense == {}  # carried for the write, not held
    assert beside == [token]  # written with the writer's snapshot
    put = _counting_fills(monkeypatch)
    with memcommit.open(path, embedder="hash") as again:
        second = again.recall("vault code", tenant="t", now=LATER, max_records=5)
        assert put == [0]  # every row from the file (the 100 later notes have no vector)
        assert _every_row_held(again) is False
        assert [m.id for m in second.selected] == [m.id for m in first.selected]


def test_a_merge_keeps_the_rows_of_a_vector_file_it_never_read(tmp_path, monkeypatch):
    """Renumbering the documents (a merge) of an index restored from a snapshot takes its
    vector file's rows along first: written again in the new order, they rank as a
    process that builds from the store does."""
    path = tmp_path / "v.db"
    store, secret = _stored(path)
    store.recall("vault code", tenant="t", now=LATER)
    store.close()
    with memcommit.open(path) as writer:
        with writer.commit(message="retire", now=T0 + timedelta(hours=1)) as tx:
            for memory in writer.find(tenant="t", limit=400):
                if memory.id != secret.id:
                    tx.invalidate(memory.id)
        index = store_index(writer).index("t")
        assert index.dense == {}  # never ranked by meaning here
        index.merge()
        assert "hash-ngram-v1/64" in index.dense
        store_index(writer).save("t")
    put = _counting_fills(monkeypatch)
    with memcommit.open(path, embedder="hash") as again:
        ranked = _hybrid(again)
    assert put == [400]  # only the 400 new versions' (the writer embedded none of them)
    assert ranked == _built(path, tmp_path, monkeypatch)


def test_rows_carried_by_an_index_with_retired_documents_stay_on_their_documents(
    tmp_path, monkeypatch
):
    """The file written holds the current documents only, renumbered; an index that still
    holds retired ones (no merge yet) must go on reading its own rows, not the file's."""
    path = tmp_path / "v.db"
    store, _ = _stored(path)
    store.recall("vault code", tenant="t", now=LATER)  # its vector file written
    store.close()
    with memcommit.open(path, embedder="hash") as writer:
        assert store_index(writer).index("t").dense == {}  # restored: rows not read yet
        with writer.commit(message="rewrite", now=T0 + timedelta(hours=1)) as tx:
            for memory in writer.find(tenant="t", limit=40):
                tx.update(memory.id, content=f"{memory.content} rewritten")
        store_index(writer).save("t")  # carries the rows along; 40 retired documents stay
        ranked = _hybrid(writer)
    assert ranked == _built(path, tmp_path, monkeypatch)


def test_the_vector_files_of_a_tenant_named_with_a_newline_are_found(tmp_path, monkeypatch):
    """A vector file is keyed "<tenant>\\n<embedder>": a tenant name holding "\\n" must not
    split it in the wrong place (its files were never carried: rows read from the store).
    Such a name is refused where a tenant is written now; a store written before that
    check (here: with it turned off), or imported from one, still has them."""
    from memcommit.store import validate

    monkeypatch.setattr(validate, "tenant_name", lambda name: validate.text("tenant", name))
    tenant = "two\nlines"
    with memcommit.open(tmp_path / "v.db", embedder="hash") as store:
        with store.commit(message="bulk", now=T0) as tx:
            for i in range(300):
                tx.add(f"note {i} on topic {i % 13}", kind="event", tenant=tenant)
        store.recall("topic", tenant=tenant, now=LATER)
        live = store_index(store)
        live.save(tenant)
        path = index_dir(store) / snapshot_name(tenant)
        opened = persist.read(path, tenant, store.commit_id(1) or "")
        beside = vectorfile.Beside(path, tenant, opened.stamp, opened.damage)
        assert beside.embedders() == [("hash-ngram-v1/64", 64)]
        assert beside("hash-ngram-v1/64", 64) is not None

"""A purge in a process that opened a tenant from its snapshot but never ranked it by meaning:
the rewrite also deletes the vector files it does not write again, which hold the purged
memory's codes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import memcommit
from memcommit.embedding.hashed import HashEmbedder
from memcommit.recall.index.dense import codes_of
from memcommit.recall.index.live import index_dir

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
LATER = T0 + timedelta(days=30)
SECRET = "the vault code is seven seven three"


def _folder_bytes(store) -> bytes:
    return b"".join(f.read_bytes() for f in sorted(index_dir(store).iterdir()) if f.is_file())


def test_purge_after_a_lexical_recall_erases_the_vector_file(tmp_path, recall_snapshots):
    path = tmp_path / "v.db"
    with memcommit.open(path, embedder="hash") as first:
        with first.commit(message="bulk", now=T0) as tx:
            for i in range(1_200):
                tx.add(f"note {i} on topic {i % 13}", kind="event", tenant="t")
            secret = tx.add(SECRET, kind="event", tenant="t")
        first.recall("vault code", tenant="t", now=LATER, hybrid=True)  # writes the .vec file
    codes = codes_of(HashEmbedder(64).embed([SECRET]))[0].tobytes()
    with memcommit.open(path, embedder="hash") as second:
        assert codes in _folder_bytes(second)
        second.recall("vault code", tenant="t", now=LATER, hybrid=False)  # opened, no dense rows
        with second.commit(message="purge", now=T0 + timedelta(hours=1)) as tx:
            tx.purge(secret.id)
        assert SECRET.encode() not in _folder_bytes(second)
        assert codes not in _folder_bytes(second)  # the old .vec file is gone

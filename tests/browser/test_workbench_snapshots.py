"""The read-only workbench writes nothing beside the store: recall's indexes of a SQLite store
opened read-only live in memory only (no ``<store>.recall/tenant-*.idx``)."""

from __future__ import annotations

from pathlib import Path

import memcommit
from memcommit.cli.workbench_cmds import open_source
from memcommit.recall.index.live import store_index


def make_store(path: Path) -> None:
    with memcommit.open(str(path)) as store, store.commit(message="seed") as tx:
        for i in range(300):  # past the real SNAPSHOT_MIN too, should a test raise it again
            tx.add(f"deploy note {i} about the payments queue", tenant="alpha")


def snapshots(*folders: Path) -> list[Path]:
    return [found for folder in folders for found in folder.rglob("*.idx")]


def test_a_read_only_store_keeps_no_snapshot(tmp_path: Path, recall_snapshots: Path) -> None:
    path = tmp_path / "memories.db"
    make_store(path)
    source = open_source(str(path))
    try:
        body = source.recall({"tenant": ["alpha"], "query": ["deploy payments"]})
        opened = store_index(source.store).opened["alpha"]
    finally:
        source.close()
    assert body["selected"]
    assert snapshots(tmp_path, recall_snapshots) == []
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == []  # no memories.db.recall/
    assert opened == "built: no snapshot place"
    with memcommit.open(str(path)) as writer:  # a writer of the same store keeps one
        writer.recall("deploy payments", tenant="alpha")
    assert len(snapshots(recall_snapshots)) == 1

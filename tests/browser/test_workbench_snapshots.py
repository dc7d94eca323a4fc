"""The read-only workbench writes nothing to the store, and reads recall's snapshots: a
tenant another process indexed starts from its snapshot (derived data kept in the store's
cache folder, not the store)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import memcommit
from memcommit.cli.workbench_cmds import open_source
from memcommit.recall.index.live import store_index


def make_store(path: Path) -> None:
    with memcommit.open(str(path)) as store, store.commit(message="seed") as tx:
        for i in range(300):  # past the real SNAPSHOT_MIN too, should a test raise it again
            tx.add(f"deploy note {i} about the payments queue", tenant="alpha")


def snapshots(folder: Path) -> dict[Path, bytes]:
    return {found: found.read_bytes() for found in folder.rglob("*.idx")}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_read_only_store_is_not_written_and_its_snapshots_are_read(
    tmp_path: Path, recall_snapshots: Path
) -> None:
    path = tmp_path / "memories.db"
    make_store(path)
    with memcommit.open(str(path)) as writer:  # a writer keeps the tenant's snapshot
        writer.recall("deploy payments", tenant="alpha")
    kept = snapshots(recall_snapshots)
    assert len(kept) == 1
    before = digest(path)
    source = open_source(str(path))
    try:
        body = source.recall({"tenant": ["alpha"], "query": ["deploy payments"]})
        opened = store_index(source.store).opened["alpha"]
    finally:
        source.close()
    assert body["selected"] and opened.startswith("loaded"), opened
    assert digest(path) == before
    assert snapshots(recall_snapshots) == kept  # read as it was, not written again

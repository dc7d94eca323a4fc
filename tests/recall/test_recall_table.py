"""The index's column table: every row reaches the arrays, the code tables, the snapshot
file's sections, a restored index and a recall's Snapshot, with the same values."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from memcommit.model import Memory
from memcommit.recall.index import table
from memcommit.recall.index.sections import Section
from memcommit.recall.index.snapshot import SECTIONS
from memcommit.recall.index.tenant import TenantIndex

START = datetime(2024, 5, 1, tzinfo=timezone.utc)


def memories() -> list[Memory]:
    return [
        Memory(
            id=f"m{i}",
            content=["Nate: deploy the cache", "alpha beta", "", "Ana: logs  of the pool"][i % 4],
            tenant="t",
            kind=["fact", "event", "correction"][i % 3],
            scope=["user", "team"][i % 2],
            session=f"s{i % 3}" if i % 5 else None,
            key=f"k{i % 4}" if i % 2 else None,
            tier=["short", "mid", None][i % 3],
            created_at=START + timedelta(minutes=i % 7),
            created_commit=i + 1,
            valid_from=START if i % 3 == 0 else None,
            valid_to=START + timedelta(days=i) if i % 4 == 0 else None,
            status="active" if i % 6 else "invalidated",
            always=i % 7 == 0,
            token_count=i * 3,
        )
        for i in range(40)
    ]


def values(index_or_snap, column: table.IndexColumn, docs: np.ndarray) -> list[object]:
    """A column's values of ``docs``, coded ones as the text their code stands for."""
    held = getattr(index_or_snap, column.name)  # an index's Column, or a snapshot's array
    found = (held if isinstance(held, np.ndarray) else held.view())[docs].tolist()
    if column.codes is None:
        return found
    names = getattr(index_or_snap, column.codes).values
    return [names[code] if code >= 0 else None for code in found]


def test_every_column_of_the_table_survives_a_snapshot_file_and_a_restore():
    index = TenantIndex("t")
    index.put_many(memories())
    index.remove("m5")
    index.put(Memory(id="m6", content="an update: retires the old document", tenant="t"))
    exported = index.export().arrays
    assert set(SECTIONS) == set(exported)
    assert {column.name for column in table.COLUMNS} <= set(SECTIONS)
    restored = TenantIndex.restore(
        "t", {name: Section.of(array, name) for name, array in exported.items()}
    )
    current = np.flatnonzero(index.alive.view())
    assert len(current) == len(restored) == 39
    for column in table.COLUMNS:
        before = values(index, column, current)
        assert values(restored, column, np.arange(len(current))) == before, column.name
        assert values(index.snapshot(), column, current) == before, column.name
        if column.codes is not None:  # only the codes a current document uses are kept
            assert len(getattr(restored, column.codes).values) == len(set(before) - {None})


def test_a_new_document_gets_each_rows_value_and_later_changes_rewrite_only_mutable_ones():
    index = TenantIndex("t")
    index.put_many(memories()[:4])
    snap = index.snapshot()
    index.put(Memory(id="m1", content="newer", tenant="t", key="k1"))  # retires m1's document
    mutable = {column.name for column in table.COLUMNS if column.mutable}
    assert mutable == {"alive", "latest"}
    assert bool(snap.alive[1]) and not bool(index.alive.data[1])  # the snapshot kept its copy
    for column in table.COLUMNS:
        assert values(snap, column, np.arange(4)) == values(index, column, np.arange(4)) or (
            column.name in mutable
        ), column.name
    first = values(index, next(c for c in table.COLUMNS if c.name == "words"), np.arange(4))
    assert first == [4, 2, 0, 5]

"""The vector file of a tenant and an embedder: its dense rows beside the lexical snapshot.

The one place vector files are named, written and read (a budgeted cache of
recall files would load them through `read`). A file is
written with the tenant's snapshot, under the same stamp and in the same
document order (`DenseRows.export` of the documents the snapshot keeps), so a
restored snapshot and its rows agree document for document; it is read only for
an index restored from that very snapshot and not merged since
(`TenantIndex.dense_file`). The stamp's token tells that write from another
process's snapshot of the same commit (its documents in another order), which
may have replaced the snapshot with or without writing a vector file. The
format is the snapshot's (`memcommit.recall.index.persist`: stamped, a CRC-32
per block, mapped, written atomically), its key the tenant and the embedder's
name. Named after the snapshot (``<snapshot>.<embedder hash>.vec``), so erasing
a tenant's snapshot erases its vector files too (`memcommit.recall.index.files.erase`).

At a million memories of 384 dims the file is 442 MB (int8 codes, 48 bytes of
sign codes, a float64 norm and a flag per row). A recall maps it: the sign codes
are read whole (the Hamming stage), the int8 codes only at the candidates' rows.
Its blocks are `BLOCK` (8 KiB), not the snapshot's 16 KiB: a candidate's row of
384 bytes is checked with the 8 KiB around it. At 1M the first recall's 10,000
candidates checked 160 MB of 16 KiB blocks, most of its time; 8 KiB blocks
check half of that, 4 KiB a quarter but spread the checks over many more warm
recalls (each block is checked once, by the first recall that reads it): 8 KiB
measured best of the three, cold and warm. A file of other blocks is refused
(its rows then come from the store). A file written before sign codes were
kept gets them computed from the codes as it is read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memcommit.errors import IndexDamaged
from memcommit.recall.index import files, persist
from memcommit.recall.index.dense import DenseRows
from memcommit.recall.index.persist import SnapshotRefused, Stamp
from memcommit.recall.index.sections import Damage
from memcommit.recall.index.snapshot import Exported

if TYPE_CHECKING:
    from memcommit.recall.index.tenant import TenantIndex


#: Bytes per checked block of a vector file (`memcommit.recall.index.sections`).
BLOCK = 1 << 13


def name(snapshot: str, embedder: str) -> str:
    """The vector file of ``embedder`` beside the snapshot file named ``snapshot``."""
    return f"{snapshot}.{hashlib.sha256(embedder.encode()).hexdigest()[:16]}{files.COMPANION}"


def _key(tenant: str, embedder: str) -> str:
    return f"{tenant}\n{embedder}"


def write(path: Path, tenant: str, stamp: Stamp, rows: DenseRows, docs: np.ndarray) -> int:
    """Write the rows of ``docs`` (the snapshot's documents, in its order); the file's size."""
    arrays = rows.export(docs)
    arrays["codes"] = arrays["codes"].reshape(-1)
    arrays["signs"] = arrays["signs"].reshape(-1)
    return persist.write(path, _key(tenant, rows.embedder), stamp, Exported(arrays), BLOCK)


def read(
    path: Path, tenant: str, embedder: str, dims: int, stamp: Stamp, damage: Damage | None = None
) -> DenseRows:
    """The rows in ``path``, written under ``stamp``; SnapshotRefused (why) otherwise.

    The flags, norms and sign codes are checked here (every recall reads them
    whole); the int8 codes block by block as the candidates' rows are read, a
    failed block marking ``damage`` (the snapshot's) when given.
    """
    opened = persist.read(path, _key(tenant, embedder), stamp.store, BLOCK)
    if damage is not None:
        opened.sections["codes"].report_to(damage)
    if opened.stamp != stamp:
        raise SnapshotRefused("written with another snapshot")
    sections = opened.sections
    has = sections["has"].whole()
    codes = sections["codes"].array
    if len(codes) != len(has) * dims:
        raise SnapshotRefused(f"rows of {len(codes) // max(len(has), 1)} dims, not {dims}")
    codes = codes.reshape(len(has), dims)
    signs = sections["signs"].whole().reshape(len(has), -1) if "signs" in sections else None
    norms = sections["norms"].whole()
    return DenseRows(embedder, dims, codes, norms, has, signs, sections["codes"])


def write_beside(snapshot: Path, index: TenantIndex, stamp: Stamp, *, erasing: bool) -> None:
    """Write the vector file of every embedder whose rows ``index`` holds, beside ``snapshot``.

    The rows of the documents the snapshot keeps, in its order, under its stamp.
    After a purge (``erasing``) the other vector files there go too: never read
    beside this snapshot, they may hold the purged memory's codes (one that stays
    is reported). Otherwise they stay, refused by their stamp: listing the
    folder at every write would cost a pass over every tenant's files.
    """
    written = set()
    with index.lock:
        docs = np.flatnonzero(index.alive.view())
        for embedder, rows in index.dense.items():
            place = snapshot.parent / name(snapshot.name, embedder)
            write(place, index.tenant, stamp, rows, docs)
            written.add(place)
    if erasing:
        stale = set(files.companions(snapshot.parent, snapshot.name)) - written
        files.drop(sorted(stale), erasing=True)


def reader(
    snapshot: Path, tenant: str, stamp: Stamp, damage: Damage
) -> Callable[[str, int], DenseRows | None]:
    """Reads an embedder's rows from the vector file written with ``snapshot`` (None: none);
    a block of int8 codes that fails later marks the snapshot's ``damage``."""

    def read_rows(embedder: str, dims: int) -> DenseRows | None:
        place = snapshot.parent / name(snapshot.name, embedder)
        try:
            return read(place, tenant, embedder, dims, stamp, damage)
        except (SnapshotRefused, OSError, IndexDamaged):  # rows come from the store instead
            return None

    return read_rows

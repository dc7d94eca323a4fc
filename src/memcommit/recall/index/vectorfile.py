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

At a million memories of 384 dims the file is 450 MB (int8 codes, 48 bytes of
sign codes by word, a float64 norm, two int32 row sums and a flag per row). A
recall maps it: the sign codes are read whole (the Hamming stage), the int8
codes only at the candidates' rows. The flags, norms, sign codes and row sums
are checked at open by the CRCs of their blocks (57 MB at a million rows); the
int8 codes by each row's sums the first time a process reads it
(`DenseRows.checked`), never by
the CRC of the blocks around it, which a process paid once per block as its
first recalls reached them (a million rows: 384 MB, 0.1-0.2 s over its first
dozen recalls). Blocks are `BLOCK` (8 KiB, what those CRCs measured best with);
a file of other blocks is refused (its rows then come from the store), and so
is a file of the layout before (rows of sign bytes, no row sums).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memcommit.errors import IndexDamaged
from memcommit.recall.index import files, persist
from memcommit.recall.index.dense import DenseRows, carry
from memcommit.recall.index.persist import SnapshotRefused, Stamp
from memcommit.recall.index.sections import Damage
from memcommit.recall.index.snapshot import Exported

if TYPE_CHECKING:
    from memcommit.recall.index.tenant import TenantIndex


#: Bytes per checked block of a vector file (`memcommit.recall.index.sections`).
BLOCK = 1 << 13
#: The file's names of `DenseRows.export`'s arrays that another layout held under their name
#: (a file of rows of sign bytes and no row sums is refused).
NAMES = {"signs": "sign_words", "sums": "row_sums"}


def name(snapshot: str, embedder: str) -> str:
    """The vector file of ``embedder`` beside the snapshot file named ``snapshot``."""
    return f"{snapshot}.{hashlib.sha256(embedder.encode()).hexdigest()[:16]}{files.COMPANION}"


def _key(tenant: str, embedder: str) -> str:
    return f"{tenant}\n{embedder}"


def write(
    path: Path,
    tenant: str,
    stamp: Stamp,
    rows: DenseRows,
    docs: np.ndarray,
    guard: files.Guard = files.ANY,
) -> int:
    """Write the rows of ``docs`` (the snapshot's documents, in its order); the file's size."""
    exported = rows.export(docs).items()
    arrays = {NAMES.get(part, part): values.reshape(-1) for part, values in exported}
    key = _key(tenant, rows.embedder)
    return persist.write(path, key, stamp, Exported(arrays), BLOCK, guard)


def read(
    path: Path, tenant: str, embedder: str, dims: int, stamp: Stamp, damage: Damage | None = None
) -> DenseRows:
    """The rows in ``path``, written under ``stamp``; SnapshotRefused (why) otherwise.

    The flags, norms, sign codes and row sums are checked here (every recall reads
    them whole); each int8 code row against its sums when it is first read, a
    failure marking ``damage`` (the snapshot's) when given.
    """
    opened = persist.read(path, _key(tenant, embedder), stamp.store, BLOCK)
    if damage is not None:
        opened.sections["codes"].report_to(damage)
    if opened.stamp != stamp:
        raise SnapshotRefused("written with another snapshot")
    sections = opened.sections
    if not {NAMES["signs"], NAMES["sums"]} <= set(sections):
        raise SnapshotRefused("written before row sums and sign words")
    has = sections["has"].whole()
    codes = sections["codes"].array
    if len(codes) != len(has) * dims:
        raise SnapshotRefused(f"rows of {len(codes) // max(len(has), 1)} dims, not {dims}")
    codes = codes.reshape(len(has), dims)
    signs = sections[NAMES["signs"]].whole().reshape(-1, len(has))
    sums = sections[NAMES["sums"]].whole().reshape(len(has), -1)
    norms = sections["norms"].whole()
    return DenseRows(embedder, dims, codes, norms, has, signs, (sections["codes"], sums))


def write_beside(
    snapshot: Path, index: TenantIndex, stamp: Stamp, *, erasing: bool, guard: files.Guard
) -> None:
    """Write the vector file of every embedder whose rows ``index`` holds or its snapshot's
    vector files held (`memcommit.recall.index.dense.carry`), beside ``snapshot``.

    The rows of the documents the snapshot keeps, in its order, under its stamp and
    ``guard`` (the snapshot's).
    After a purge (``erasing``) the other vector files there go too: never read
    beside this snapshot, they may hold the purged memory's codes (one that stays
    is reported). Otherwise they stay, refused by their stamp: listing the
    folder at every write would cost a pass over every tenant's files.
    """
    written = set()
    with index.lock:
        carried = carry(index.dense, index.dense_file)
        docs = np.flatnonzero(index.alive.view())
        for embedder, rows in index.dense.items():
            place = snapshot.parent / name(snapshot.name, embedder)
            write(place, index.tenant, stamp, rows, docs, guard)
            written.add(place)
        if len(docs) == index.alive.size:  # the files' rows are the index's own documents
            held = sorted((embedder, rows.dims) for embedder, rows in index.dense.items())
            for embedder in carried:  # read for this write only: from the new file when used
                del index.dense[embedder]
            index.dense_file = Beside(snapshot, index.tenant, stamp, Damage(str(snapshot)), held)
    if erasing:
        stale = set(files.companions(snapshot.parent, snapshot.name)) - written
        files.drop(sorted(stale), erasing=True)


class Beside:
    """The vector files written with one snapshot, as an index restored from it reads them
    (`TenantIndex.dense_file`): an embedder's rows (None: no sound file), and which
    embedders have a file there. A block of int8 codes that fails later marks the
    snapshot's ``damage``."""

    def __init__(
        self,
        snapshot: Path,
        tenant: str,
        stamp: Stamp,
        damage: Damage,
        embedders: list[tuple[str, int]] | None = None,
    ) -> None:
        """``embedders``: those its writer wrote (None: the folder is listed when asked)."""
        self.snapshot, self.tenant, self.stamp, self.damage = snapshot, tenant, stamp, damage
        self._embedders = embedders

    def __call__(self, embedder: str, dims: int) -> DenseRows | None:
        place = self.snapshot.parent / name(self.snapshot.name, embedder)
        try:
            return read(place, self.tenant, embedder, dims, self.stamp, self.damage)
        except (SnapshotRefused, OSError, IndexDamaged):  # rows come from the store instead
            return None

    def embedders(self) -> list[tuple[str, int]]:
        """(embedder, dims) of each vector file beside the snapshot written with it, by name.

        Listed once (a folder of many tenants' files costs a pass): files written with
        the snapshot were all there when it was; one erased since is refused when read.
        """
        if self._embedders is None:
            self._embedders = self._listed()
        return self._embedders

    def _listed(self) -> list[tuple[str, int]]:
        found = []
        for place in files.companions(self.snapshot.parent, self.snapshot.name):
            meta = persist.described(place)
            if meta is None or meta["token"] != self.stamp.token:
                continue
            key, mine = str(meta["tenant"]), _key(self.tenant, "")  # (either may hold "\n")
            lengths = {part: length for part, _, length, *_ in meta["arrays"]}
            rows, codes = lengths.get("has", 0), lengths.get("codes", 0)
            if key.startswith(mine) and rows and codes % rows == 0:
                found.append((key[len(mine) :], codes // rows))
        return sorted(found)

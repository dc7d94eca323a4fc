"""The arrays of a snapshot file, each handed out only after the blocks holding it passed a CRC-32.

A snapshot keeps its arrays ("sections") in one mapped file. Each section is
cut into blocks of `BLOCK` bytes (or the file's own size: a vector file's are
8 KiB, `memcommit.recall.index.vectorfile`), and the file's header lists the CRC-32 of
every block (the header has a CRC-32 of its own, checked at open). A `Section`
gives its array whole (`Section.whole`) or a range of its rows
(`Section.rows`) only after the blocks holding them passed, and checks each
block once. Opening a snapshot therefore costs its header, and a recall checks
(and brings into memory) only what it reads: the columns it filters on, the
postings of its terms, the ids it returns; not the whole file.

A block that fails raises `memcommit.errors.IndexDamaged` and marks its file
damaged (`Damage`): nothing read from it is used, and the index that holds it
is dropped and rebuilt (see `memcommit.recall.index.live`). Blocks never span two
sections, so a section written in place after its check (mapped columns are
copy-on-write) cannot make a later check of another section fail.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import NoReturn

import numpy as np

from memcommit.errors import IndexDamaged
from memcommit.recall.index.sizes import OBJECT

#: Bytes per checked block: small enough that a recall checks little more than it reads
#: (a rare term's postings are a few hundred bytes); 64 KiB blocks made the first pass
#: of queries over a million memories a third slower.
BLOCK = 1 << 14
#: The bytes and check flags of a section with nothing to check (shared, never written).
_NOTHING = memoryview(b"")
_NONE_PASSED = bytearray()


class Damage:
    """Whether a block of one snapshot file failed its check; shared by the file's sections."""

    __slots__ = ("path", "section")

    def __init__(self, path: str) -> None:
        self.path = path
        self.section: str | None = None  # the section that failed, once one did


class Section:
    """One array of a snapshot, checked block by block before first use (or one in memory)."""

    __slots__ = (
        "_block",
        "_bytes",
        "_crcs",
        "_damage",
        "_passed",
        "_size",
        "_whole",
        "array",
        "name",
    )

    def __init__(
        self,
        name: str,
        array: np.ndarray,
        crcs: list[int] | None,
        damage: Damage | None,
        block: int = BLOCK,
    ) -> None:
        """``block``: the bytes per checked block of the file (`BLOCK` unless it says)."""
        self.name = name
        self._block = block
        self.array = array
        self._size = array.itemsize
        self._whole = crcs is None  # nothing to check: an array built in memory
        # what checking needs, only where there is something to check (a small tenant
        # held in memory has dozens of sections: their views would cost more than its text)
        self._bytes = _NOTHING if crcs is None else array.data.cast("B")
        self._crcs: Sequence[int] = () if crcs is None else crcs
        self._passed = _NONE_PASSED if crcs is None else bytearray(len(crcs))
        self._damage = damage

    @classmethod
    def of(cls, array: np.ndarray, name: str = "") -> Section:
        """An array built in memory: nothing to check."""
        return cls(name, np.ascontiguousarray(array), None, None)

    def __len__(self) -> int:
        return len(self.array)

    def nbytes(self) -> int:
        """The array's bytes and what checking it keeps (a flag per block)."""
        return OBJECT + int(self.array.nbytes) + len(self._passed)

    def whole(self) -> np.ndarray:
        """The array, every block checked."""
        if not self._whole:
            self._check(0, len(self._crcs) - 1)
            self._whole = True
        return self.array

    def rows(self, start: int, stop: int) -> np.ndarray:
        """``array[start:stop]``, the blocks holding those rows checked."""
        if not self._whole and stop > start:
            first = start * self._size // self._block
            last = (min(stop * self._size, len(self._bytes)) - 1) // self._block
            if first != last or not self._passed[first]:  # (most reads: one block, checked)
                self._check(first, last)
        return self.array[start:stop]

    def report_to(self, damage: Damage) -> None:
        """A failed block marks ``damage`` (the snapshot a vector file belongs to), so the
        index holding this section is dropped and rebuilt like one whose own block failed."""
        self._damage = damage

    def _check(self, first: int, last: int) -> None:
        """Check blocks ``first`` to ``last``; IndexDamaged on the first that fails."""
        passed = self._passed
        for block in range(first, last + 1):
            if passed[block]:
                continue
            data = self._bytes[block * self._block : (block + 1) * self._block]
            if zlib.crc32(data) != self._crcs[block]:
                self.fail()
            passed[block] = 1

    def fail(self) -> NoReturn:
        """Mark the file damaged (by this section) and raise IndexDamaged: a block failed its
        CRC, or a check of the reader's own (a vector file's row sums) failed."""
        damage = self._damage
        assert damage is not None  # only mapped sections have anything to check
        damage.section = self.name
        raise IndexDamaged(damage.path, self.name)


def block_crcs(array: np.ndarray, block: int = BLOCK) -> list[int]:
    """The CRC-32 of each ``block`` bytes of ``array`` (what `Section` checks against)."""
    data = np.ascontiguousarray(array).data.cast("B")
    return [zlib.crc32(data[start : start + block]) for start in range(0, len(data), block)]

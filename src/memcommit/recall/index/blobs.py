"""Many strings as one UTF-8 blob with offsets: a snapshot's ids and terms, decoded one at a time.

A million memory ids as Python strings cost some 80 MB and a tenth of a second
to decode; a recall reads ten of them. Here a snapshot keeps each list of
strings as its bytes run together plus where each one starts, and a string is
decoded when it is read. A sorted table (`Sorted`: a vocabulary's terms and
stems) is searched by bisection on the bytes (UTF-8 byte order is code point
order, so it is Python's string order). The document ids (`DocIds`) come with
the permutation that sorts them, for finding a document by id and for
breaking ties by id without decoding.

Whatever is added after a snapshot was read lives in plain lists and dicts
beside it. A table asked for many lookups decodes itself into a dict once
(`lookups_before_decoding`): past that point a dict is cheaper than bisecting.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from typing import Any, overload

import numpy as np

from memcommit.recall.index.sections import Section
from memcommit.recall.index.sizes import ENTRY, OBJECT, SLOT

#: Stored ids a `DocIds` keeps decoded (then it starts again).
_RECENT = 1 << 14


def lookups_before_decoding(size: int) -> int:
    """Bisections of a table of ``size`` strings after which it is decoded into a dict."""
    return 64 + size // 64


def encode(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(blob, starts): the UTF-8 bytes of ``texts`` run together, and len(texts) + 1 offsets."""
    encoded = list(map(str.encode, texts))
    starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=starts[1:])
    blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return blob, starts.astype(offset_type(int(starts[-1])))


def offset_type(total: int) -> type[np.signedinteger]:
    """The narrowest offset type for a blob of ``total`` bytes."""
    return np.int32 if total < 2**31 else np.int64


class Strings:
    """A list of strings stored as (blob, starts) sections; ``table[i]`` decodes one.

    The offsets (a few bytes a string) are checked whole when first read; the
    blob a block at a time, as strings are read.
    """

    def __init__(self, blob: Section, starts: Section) -> None:
        self.blob, self.starts = blob, starts
        self._starts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.starts) - 1

    def nbytes(self) -> int:
        """The blob and its offsets."""
        return self.blob.nbytes() + self.starts.nbytes()

    def raw(self, position: int) -> bytes:
        """The UTF-8 bytes of string ``position``."""
        starts = self._starts
        if starts is None:
            starts = self._starts = self.starts.whole()
        return self.blob.rows(starts[position], starts[position + 1]).tobytes()

    def __getitem__(self, position: int) -> str:
        if not 0 <= position < len(self):
            raise IndexError(position)
        return self.raw(position).decode()

    def decoded(self) -> list[str]:
        """Every string, decoded."""
        blob = self.blob.whole().tobytes()
        starts = self.starts.whole().tolist()
        return [blob[a:b].decode() for a, b in itertools.pairwise(starts)]


class Sorted:
    """Distinct strings in ascending order: position of a string by bisection, text by position.

    The table is checked whole on its first lookup (it is small beside the ids)
    and each lookup is remembered; past `lookups_before_decoding` it is decoded
    into a dict.
    """

    def __init__(self, strings: Strings) -> None:
        self.strings = strings
        self._found: dict[str, int | None] = {}  # lookups so far, then every string
        self._decoded = False
        self._table: tuple[bytes, memoryview] | None = None  # blob and offsets, checked

    def __len__(self) -> int:
        return len(self.strings)

    def __getitem__(self, position: int) -> str:
        return self.strings[position]

    def nbytes(self) -> int:
        """The strings, their lookups so far (or their dict) and the bytes copied to bisect."""
        copied = len(self._table[0]) if self._table is not None else 0
        return OBJECT + self.strings.nbytes() + len(self._found) * ENTRY + copied

    def find(self, text: str) -> int | None:
        """The position of ``text``, or None."""
        found = self._found.get(text, -1)
        if found != -1 or self._decoded:
            return None if found == -1 else found
        if len(self._found) >= lookups_before_decoding(len(self)):
            self._decode()
            return self._found.get(text)
        if self._table is None:
            offsets = self.strings.starts.whole()
            native = offsets.astype(offsets.dtype.newbyteorder("="), copy=False)
            starts = native.data  # (a memoryview: reads give ints, not numpy scalars)
            self._table = (self.strings.blob.whole().tobytes(), starts)
        blob, starts = self._table
        key = text.encode()
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if blob[starts[middle] : starts[middle + 1]] < key:
                low = middle + 1
            else:
                high = middle
        hit = low if low < len(self) and blob[starts[low] : starts[low + 1]] == key else None
        self._found[text] = hit
        return hit

    def among(self, texts: Set[str]) -> Set[str]:
        """Those of ``texts`` in the table: one set intersection once it is decoded.

        Asked about more strings than its lookups before decoding leave, the
        table decodes at once (as so many `find` calls would), so a spelling
        check of hundreds of candidates is one C-level pass, not a bisection each.
        """
        left = lookups_before_decoding(len(self)) - len(self._found)
        if not self._decoded and len(texts) >= left:
            self._decode()
        if self._decoded:
            return self._found.keys() & texts
        return {text for text in texts if self.find(text) is not None}

    def _decode(self) -> None:
        self._found = {s: i for i, s in enumerate(self.strings.decoded())}
        self._decoded = True


class DocIds(Sequence[str]):
    """The memory id of every document of an index, by document number.

    The first documents may come from a snapshot (blob, offsets and the
    permutation that sorts them by id, all mapped); later ones are Python
    strings. `find` gives the newest document of an id (the caller checks it is
    current); an id outside the stored ids' range (a new memory's: ids sort by
    creation) is missed without a bisection, and does not count towards decoding
    the table. `ranks` gives each document's place in id order.
    """

    def __init__(self, stored: Strings | None = None, order: Section | None = None) -> None:
        self._stored = stored
        self._base = len(stored) if stored is not None else 0
        self._order = order  # documents of ``stored`` sorted by id
        self._added: list[str] = []
        self._newest: dict[str, int] = {}  # id -> its newest added document
        self._found: dict[str, int] | None = None  # ``stored`` decoded, after many lookups
        self._lookups = 0
        self._ranks: np.ndarray | None = None
        self._range: tuple[bytes, bytes] | None = None  # smallest and largest stored id
        self._recent: dict[int, str] = {}  # stored ids decoded lately (a query reads each often)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._base + len(self._added)

    @overload
    def __getitem__(self, doc: int) -> str: ...
    @overload
    def __getitem__(self, doc: slice) -> Sequence[str]: ...
    def __getitem__(self, doc: int | slice) -> str | Sequence[str]:
        if isinstance(doc, slice):
            return [self[i] for i in range(*doc.indices(len(self)))]
        if doc < 0:
            doc += len(self)
        if doc >= self._base:
            return self._added[doc - self._base]
        found = self._recent.get(doc)
        if found is None:
            if doc < 0 or self._stored is None:
                raise IndexError(doc)
            if len(self._recent) >= _RECENT:
                self._recent = {}
            found = self._recent[doc] = self._stored[doc]
        return found

    def __iter__(self) -> Iterator[str]:
        return (self[doc] for doc in range(len(self)))

    def nbytes(self) -> int:
        """The stored ids (with their order), the ids added since and what lookups keep."""
        stored = self._stored.nbytes() if self._stored is not None else 0
        order = self._order.nbytes() if self._order is not None else 0
        ranks = int(self._ranks.nbytes) if self._ranks is not None else 0
        decoded = len(self._found) * ENTRY if self._found is not None else 0
        kept = (len(self._newest) + len(self._recent)) * ENTRY + len(self._added) * SLOT
        return OBJECT + stored + order + ranks + decoded + kept

    @classmethod
    def packed(cls, blob: np.ndarray, starts: np.ndarray, order: np.ndarray) -> DocIds:
        """Ids held as `take` returned them (in memory): a merged index's."""
        return cls(Strings(Section.of(blob), Section.of(starts)), Section.of(order))

    def extend(self, ids: Iterable[str]) -> None:
        """Number the next documents with ``ids``."""
        first = len(self)
        added = list(ids)
        self._added += added
        self._newest.update(zip(added, range(first, first + len(added)), strict=True))
        self._ranks = None

    def forget(self, memory_id: str) -> None:
        """``memory_id`` has no document any more (its newest was retired): `find` misses it."""
        self._newest[memory_id] = -1

    def find(self, memory_id: str) -> int | None:
        """The newest document numbered with ``memory_id`` (None: never, or forgotten)."""
        found = self._newest.get(memory_id)
        if found is not None:
            return found if found >= 0 else None
        if self._stored is None:
            return None
        return self._find_stored(memory_id)

    def _find_stored(self, memory_id: str) -> int | None:
        if self._found is not None:
            return self._found.get(memory_id)
        assert self._stored is not None and self._order is not None
        key, raw, order = memory_id.encode(), self._stored.raw, self._order
        if not self._base:
            return None
        if self._range is None:
            ends = order.rows(0, 1)[0], order.rows(self._base - 1, self._base)[0]
            self._range = (raw(int(ends[0])), raw(int(ends[1])))
        if not self._range[0] <= key <= self._range[1]:  # a new memory's id sorts after all
            return None
        self._lookups += 1
        if self._lookups > lookups_before_decoding(self._base):
            ids = self._stored.decoded()
            self._found = dict(zip(ids, range(len(ids)), strict=True))
            return self._found.get(memory_id)
        low, high = 0, self._base
        while low < high:
            middle = (low + high) // 2
            if raw(int(order.rows(middle, middle + 1)[0])) < key:
                low = middle + 1
            else:
                high = middle
        doc = int(order.rows(low, low + 1)[0])
        return doc if raw(doc) == key else None

    def ranks(self) -> np.ndarray:
        """Each document's position in (id, document) order: ties broken by id without decoding."""
        with self._lock:
            if self._ranks is None or len(self._ranks) != len(self):
                order = self.order()
                ranks = np.empty(len(order), dtype=np.int64)
                ranks[order] = np.arange(len(order))
                self._ranks = ranks
            return self._ranks

    def sort_key(self) -> Callable[[int], Any]:
        """A key sorting documents by id (stable sorts keep equal ids in document order).

        With ids from a snapshot: their ranks, so nothing is decoded.
        """
        if self._stored is None:
            return self.__getitem__
        return self.ranks().__getitem__

    def order(self) -> np.ndarray:
        """The documents sorted by (id, document number)."""
        added = sorted(range(len(self._added)), key=self._added.__getitem__)
        docs = np.array(added, dtype=np.int64) + self._base
        if self._stored is None or self._order is None:
            return docs
        stored = self._order.whole().astype(np.int64)
        if not len(docs):
            return stored
        raw, order = self._stored.raw, stored.tolist()
        places = []
        low = 0
        for position in added:  # ascending: each bisection starts where the last ended
            key = self._added[position].encode()
            high = self._base
            while low < high:
                middle = (low + high) // 2
                if raw(order[middle]) <= key:  # equal ids: the stored document first
                    low = middle + 1
                else:
                    high = middle
            places.append(low)
        return np.insert(stored, places, docs)

    def take(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(blob, starts, order) of the ids of ``docs`` (ascending), renumbered 0, 1, ..."""
        stored = docs[docs < self._base]
        added = docs[docs >= self._base] - self._base
        parts, lengths = [], []
        if len(stored):
            assert self._stored is not None
            starts = self._stored.starts.whole().astype(np.int64)
            sizes = np.diff(starts)
            keep = np.zeros(self._base, dtype=bool)
            keep[stored] = True
            parts.append(self._stored.blob.whole()[np.repeat(keep, sizes)])
            lengths.append(sizes[stored])
        encoded = [self._added[i].encode() for i in added.tolist()]
        parts.append(np.frombuffer(b"".join(encoded), dtype=np.uint8))
        lengths.append(np.array([len(b) for b in encoded], dtype=np.int64))
        sizes = np.concatenate(lengths)
        starts = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        renumber = np.full(len(self), -1, dtype=np.int64)
        renumber[docs] = np.arange(len(docs))
        order = renumber[self.order()]
        order = order[order >= 0]
        return (
            np.concatenate(parts),
            starts.astype(offset_type(int(starts[-1]))),
            order.astype(offset_type(len(docs))),
        )

"""The incremental per-tenant inverted index that recall ranks and filters from.

Each tenant has its own postings, document frequencies and document count, so
one tenant's vocabulary never changes another tenant's scores. Only the mapping
from a term's text to its integer id is shared (it changes no score).

A memory is one document. A new version of a memory retires its old document
and appends a new one; retired documents stay in the arrays (masked out) until
the next merge rebuilds them compactly. `TenantIndex` keeps the parts in step:
the filter columns and code tables of the column table
(`memcommit.recall.index.table`), the terms and postings
(`memcommit.recall.index.postings`), the document norms
(`memcommit.recall.index.statistics`), the latest document per key
(`memcommit.recall.index.keys`) and the ids (`memcommit.recall.index.blobs`).

An index restored from a snapshot (`TenantIndex.restore`) reads the
snapshot's arrays in place: columns and postings are checked and brought into
memory when first read (`memcommit.recall.index.sections`), ids and terms decoded one
at a time (`memcommit.recall.index.blobs`), so a fresh process answers its first
query without a pass over the tenant.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from memcommit.model import Memory
from memcommit.recall.index import table
from memcommit.recall.index import vocabulary as _vocabulary
from memcommit.recall.index.blobs import DocIds, Strings
from memcommit.recall.index.columns import Codes
from memcommit.recall.index.dense import DenseRows, VectorFiles, carry
from memcommit.recall.index.keys import LatestPerKey
from memcommit.recall.index.order import session_links
from memcommit.recall.index.postings import Postings
from memcommit.recall.index.sections import Section
from memcommit.recall.index.sizes import ENTRY, OBJECT, array_bytes
from memcommit.recall.index.snapshot import SECTIONS, Exported, Snapshot
from memcommit.recall.index.statistics import Norms
from memcommit.recall.index.vocabulary import Vocabulary

_MEMO = 4096  # results kept by TenantIndex.memo
_T = TypeVar("_T")
_BATCH = 4096  # memories indexed together: columns grow once per batch
_BULK_BATCH = 32_768  # the same inside `bulk`: their terms are counted and sorted together


class TenantIndex:
    """Postings, statistics and filter columns for one tenant's memories.

    Each column of the table is an attribute (``index.kind``, a growable
    `memcommit.recall.index.columns.Column`), and so is each code table
    (``index.kinds``); ``columns`` and ``tables`` hold them by name.
    """

    if TYPE_CHECKING:  # the table's columns and code tables, set from it in __init__

        def __getattr__(self, name: str) -> Any: ...

    def __init__(self, tenant: str, vocabulary: Vocabulary | None = None) -> None:
        self.tenant = tenant
        self.vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        self.lock = threading.RLock()
        self.columns = table.new_columns()
        self._hold(table.new_tables())
        vars(self).update(self.columns)
        self.ids = DocIds()
        self.inverted = Postings()
        self.norm_cache = Norms()
        self.dense: dict[str, DenseRows] = {}  # by embedder name: vectors row for row with docs
        #: Reads an embedder's rows from the vector file of the snapshot this index was
        #: restored from (`memcommit.recall.index.vectorfile`); None once a merge renumbers.
        self.dense_file: VectorFiles | None = None
        self.dead = 0  # retired documents still in the arrays
        self.generation = 0  # bumps on every change of content or statistics
        self._bulk = False  # inside `bulk`: postings and frequencies wait for its end
        self._forget_derived()

    def _hold(self, tables: dict[str, Codes]) -> None:
        """Use ``tables`` as the code tables (``index.kinds``...)."""
        self.tables = tables
        vars(self).update(tables)

    def _forget_derived(self) -> None:
        """Drop what is derived from the documents as numbered now (rebuilt when next asked)."""
        self._keys: LatestPerKey | None = None
        self._lengths: tuple[int, np.ndarray, float] | None = None
        self._memo: tuple[int, dict[Hashable, Any]] = (-1, {})
        self._memo_bytes = 0  # what the memo's results hold (`_result_bytes`)
        self._links: tuple[int, Section, Section] | None = None
        self._session_sizes: tuple[int, np.ndarray] | None = None
        self._snapshot: Snapshot | None = None

    # ── writes ──────────────────────────────────────────────────────────────

    @property
    def doc_of(self) -> Mapping[str, int]:
        """Memory id -> its current document."""
        return _CurrentDocs(self)

    def __len__(self) -> int:
        return int(self.alive.size) - self.dead

    def __contains__(self, memory_id: object) -> bool:
        return isinstance(memory_id, str) and self.ids.find(memory_id) is not None

    def put(self, memory: Memory) -> None:
        """Index ``memory``; a memory already indexed under its id is replaced."""
        self.put_many([memory])

    def put_many(self, memories: Iterable[Memory]) -> None:
        """Index many memories (a bulk load, or every version of one commit).

        Columns grow once per batch of memories, not once per memory. Of several
        versions of one id in a batch, the last is indexed (the earlier ones
        would be retired at once).
        """
        items = iter(memories)
        with self.lock:
            size = _BULK_BATCH if self._bulk else _BATCH
            while chunk := list(itertools.islice(items, size)):
                self._put_batch(list({memory.id: memory for memory in chunk}.values()))
            if not self._bulk:
                self._maybe_merge()

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """Index many memories at once (a build): postings and frequencies once, at the end.

        Inside the block, `put_many` appends documents and their terms only; when
        it ends, document frequencies are counted and the postings built in one
        merge, instead of being kept current (and merged again) batch by batch.
        Queries must not run inside the block.
        """
        with self.lock:
            self._bulk = True
            try:
                yield
            finally:
                self._bulk = False
                self.inverted.count(np.flatnonzero(self.alive.view()))
                self.merge()

    def _put_batch(self, batch: list[Memory]) -> None:
        latest = self._latest_per_key()  # (from the columns as they are before this batch)
        for memory in batch:
            old = self.ids.find(memory.id)
            if old is not None:
                self._retire(old)
        first = len(self.ids)
        self.ids.extend(memory.id for memory in batch)
        rows = table.rows(batch, self.tables)
        for column, values in zip(table.COLUMNS, zip(*rows, strict=True), strict=True):
            self.columns[column.name].extend(values)
        texts = (memory.content or "" for memory in batch)
        self.inverted.add(texts, first, self.vocabulary, count=not self._bulk)
        keys = self.key.data
        for doc in range(first, first + len(batch)):
            if keys[doc] >= 0:
                latest.join(int(keys[doc]), doc)
        self.generation += 1

    def remove(self, memory_id: str) -> None:
        """Forget a memory (a purge): it is no longer a document of the tenant."""
        with self.lock:
            doc = self.ids.find(memory_id)
            if doc is not None:
                self._latest_per_key()  # (from the columns as they are before this change)
                self.ids.forget(memory_id)
                self._retire(doc)
                self.generation += 1

    def _retire(self, doc: int) -> None:
        self.alive.data[doc] = False
        self.dead += 1
        if not self._bulk:  # (a bulk block counts frequencies when it ends)
            self.inverted.retire(doc)
        key = int(self.key.data[doc])
        if key >= 0:
            self._latest_per_key().leave(key, doc)

    def _latest_per_key(self) -> LatestPerKey:
        """The latest document of each key (built from the columns when a write first needs it)."""
        if self._keys is None:
            self._keys = LatestPerKey(self.columns, self.ids)
        return self._keys

    # ── merges ──────────────────────────────────────────────────────────────

    def _maybe_merge(self) -> None:
        if self.inverted.needs_compacting() or self.dead > max(1_000, len(self) // 4):
            self.merge()

    def merge(self) -> None:
        """Rebuild compactly: drop retired documents, fold the delta into the main postings."""
        with self.lock:
            carry(self.dense, self.dense_file)
            alive = self.alive.view().copy()
            keep = np.flatnonzero(alive)
            for column in self.columns.values():
                column.replace(column.view()[keep])
            self.ids = DocIds.packed(*self.ids.take(keep))
            self.inverted.compact(alive)
            for rows in self.dense.values():
                rows.keep(keep)
            self.dense_file = None
            self.dead = 0
            self.norm_cache = Norms()
            self._forget_derived()
            self.generation += 1

    # ── snapshots on disk ───────────────────────────────────────────────────

    def export(self) -> Exported:
        """The current documents, their terms and statistics, compactly (see `Exported`).

        Retired documents, terms no current document has and codes no current
        document uses are left out, so a purged memory leaves no trace. Terms
        are renumbered in sorted order (`Vocabulary.export`). What a fresh
        process would otherwise compute before its first answer goes along: the
        norms under the current statistics and the session links.
        """
        with self.lock:
            keep = np.flatnonzero(self.alive.view())
            norms = self.norms(keep) if len(keep) else np.zeros(0)
            before, after = self.session_links()
            arrays = self.inverted.export(keep, self.vocabulary)
            arrays.update(table.export(self.columns, self.tables, keep))
            arrays["ids"], arrays["id_starts"], arrays["id_order"] = self.ids.take(keep)
            numbers = np.full(self.alive.size + 1, -1, dtype=np.int32)  # the last maps -1 to -1
            numbers[keep] = np.arange(len(keep), dtype=np.int32)
            arrays.update(
                norms=np.asarray(norms, dtype=np.float64),
                links_before=numbers[before[keep]],
                links_after=numbers[after[keep]],
            )
            return Exported(arrays)

    def compacted(self) -> TenantIndex:
        """This index as a snapshot would restore it, in memory: arrays, no dicts of terms.

        A built index keeps dict entries for every term and id; its export is a
        few sorted blobs and arrays (with the norms and session links a first
        recall computes anyway). Equivalent for every read and write.
        """
        with self.lock:
            arrays = self.export().arrays
        return TenantIndex.restore(self.tenant, {n: Section.of(a, n) for n, a in arrays.items()})

    @classmethod
    def restore(cls, tenant: str, sections: Mapping[str, Section]) -> TenantIndex:
        """The index `export` described, reading its sections in place (mapped, not copied).

        Nothing is decoded or checked here beyond the small tables every query
        needs (term pointers, document frequencies, norms): columns, postings,
        ids and terms are checked and read when first used.
        """
        missing = [name for name in SECTIONS if name not in sections]
        if missing:
            raise ValueError(f"the snapshot lacks {', '.join(missing)}")
        index = cls(tenant, Vocabulary({name: sections[name] for name in _vocabulary.SECTIONS}))
        index._hold(table.restore(index.columns, sections))
        index.ids = DocIds(Strings(sections["ids"], sections["id_starts"]), sections["id_order"])
        index.inverted = Postings.restore(sections)
        index.norm_cache.adopt(
            sections["norms"].whole(), index.generation, index.n_docs, index.inverted
        )
        index._links = (index.generation, sections["links_before"], sections["links_after"])
        return index

    # ── memory ──────────────────────────────────────────────────────────────

    def nbytes(self) -> int:
        """About what this index holds in memory (`memcommit.recall.index.sizes`)."""
        with self.lock:
            return _held_bytes(self)

    # ── reads ───────────────────────────────────────────────────────────────

    def snapshot(self) -> Snapshot:
        """The filter columns as they are now; later changes do not show through.

        Unchanged index, same snapshot: what it caches (the birth order) is reused.
        """
        with self.lock:
            found = self._snapshot
            if found is not None and found.generation == self.generation:
                return found
            self._snapshot = Snapshot.taken(
                self.tenant, self.generation, self.ids, self.tables, self.columns
            )
            return self._snapshot

    @property
    def n_docs(self) -> int:
        """The tenant's document count N (current memories)."""
        return len(self)

    def doc_frequency(self, tid: int | None) -> int:
        """How many of the tenant's memories contain the term (0 for unknown ids)."""
        df = self.inverted.df
        if tid is None or tid >= len(df):
            return 0
        return df[tid]

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, counts) of one term, current documents only, ascending."""
        docs, tfs = self.inverted.of(tid)
        if self.dead:
            live = self.alive.data[docs]
            docs, tfs = docs[live], tfs[live]
        return docs, tfs

    def norms(self, docs: np.ndarray) -> np.ndarray:
        """|d| of ``docs`` under the current statistics (computed where not known yet)."""
        with self.lock:
            return self.norm_cache.of(docs, self.generation, self.n_docs, self.inverted)

    def norm_reader(self) -> Callable[[np.ndarray], np.ndarray]:
        """|d| of documents under the statistics as they are now, even once they change.

        While the index is unchanged this is `norms` (sharing its cache); after a
        change, norms are summed from the forward lists and idfs as they were.
        """
        with self.lock:
            self.norms(np.zeros(0, dtype=np.int64))  # the current generation's idfs and cache
            generation = self.generation
            # as they are now, unchecked while still in a snapshot (read only after a change)
            frozen = self.norm_cache.frozen(self.inverted.forward())

        def read(docs: np.ndarray) -> np.ndarray:
            with self.lock:
                if self.generation == generation:
                    return self.norms(docs)
            return frozen(docs)

        return read

    def memo(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, kept until the index changes (the newest `_MEMO` results).

        For what queries derive from the postings and statistics alone: term
        bounds, merged postings of a stem's variants.
        """
        with self.lock:
            if self._memo[0] != self.generation:
                self._memo, self._memo_bytes = (self.generation, {}), 0
            cache = self._memo[1]
            if key in cache:
                found: _T = cache[key]
                return found
            if len(cache) >= _MEMO:
                self._memo_bytes -= _result_bytes(cache.pop(next(iter(cache))))  # the oldest goes
            value = cache[key] = compute()
            self._memo_bytes += _result_bytes(value)
            return value

    def lengths(self) -> tuple[np.ndarray, float]:
        """Terms per document, and their mean over current documents (cached per change)."""
        with self.lock:
            if self._lengths is None or self._lengths[0] != self.generation:
                lengths = self.inverted.lengths().astype(np.float64)
                alive = self.alive.view()
                average = float(lengths[alive].mean()) if alive.any() else 1.0
                self._lengths = (self.generation, lengths, average)
            return self._lengths[1], self._lengths[2]

    def session_links(self) -> tuple[np.ndarray, np.ndarray]:
        """Each document's previous and next current document in its session (-1: none).

        Sessions are ordered by (creation time, commit, id); a document without
        a session has no links. Sorted in numpy once per change of the index
        (only documents of one session, commit and instant are then ordered by
        id in Python), so a query follows links instead of sorting sessions.
        """
        with self.lock:
            if self._links is None or self._links[0] != self.generation:
                docs = np.flatnonzero(self.alive.view() & (self.session.view() >= 0))
                before, after = session_links(
                    docs,
                    self.session.data[docs],
                    self.created.data[docs],
                    self.commit.data[docs],
                    self.ids,
                    self.alive.size,
                )
                self._links = (self.generation, Section.of(before), Section.of(after))
            return self._links[1].whole(), self._links[2].whole()

    def session_sizes(self) -> np.ndarray:
        """The number of current documents of each session code (counted once per change)."""
        with self.lock:
            if self._session_sizes is None or self._session_sizes[0] != self.generation:
                session = self.session.view()[self.alive.view()]
                sizes = np.bincount(session[session >= 0], minlength=len(self.sessions.values))
                self._session_sizes = (self.generation, sizes)
            return self._session_sizes[1]


def _held_bytes(index: TenantIndex) -> int:
    """The columns, code tables, ids, postings, norms, vocabulary and vector rows, and
    what queries derived and keep (memo, lengths, links, the latest snapshot)."""
    parts = [column.nbytes() for column in index.columns.values()]
    parts += [codes.nbytes() for codes in index.tables.values()]
    parts += [index.ids.nbytes(), index.inverted.nbytes(), index.norm_cache.nbytes()]
    parts += [index.vocabulary.nbytes(), index._memo_bytes, _derived_bytes(index)]
    parts += [rows.nbytes() for rows in index.dense.values()]
    return OBJECT * 4 + sum(parts)


def _derived_bytes(index: TenantIndex) -> int:
    """What an index's derived parts hold: lengths, links, session sizes, keys, snapshot."""
    held = 0
    if index._lengths is not None:
        held += array_bytes(index._lengths[1])
    if index._links is not None:
        held += index._links[1].nbytes() + index._links[2].nbytes()
    if index._session_sizes is not None:
        held += array_bytes(index._session_sizes[1])
    if index._keys is not None:
        held += sum(len(members) for members in index._keys.members.values()) * ENTRY
    if index._snapshot is not None:
        held += index._snapshot.nbytes()
    return held


def _result_bytes(value: object) -> int:
    """About what one memo result holds: its arrays (in a tuple, or alone), else one entry."""
    parts = value if isinstance(value, tuple) else (value,)
    return ENTRY + sum(array_bytes(part) for part in parts if isinstance(part, np.ndarray))


class _CurrentDocs(Mapping[str, int]):
    """Memory id -> current document of an index (a view: reads the index as it is now)."""

    def __init__(self, index: TenantIndex) -> None:
        self._index = index

    def __getitem__(self, memory_id: str) -> int:
        found = self._index.ids.find(memory_id)
        if found is None:
            raise KeyError(memory_id)
        return found

    def __iter__(self) -> Iterator[str]:
        ids = self._index.ids
        return (ids[doc] for doc in np.flatnonzero(self._index.alive.view()).tolist())

    def __len__(self) -> int:
        return len(self._index)


assert not table.NAMES & set(vars(TenantIndex)), "a column or code table shadows a method"

"""The incremental per-tenant inverted index that recall ranks and filters from.

Each tenant has its own postings, document frequencies and document count, so
one tenant's vocabulary never changes another tenant's scores. Only the mapping
from a term's text to its integer id is shared (it changes no score).

A memory is one document. A new version of a memory retires its old document
and appends a new one; retired documents stay in the arrays (masked out) until
the next merge rebuilds them compactly. Postings live in a compact main part
(numpy CSR, rebuilt by merges) plus a small append-only delta, so adding a
memory costs a few list appends and a query touches only its terms' postings.

Document norms depend on every idf, and every idf on the document count N, so
any change makes every norm stale. Exact cosine needs the norm only of the
documents a query shares a term with, so norms are computed for those (each
document's terms summed in sorted term order, the same arithmetic for one
document or all) and kept until the statistics change; once queries have
summed half of all postings since the last change, all are computed in one
vectorized pass. A change therefore costs the next query the norms of its
own hits, not a pass over the whole tenant.

An index restored from a snapshot (`TenantIndex.restore`) reads the
snapshot's arrays in place: columns and postings are checked and brought into
memory when first read (`memcommit.recall.index.sections`), ids and terms decoded one
at a time (`memcommit.recall.index.blobs`), so a fresh process answers its first
query without a pass over the tenant.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from memcommit.model import Memory
from memcommit.recall.index import vocabulary as _vocabulary
from memcommit.recall.index.blobs import DocIds, Strings, encode
from memcommit.recall.index.columns import NO_END, NO_START, Codes, Column, to_micros
from memcommit.recall.index.sections import Section
from memcommit.recall.index.text import speaker_of, tokenize
from memcommit.recall.index.vocabulary import Vocabulary
from memcommit.recall.scoring.tfidf import idfs, tf_weights

_TF_MAX = np.iinfo(np.uint16).max
_MEMO = 4096  # results kept by TenantIndex.memo
_T = TypeVar("_T")
_BATCH = 4096  # memories indexed together: columns grow once per batch
_COLUMNS = [
    "alive",
    "kind",
    "scope",
    "session",
    "key",
    "tier",
    "created",
    "commit",
    "valid_from",
    "valid_to",
    "status_ok",
    "always",
    "latest",
    "words",
    "chars",
    "token_count",
    "speaker",  # quality hook: who said each memory (recall/scoring/speakers.py)
]
_MUTABLE = ("alive", "latest")  # written in place by later changes: copied by snapshots


@dataclass(frozen=True)
class Exported:
    """A tenant index in compact form: current documents only, used terms and codes only.

    What `TenantIndex.export` writes and `TenantIndex.restore` reads back (the
    persisted snapshot): named numpy arrays, strings included (as UTF-8 blobs
    with offsets, see `memcommit.recall.index.blobs`). Nothing of a retired (updated
    or purged) document survives an export.
    """

    arrays: dict[str, np.ndarray]


#: Coded columns and their code tables (each stored as a blob of its values and offsets).
_CODED = {
    "kind": "kinds",
    "scope": "scopes",
    "session": "sessions",
    "key": "keys",
    "tier": "tiers",
    "speaker": "speakers",
}

#: Every array a snapshot holds: restoring one that lacks any is refused.
SECTIONS = (
    *_COLUMNS,
    *("fwd_start", "fwd_terms", "fwd_tf", "main_ptr", "main_docs", "main_tf", "df", "norms"),
    *("ids", "id_starts", "id_order", "links_before", "links_after"),
    *_vocabulary.SECTIONS,
    *(name for table in _CODED.values() for name in (table, table + "_starts")),
)


def _recode(column: np.ndarray, values: list[Hashable]) -> tuple[np.ndarray, list[str]]:
    """``column``'s codes renumbered densely over the codes it uses (-1 stays -1).

    Every coded column of a memory (kind, scope, session, key, tier, stem) holds text.
    """
    used = np.unique(column[column >= 0])
    table = np.full(len(values) + 1, -1, dtype=np.int64)  # the last slot maps -1 to -1
    table[used] = np.arange(len(used))
    return table[column].astype(column.dtype), [str(values[code]) for code in used.tolist()]


class TenantIndex:
    """Postings, statistics and filter columns for one tenant's memories."""

    def __init__(self, tenant: str, vocabulary: Vocabulary | None = None) -> None:
        self.tenant = tenant
        self.vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        self.lock = threading.RLock()
        self.kinds, self.scopes, self.sessions = Codes(), Codes(), Codes()
        self.keys, self.tiers = Codes(), Codes()
        self.speakers = Codes()  # quality hook: speaker names (recall/scoring/speakers.py)
        self._reset_docs()
        self.df = array("i")
        self.generation = 0  # bumps on every change of content or statistics
        self._bulk = False  # inside `bulk`: postings and frequencies wait for its end

    def _reset_docs(self) -> None:
        self.ids = DocIds()
        self.alive = Column(np.bool_)
        self.kind = Column(np.int16)
        self.scope = Column(np.int32)
        self.session = Column(np.int32)
        self.key = Column(np.int32)
        self.tier = Column(np.int16)
        self.created = Column(np.int64)
        self.commit = Column(np.int64)
        self.valid_from = Column(np.int64)
        self.valid_to = Column(np.int64)
        self.status_ok = Column(np.bool_)
        self.always = Column(np.bool_)
        self.latest = Column(np.bool_)
        self.words = Column(np.int32)
        self.chars = Column(np.int32)
        self.token_count = Column(np.int32)
        self.speaker = Column(np.int32)
        self.fwd_start = Column(np.int64)
        self.fwd_terms = Column(np.int32, 1024)
        self.fwd_tf = Column(np.uint16, 1024)
        self._keys: tuple[dict[int, set[int]], dict[int, int]] | None = ({}, {})
        self.main_ptr = np.zeros(1, dtype=np.int64)
        self.main_docs = Section.of(np.zeros(0, dtype=np.int32))
        self.main_tf = Section.of(np.zeros(0, dtype=np.uint16))
        self.delta: dict[int, tuple[array[int], array[int]]] = {}
        self.delta_size = 0
        self.dead = 0
        self._norms = np.zeros(0)  # NaN where not computed under the current statistics
        self._norms_generation = -1
        self._norms_work = 0  # postings summed for norms since the statistics changed
        self._norms_complete = False
        self._idf = np.zeros(0)
        self._lengths: tuple[int, np.ndarray, float] | None = None
        self._memo: tuple[int, dict[Hashable, Any]] = (-1, {})
        self._links: tuple[int, Section, Section] | None = None
        self._snapshot: Snapshot | None = None

    # ── writes ──────────────────────────────────────────────────────────────

    @property
    def doc_of(self) -> Mapping[str, int]:
        """Memory id -> its current document."""
        return _CurrentDocs(self)

    def __len__(self) -> int:
        return self.alive.size - self.dead

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
            while chunk := list(itertools.islice(items, _BATCH)):
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
                self._count_frequencies()
                self.merge()

    def _count_frequencies(self) -> None:
        """Each term's document frequency, counted over the current documents."""
        starts, lengths = self._spans(np.flatnonzero(self.alive.view()))
        firsts = np.cumsum(lengths) - lengths
        entries = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(
            starts - firsts, lengths
        )
        counts = np.bincount(self.fwd_terms.data[entries], minlength=len(self.df))
        self.df = array("i", counts.astype(np.int32).tobytes())

    def _put_batch(self, batch: list[Memory]) -> None:
        self._key_maps()  # (from the columns as they are before this batch changes them)
        for memory in batch:
            old = self.ids.find(memory.id)
            if old is not None:
                self._retire(old)
        first = len(self.ids)
        docs = range(first, first + len(batch))
        self.ids.extend(memory.id for memory in batch)
        self._append_columns(batch)
        self._append_terms(batch, first)
        keys = self.key.data
        for doc in docs:
            if keys[doc] >= 0:
                self._join_key(int(keys[doc]), doc)
        self.generation += 1

    def remove(self, memory_id: str) -> None:
        """Forget a memory (a purge): it is no longer a document of the tenant."""
        with self.lock:
            doc = self.ids.find(memory_id)
            if doc is not None:
                self._key_maps()  # (from the columns as they are before this change)
                self.ids.forget(memory_id)
                self._retire(doc)
                self.generation += 1

    def _append_columns(self, batch: list[Memory]) -> None:
        """One row per memory, in `_COLUMNS` order, appended column by column."""
        rows = [self._row(memory) for memory in batch]
        for name, values in zip(_COLUMNS, zip(*rows, strict=True), strict=True):
            getattr(self, name).extend(values)

    def _row(self, memory: Memory) -> tuple[object, ...]:
        """``memory``'s value in each of `_COLUMNS` (a new document: alive and latest)."""
        text = memory.content or ""
        return (
            True,
            self.kinds.code(memory.kind),
            self.scopes.code(memory.scope),
            self.sessions.code(memory.session),
            self.keys.code(memory.key),
            self.tiers.code(memory.tier),
            to_micros(memory.created_at, NO_START),
            memory.created_commit or 0,
            to_micros(memory.valid_from, NO_START),
            to_micros(memory.valid_to, NO_END),
            memory.status == "active" and memory.superseded_by is None,
            bool(memory.always),
            True,
            len(text.split()),
            len(text),
            memory.token_count or 0,
            self.speakers.code(speaker_of(memory)),
        )

    def _append_terms(self, batch: list[Memory], first: int) -> None:
        vocabulary, df, delta = self.vocabulary, self.df, self.delta
        starts: list[int] = []
        all_tids: list[int] = []
        all_tfs: list[int] = []
        offset = len(self.fwd_terms)
        bulk = self._bulk
        for doc, memory in enumerate(batch, first):
            counts = Counter(tokenize(memory.content or ""))
            terms = sorted(counts)  # norms sum in this order: independent of insertion order
            tids = vocabulary.ids(terms)
            tfs = [counts[term] for term in terms]
            if tfs and max(tfs) > _TF_MAX:
                tfs = [min(tf, _TF_MAX) for tf in tfs]
            starts.append(offset + len(all_tids))
            all_tids += tids
            all_tfs += tfs
            if bulk:  # counted and indexed when the bulk block ends
                continue
            if tids and max(tids) >= len(df):
                df.extend([0] * (max(tids) + 1 - len(df)))
            for tid, tf in zip(tids, tfs, strict=True):
                df[tid] += 1
                slot = delta.get(tid)
                if slot is None:
                    slot = delta[tid] = (array("i"), array("H"))
                slot[0].append(doc)
                slot[1].append(tf)
        if not bulk:
            self.delta_size += len(all_tids)
        self.fwd_start.extend(starts)
        self.fwd_terms.extend(all_tids)
        self.fwd_tf.extend(all_tfs)

    def _retire(self, doc: int) -> None:
        self.alive.data[doc] = False
        self.dead += 1
        if not self._bulk:  # (a bulk block counts them when it ends)
            df, start, end = self.df, int(self.fwd_start.data[doc]), self._fwd_end(doc)
            for tid in self.fwd_terms.data[start:end].tolist():
                df[tid] -= 1
        key = int(self.key.data[doc])
        if key >= 0:
            key_members, key_latest = self._key_maps()
            members = key_members[key]
            members.discard(doc)
            if key_latest.get(key) == doc:
                del key_latest[key]
                if members:
                    best = max(members, key=self._newness)
                    key_latest[key] = best
                    self.latest.data[best] = True

    def _fwd_end(self, doc: int) -> int:
        return (
            int(self.fwd_start.data[doc + 1])
            if doc + 1 < self.fwd_start.size
            else self.fwd_terms.size
        )

    def _newness(self, doc: int) -> tuple[int, int, str]:
        """Sort key for "newer" among records with the same key: time, commit, id."""
        return (int(self.created.data[doc]), int(self.commit.data[doc]), self.ids[doc])

    def _key_maps(self) -> tuple[dict[int, set[int]], dict[int, int]]:
        """Key code -> its current documents, and -> the latest of them (built on first write).

        A restored or merged index builds them from its key and latest columns
        when a write first needs them, before the write changes any column: a
        read never pays for them.
        """
        if self._keys is None:
            members: dict[int, set[int]] = {}
            latest: dict[int, int] = {}
            keys, newest = self.key.view(), self.latest.view()
            for doc in np.flatnonzero((keys >= 0) & self.alive.view()).tolist():
                members.setdefault(int(keys[doc]), set()).add(doc)
                if newest[doc]:
                    latest[int(keys[doc])] = doc
            self._keys = (members, latest)
        return self._keys

    def _join_key(self, key: int, doc: int) -> None:
        key_members, key_latest = self._key_maps()
        key_members.setdefault(key, set()).add(doc)
        current = key_latest.get(key)
        if current is None or self._newness(doc) > self._newness(current):
            if current is not None:
                self.latest.data[current] = False
            key_latest[key] = doc
        else:
            self.latest.data[doc] = False

    # ── merges ──────────────────────────────────────────────────────────────

    def _maybe_merge(self) -> None:
        if self.delta_size > max(50_000, len(self.main_docs) // 4) or self.dead > max(
            1_000, len(self) // 4
        ):
            self.merge()

    def merge(self) -> None:
        """Rebuild compactly: drop retired documents, fold the delta into the main postings."""
        with self.lock:
            alive = self.alive.view().copy()
            keep = np.flatnonzero(alive)
            starts = self.fwd_start.view()
            ends = np.append(starts[1:], self.fwd_terms.size)
            lengths = (ends - starts)[keep]
            entry_keep = np.repeat(alive, ends - starts)
            terms = self.fwd_terms.view()[entry_keep]
            tfs = self.fwd_tf.view()[entry_keep]
            kept = {name: getattr(self, name).view()[keep] for name in _COLUMNS}
            ids = DocIds.packed(*self.ids.take(keep))
            self._reset_docs()
            for name, values in kept.items():
                getattr(self, name).replace(values)
            self.ids = ids
            self._keys = None  # built from the columns when a write needs them
            self.fwd_start.replace(np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64))
            if len(keep) == 0:
                self.fwd_start.replace(np.zeros(0, dtype=np.int64))
            self.fwd_terms.replace(terms)
            self.fwd_tf.replace(tfs)
            docs = np.repeat(np.arange(len(ids), dtype=np.int32), lengths)
            order = np.argsort(terms, kind="stable")
            self.main_docs = Section.of(docs[order])
            self.main_tf = Section.of(tfs[order])
            counts = (
                np.bincount(terms, minlength=len(self.df))
                if len(terms)
                else np.zeros(len(self.df), dtype=np.int64)
            )
            self.main_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
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
            starts, lengths = self._spans(keep)
            firsts = np.cumsum(lengths) - lengths
            total = int(lengths.sum())
            entries = np.arange(total, dtype=np.int64) + np.repeat(starts - firsts, lengths)
            df = np.frombuffer(self.df, dtype=np.int32) if len(self.df) else np.zeros(0, np.int32)
            used = np.flatnonzero(df > 0)
            arrays, renumber = self.vocabulary.export(used)
            terms = renumber[self.fwd_terms.data[entries]]
            tfs = self.fwd_tf.data[entries]
            arrays.update({name: getattr(self, name).view()[keep] for name in _COLUMNS})
            for name, table in _CODED.items():
                arrays[name], values = _recode(arrays[name], getattr(self, table).values)
                arrays[table], arrays[table + "_starts"] = encode(values)
            arrays["ids"], arrays["id_starts"], arrays["id_order"] = self.ids.take(keep)
            numbers = np.full(self.alive.size + 1, -1, dtype=np.int32)  # the last maps -1 to -1
            numbers[keep] = np.arange(len(keep), dtype=np.int32)
            docs = np.repeat(np.arange(len(keep), dtype=np.int32), lengths)
            order = np.argsort(terms, kind="stable")
            counts = np.bincount(terms, minlength=len(used))
            new_df = np.zeros(len(used), dtype=np.int32)
            new_df[renumber[used]] = df[used]
            arrays.update(
                fwd_start=firsts.astype(np.int64),
                fwd_terms=terms,
                fwd_tf=tfs,
                main_ptr=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
                main_docs=docs[order],
                main_tf=tfs[order],
                df=new_df,
                norms=np.asarray(norms, dtype=np.float64),
                links_before=numbers[before[keep]],
                links_after=numbers[after[keep]],
            )
            return Exported(arrays)

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
        for table in _CODED.values():
            values = Strings(sections[table], sections[table + "_starts"])
            setattr(index, table, Codes.later(values.decoded))
        for name in [*_COLUMNS, "fwd_start", "fwd_terms", "fwd_tf"]:
            getattr(index, name).adopt(sections[name])
        index.ids = DocIds(Strings(sections["ids"], sections["id_starts"]), sections["id_order"])
        index._keys = None  # built from the columns when a write needs them
        index.main_ptr = sections["main_ptr"].whole()
        index.main_docs, index.main_tf = sections["main_docs"], sections["main_tf"]
        index.df = array("i", sections["df"].whole().tobytes())
        index._norms = sections["norms"].whole()
        index._norms_generation = index.generation
        index._norms_complete = True
        index._idf = index.idf_table()
        index._links = (index.generation, sections["links_before"], sections["links_after"])
        return index

    # ── reads ───────────────────────────────────────────────────────────────

    def snapshot(self) -> Snapshot:
        """The filter columns as they are now; later changes do not show through.

        Unchanged index, same snapshot: what it caches (the birth order) is reused.
        """
        with self.lock:
            found = self._snapshot
            if found is not None and found.generation == self.generation:
                return found
            columns = {
                name: getattr(self, name).view().copy()
                if name in _MUTABLE
                else getattr(self, name).view_or_section()
                for name in _COLUMNS
            }
            self._snapshot = Snapshot(
                tenant=self.tenant,
                generation=self.generation,
                ids=self.ids,
                size=self.alive.size,
                kinds=self.kinds,
                scopes=self.scopes,
                sessions=self.sessions,
                tiers=self.tiers,
                columns=columns,
            )
            return self._snapshot

    @property
    def n_docs(self) -> int:
        """The tenant's document count N (current memories)."""
        return len(self)

    def doc_frequency(self, tid: int | None) -> int:
        """How many of the tenant's memories contain the term (0 for unknown ids)."""
        if tid is None or tid >= len(self.df):
            return 0
        return self.df[tid]

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, counts) of one term, current documents only, ascending."""
        parts_docs, parts_tf = [], []
        if tid + 1 < len(self.main_ptr):
            start, end = self.main_ptr[tid : tid + 2].tolist()
            if end > start:
                parts_docs.append(self.main_docs.rows(start, end))
                parts_tf.append(self.main_tf.rows(start, end))
        slot = self.delta.get(tid)
        if slot is not None:
            parts_docs.append(np.array(slot[0], dtype=np.int32))
            parts_tf.append(np.array(slot[1], dtype=np.uint16))
        if not parts_docs:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint16)
        docs = np.concatenate(parts_docs) if len(parts_docs) > 1 else parts_docs[0]
        tfs = np.concatenate(parts_tf) if len(parts_tf) > 1 else parts_tf[0]
        if self.dead:
            live = self.alive.data[docs]
            docs, tfs = docs[live], tfs[live]
        return docs, tfs

    def idf_table(self) -> np.ndarray:
        """The smoothed idf of every term id under this tenant's current statistics."""
        return idfs(self.n_docs, np.frombuffer(self.df, dtype=np.int32).copy())

    def norms(self, docs: np.ndarray) -> np.ndarray:
        """|d| of ``docs`` under the current statistics (computed where not known yet)."""
        with self.lock:
            if self._norms_generation != self.generation:
                self._norms = np.full(self.alive.size, np.nan)
                self._norms_generation = self.generation
                self._norms_work = 0
                self._norms_complete = False
                self._idf = self.idf_table()
            norms = self._norms
            if self._norms_complete:
                known: np.ndarray = norms[docs]
                return known
            missing = docs[np.isnan(norms[docs])]
            if len(missing):
                work = int(self._spans(missing)[1].sum())
                self._norms_work += work
                if 2 * self._norms_work > self.fwd_terms.size:  # one pass is cheaper now
                    norms[:] = self._norm_sums(np.arange(self.alive.size))
                    self._norms_complete = True
                else:
                    norms[missing] = self._norm_sums(missing)
            found: np.ndarray = norms[docs]
            return found

    def _spans(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each document's terms start in the forward arrays, and how many it has."""
        return _spans(self.fwd_start.view(), self.fwd_terms.size, docs)

    def _norm_sums(self, docs: np.ndarray) -> np.ndarray:
        return _norm_sums(
            self.fwd_start.view(), self.fwd_terms.view(), self.fwd_tf.view(), self._idf, docs
        )

    def norm_reader(self) -> Callable[[np.ndarray], np.ndarray]:
        """|d| of documents under the statistics as they are now, even once they change.

        While the index is unchanged this is `norms` (sharing its cache); after a
        change, norms are summed from the forward arrays and idfs as they were.
        """
        with self.lock:
            self.norms(np.zeros(0, dtype=np.int64))  # the current generation's idfs and cache
            generation, idf, known = self.generation, self._idf, self._norms
            # as they are now, unchecked while still in a snapshot (read only after a change)
            fwd = [self.fwd_start.view_or_section(), self.fwd_terms.view_or_section()]
            fwd.append(self.fwd_tf.view_or_section())

        def read(docs: np.ndarray) -> np.ndarray:
            with self.lock:
                if self.generation == generation:
                    return self.norms(docs)
            found: np.ndarray = known[docs].copy()
            missing = np.isnan(found)
            starts, terms, tfs = (a.whole() if isinstance(a, Section) else a for a in fwd)
            found[missing] = _norm_sums(starts, terms, tfs, idf, docs[missing])
            return found

        return read

    def memo(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, kept until the index changes (the newest `_MEMO` results).

        For what queries derive from the postings and statistics alone: term
        bounds, merged postings of a stem's variants.
        """
        with self.lock:
            if self._memo[0] != self.generation:
                self._memo = (self.generation, {})
            cache = self._memo[1]
            if key in cache:
                found: _T = cache[key]
                return found
            if len(cache) >= _MEMO:
                del cache[next(iter(cache))]  # the oldest goes
            value = cache[key] = compute()
            return value

    def term_bound(self, tid: int) -> float:
        """The highest ``tf weight / |d|`` among the term's current documents (0.0: none).

        A query term's weight times this bounds what the term adds to any
        cosine (`memcommit.recall.scoring.maxscore`).
        """

        def compute() -> float:
            docs, tfs = self.postings(tid)
            return float((tf_weights(tfs) / self.norms(docs)).max()) if len(docs) else 0.0

        return self.memo(("cosine bound", tid), compute)

    def lengths(self) -> tuple[np.ndarray, float]:
        """Terms per document, and their mean over current documents (cached per change)."""
        with self.lock:
            if self._lengths is None or self._lengths[0] != self.generation:
                starts = self.fwd_start.view()
                lengths = np.diff(np.append(starts, self.fwd_terms.size)).astype(np.float64)
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
                size = self.alive.size
                docs = np.flatnonzero(self.alive.view() & (self.session.view() >= 0))
                session = self.session.data[docs]
                created, commit = self.created.data[docs], self.commit.data[docs]
                order = np.lexsort((commit, created, session))
                docs, session = docs[order], session[order]
                same = (np.diff(session) == 0) & (np.diff(created[order]) == 0)
                same &= np.diff(commit[order]) == 0
                if same.any():
                    _order_ties_by_id(self.ids, docs, same)
                following = np.diff(session) == 0
                before = np.full(size, -1, dtype=np.int64)
                after = np.full(size, -1, dtype=np.int64)
                after[docs[:-1][following]] = docs[1:][following]
                before[docs[1:][following]] = docs[:-1][following]
                self._links = (self.generation, Section.of(before), Section.of(after))
            return self._links[1].whole(), self._links[2].whole()

    def memory_bytes(self) -> int:
        """Approximate bytes held by the arrays (not counting Python object overhead)."""
        total = sum(
            getattr(self, name).data.nbytes
            for name in [*_COLUMNS, "fwd_start", "fwd_terms", "fwd_tf"]
        )
        total += self.main_ptr.nbytes + self.main_docs.array.nbytes + self.main_tf.array.nbytes
        total += sum(
            d.buffer_info()[1] * 4 + t.buffer_info()[1] * 2 for d, t in self.delta.values()
        )
        return int(total + self.df.buffer_info()[1] * 4)


def _spans(starts: np.ndarray, total: int, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``docs``' terms start in forward arrays of ``total`` entries, and how many."""
    following = docs + 1
    ends = np.full(len(docs), total, dtype=np.int64)
    inside = following < len(starts)
    ends[inside] = starts[following[inside]]
    first = starts[docs]
    return first, ends - first


def _norm_sums(
    starts: np.ndarray, terms: np.ndarray, tfs: np.ndarray, idf: np.ndarray, docs: np.ndarray
) -> np.ndarray:
    """sqrt(sum of squared tf-idf weights) of ``docs``, each summed over its sorted terms.

    The terms of ``docs`` are gathered into one contiguous array and summed
    per document, so a norm has the same bits whichever documents it is
    computed with.
    """
    first, lengths = _spans(starts, len(terms), docs)
    firsts = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    out = np.zeros(len(docs), dtype=np.float64)
    if not total:
        return out
    entries = np.arange(total, dtype=np.int64) + np.repeat(first - firsts, lengths)
    weights = tf_weights(tfs[entries])
    weights *= idf[terms[entries]]
    weights *= weights
    nonempty = lengths > 0
    out[nonempty] = np.add.reduceat(weights, firsts[nonempty])
    return np.sqrt(out)


class Snapshot:
    """One tenant index's documents and filter columns at one moment (read-only).

    Columns are numpy arrays indexed by document. Appends and merges never touch
    the arrays a snapshot holds; the two written in place are copied. Code
    tables only grow, so codes seen here keep their meaning. A column still in
    its snapshot file's section is checked when first read (a recall reads a
    few of them).
    """

    tenant: str
    generation: int
    ids: DocIds
    size: int
    kinds: Codes
    scopes: Codes
    sessions: Codes
    tiers: Codes
    alive: np.ndarray
    kind: np.ndarray
    scope: np.ndarray
    session: np.ndarray
    key: np.ndarray
    tier: np.ndarray
    created: np.ndarray
    commit: np.ndarray
    valid_from: np.ndarray
    valid_to: np.ndarray
    status_ok: np.ndarray
    always: np.ndarray
    latest: np.ndarray
    words: np.ndarray
    chars: np.ndarray
    token_count: np.ndarray
    speaker: np.ndarray

    def __init__(
        self,
        *,
        tenant: str,
        generation: int,
        ids: DocIds,
        size: int,
        kinds: Codes,
        scopes: Codes,
        sessions: Codes,
        tiers: Codes,
        columns: dict[str, np.ndarray | Section],
    ) -> None:
        self.tenant, self.generation, self.ids, self.size = tenant, generation, ids, size
        self.kinds, self.scopes, self.sessions, self.tiers = kinds, scopes, sessions, tiers
        self._sections: dict[str, Section] = {}
        for name, values in columns.items():
            if isinstance(values, Section):
                self._sections[name] = values
            else:
                setattr(self, name, values)

    def __getattr__(self, name: str) -> np.ndarray:
        """A column still in its section: checked now, then kept as an attribute."""
        section = self.__dict__.get("_sections", {}).get(name)
        if section is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        values: np.ndarray = section.whole()[: self.size]
        setattr(self, name, values)
        return values

    def holds(self, now_us: int, docs: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Where ``docs`` still hold at ``now_us``: active, begun and not yet ended."""
        begun = self.valid_from[docs] <= now_us
        return self.status_ok[docs] & begun & (now_us < self.valid_to[docs])

    def key_winners(self, now_us: int) -> np.ndarray:
        """Per document: False when a newer version of its key still holds at ``now_us``.

        The newest version of a key that still holds wins; versions older than it
        are superseded, and versions newer than it (ended or invalidated) are left
        to the validity filter. A key none of whose versions holds keeps its
        newest (the index's ``latest``). Kept for the last ``now_us`` asked: one
        recall asks many times at one moment.
        """
        memo: tuple[int, np.ndarray] | None = self.__dict__.get("_winners")
        if memo is not None and memo[0] == now_us:
            return memo[1]
        out: np.ndarray = self.latest
        stale = np.flatnonzero(self.latest & self.alive & (self.key >= 0) & ~self.holds(now_us))
        if len(stale):
            out = out.copy()
            members = np.flatnonzero(np.isin(self.key, self.key[stale]) & self.alive)
            created, commit, ids = self.created, self.commit, self.ids
            groups: dict[int, list[int]] = {}
            for doc in members.tolist():
                groups.setdefault(int(self.key[doc]), []).append(doc)
            for docs in groups.values():
                docs.sort(key=lambda d: (int(created[d]), int(commit[d]), ids[d]), reverse=True)
                holding = self.holds(now_us, np.array(docs))
                if not holding.any():
                    continue
                first = int(np.argmax(holding))  # the newest that holds
                out[docs[: first + 1]] = True
                out[docs[first + 1 :]] = False
        self.__dict__["_winners"] = (now_us, out)
        return out

    @functools.cached_property
    def always_docs(self) -> np.ndarray:
        """The current documents with always scope, ascending."""
        return np.flatnonzero(self.alive & self.always)

    @functools.cached_property
    def birth_rank(self) -> np.ndarray:
        """Each document's position in (creation time, id) order, the tie-break of every ranking.

        Sorted by time in numpy; only documents created at the same instant (one
        commit's) are then ordered by id in Python.
        """
        order = np.argsort(self.created, kind="stable")
        times = self.created[order]
        bounds = np.flatnonzero(np.diff(times)) + 1
        firsts = np.concatenate(([0], bounds))
        lasts = np.concatenate((bounds, [self.size]))
        ties = lasts - firsts > 1
        key = self.ids.sort_key()
        for first, last in zip(firsts[ties].tolist(), lasts[ties].tolist(), strict=True):
            order[first:last] = sorted(order[first:last].tolist(), key=key)
        rank = np.empty(self.size, dtype=np.int64)
        rank[order] = np.arange(self.size)
        return rank


def _order_ties_by_id(ids: DocIds, docs: np.ndarray, same: np.ndarray) -> None:
    """Sort, in place and by id, each run of ``docs`` that ``same`` marks as tied."""
    edges = np.diff(np.concatenate(([0], same.astype(np.int8), [0])))
    key = ids.sort_key()
    for first, last in zip(
        np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True
    ):
        docs[first : last + 1] = sorted(docs[first : last + 1].tolist(), key=key)


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

"""The incremental per-tenant inverted index that recall ranks and filters from.

Each tenant has its own postings, document frequencies and document count, so
one tenant's vocabulary never changes another tenant's scores. Only the mapping
from a term's text to its integer id is shared (it changes no score).

A memory is one document. A new version of a memory retires its old document
and appends a new one; retired documents stay in the arrays (masked out) until
the next merge rebuilds them compactly. Postings live in a compact main part
(numpy CSR, rebuilt by merges) plus a small append-only delta, so adding a
memory costs a few list appends and a query touches only its terms' postings.

Document norms depend on every idf, so they are recomputed (vectorized, each
document's terms summed in sorted term order) the first time a query needs them
after the statistics changed.
"""

from __future__ import annotations

import threading
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from memcommit.model import Memory
from memcommit.recall.columns import NO_END, NO_START, Codes, Column, to_micros
from memcommit.recall.stem import stem
from memcommit.recall.text import tokenize
from memcommit.recall.tfidf import idfs, tf_weights

_TF_MAX = np.iinfo(np.uint16).max
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
]
_MUTABLE = ("alive", "latest")  # written in place by later changes: copied by snapshots


class Vocabulary:
    """Term text <-> dense id, plus each term's stem; shared by every tenant."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.terms: list[str] = []
        self.stems: Codes = Codes()
        self.stem_of: list[int] = []  # term id -> stem code
        self.by_stem: dict[int, list[int]] = {}  # stem code -> term ids
        self._lock = threading.Lock()

    def id(self, term: str) -> int:
        """The id of ``term``, assigned on first sight."""
        found = self.ids.get(term)
        if found is not None:
            return found
        with self._lock:
            found = self.ids.get(term)
            if found is None:
                found = len(self.terms)
                stem_code = self.stems.code(stem(term))
                self.terms.append(term)
                self.stem_of.append(stem_code)
                self.by_stem.setdefault(stem_code, []).append(found)
                self.ids[term] = found
        return found

    def get(self, term: str) -> int | None:
        """The id of ``term`` if any document ever had it."""
        return self.ids.get(term)

    def variants(self, term: str) -> list[int]:
        """Ids of every known term with the same stem as ``term`` (itself included)."""
        code = self.stems.get(stem(term))
        return [] if code is None else list(self.by_stem.get(code, ()))


class TenantIndex:
    """Postings, statistics and filter columns for one tenant's memories."""

    def __init__(self, tenant: str, vocabulary: Vocabulary | None = None) -> None:
        self.tenant = tenant
        self.vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        self.lock = threading.RLock()
        self.kinds, self.scopes, self.sessions = Codes(), Codes(), Codes()
        self.keys, self.tiers = Codes(), Codes()
        self._reset_docs()
        self.df = array("i")
        self.generation = 0  # bumps on every change of content or statistics

    def _reset_docs(self) -> None:
        self.ids: list[str] = []
        self.doc_of: dict[str, int] = {}
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
        self.fwd_start = Column(np.int64)
        self.fwd_terms = Column(np.int32, 1024)
        self.fwd_tf = Column(np.uint16, 1024)
        self.key_members: dict[int, set[int]] = {}
        self.key_latest: dict[int, int] = {}
        self.main_ptr = np.zeros(1, dtype=np.int64)
        self.main_docs = np.zeros(0, dtype=np.int32)
        self.main_tf = np.zeros(0, dtype=np.uint16)
        self.delta: dict[int, tuple[array, array]] = {}
        self.delta_size = 0
        self.dead = 0
        self._norms: np.ndarray | None = None
        self._norms_generation = -1
        self._lengths: tuple[int, np.ndarray, float] | None = None

    # ── writes ──────────────────────────────────────────────────────────────

    def __len__(self) -> int:
        return len(self.doc_of)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self.doc_of

    def put(self, memory: Memory) -> None:
        """Index ``memory``; a memory already indexed under its id is replaced."""
        with self.lock:
            self._put(memory)
            self._maybe_merge()

    def put_many(self, memories: Iterable[Memory]) -> None:
        """Index many memories (a bulk load, or every version of one commit)."""
        with self.lock:
            for memory in memories:
                self._put(memory)
            self._maybe_merge()

    def remove(self, memory_id: str) -> None:
        """Forget a memory (a purge): it is no longer a document of the tenant."""
        with self.lock:
            doc = self.doc_of.pop(memory_id, None)
            if doc is not None:
                self._retire(doc)
                self.generation += 1

    def _put(self, memory: Memory) -> None:
        old = self.doc_of.get(memory.id)
        if old is not None:
            self._retire(old)
        doc = len(self.ids)
        self.ids.append(memory.id)
        self.doc_of[memory.id] = doc
        self.alive.append(True)
        self.kind.append(self.kinds.code(memory.kind))
        self.scope.append(self.scopes.code(memory.scope))
        self.session.append(self.sessions.code(memory.session))
        key = self.keys.code(memory.key)
        self.key.append(key)
        self.tier.append(self.tiers.code(memory.tier))
        self.created.append(to_micros(memory.created_at, NO_START))
        self.commit.append(memory.created_commit or 0)
        self.valid_from.append(to_micros(memory.valid_from, NO_START))
        self.valid_to.append(to_micros(memory.valid_to, NO_END))
        self.status_ok.append(memory.status == "active" and memory.superseded_by is None)
        self.always.append(bool(memory.always))
        self.latest.append(True)
        content = memory.content or ""
        self.words.append(len(content.split()))
        self.chars.append(len(content))
        self.token_count.append(memory.token_count or 0)
        counts = Counter(tokenize(content))
        terms = sorted(counts)  # norms sum in this order: independent of insertion order
        vocabulary, df, delta = self.vocabulary, self.df, self.delta
        tids = [vocabulary.id(term) for term in terms]
        tfs = [min(counts[term], _TF_MAX) for term in terms]
        if tids and max(tids) >= len(df):
            df.extend([0] * (max(tids) + 1 - len(df)))
        for tid, tf in zip(tids, tfs, strict=True):
            df[tid] += 1
            slot = delta.get(tid)
            if slot is None:
                slot = delta[tid] = (array("i"), array("H"))
            slot[0].append(doc)
            slot[1].append(tf)
        self.delta_size += len(tids)
        self.fwd_start.append(len(self.fwd_terms))
        self.fwd_terms.extend(tids)
        self.fwd_tf.extend(tfs)
        if key >= 0:
            self._join_key(key, doc)
        self.generation += 1

    def _retire(self, doc: int) -> None:
        self.alive.data[doc] = False
        self.dead += 1
        df = self.df
        start = int(self.fwd_start.data[doc])
        end = self._fwd_end(doc)
        for tid in self.fwd_terms.data[start:end].tolist():
            df[tid] -= 1
        key = int(self.key.data[doc])
        if key >= 0:
            members = self.key_members[key]
            members.discard(doc)
            if self.key_latest.get(key) == doc:
                del self.key_latest[key]
                if members:
                    best = max(members, key=self._newness)
                    self.key_latest[key] = best
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

    def _join_key(self, key: int, doc: int) -> None:
        self.key_members.setdefault(key, set()).add(doc)
        current = self.key_latest.get(key)
        if current is None or self._newness(doc) > self._newness(current):
            if current is not None:
                self.latest.data[current] = False
            self.key_latest[key] = doc
        else:
            self.latest.data[doc] = False

    # ── merges ──────────────────────────────────────────────────────────────

    def _maybe_merge(self) -> None:
        if self.delta_size > max(50_000, len(self.main_docs) // 4) or self.dead > max(
            1_000, len(self.doc_of) // 4
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
            columns = [
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
            ]
            kept = {name: getattr(self, name).view()[keep] for name in columns}
            ids = [self.ids[doc] for doc in keep.tolist()]
            self._reset_docs()
            for name, values in kept.items():
                getattr(self, name).replace(values)
            self.ids = ids
            self.doc_of = dict(zip(ids, range(len(ids)), strict=True))
            self.fwd_start.replace(np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64))
            if len(keep) == 0:
                self.fwd_start.replace(np.zeros(0, dtype=np.int64))
            self.fwd_terms.replace(terms)
            self.fwd_tf.replace(tfs)
            docs = np.repeat(np.arange(len(ids), dtype=np.int32), lengths)
            order = np.argsort(terms, kind="stable")
            self.main_docs = docs[order]
            self.main_tf = tfs[order]
            counts = (
                np.bincount(terms, minlength=len(self.df))
                if len(terms)
                else np.zeros(len(self.df), dtype=np.int64)
            )
            self.main_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
            for doc, key in enumerate(self.key.view().tolist()):
                if key >= 0:
                    self.key_members.setdefault(key, set()).add(doc)
                    if self.latest.data[doc]:
                        self.key_latest[key] = doc
            self.generation += 1

    # ── reads ───────────────────────────────────────────────────────────────

    def snapshot(self) -> Snapshot:
        """The filter columns as they are now; later changes do not show through."""
        with self.lock:
            columns = {
                name: getattr(self, name).view().copy()
                if name in _MUTABLE
                else getattr(self, name).view()
                for name in _COLUMNS
            }
            return Snapshot(
                tenant=self.tenant,
                ids=self.ids,
                size=self.alive.size,
                kinds=self.kinds,
                scopes=self.scopes,
                sessions=self.sessions,
                tiers=self.tiers,
                **columns,
            )

    @property
    def n_docs(self) -> int:
        """The tenant's document count N (current memories)."""
        return len(self.doc_of)

    def doc_frequency(self, tid: int | None) -> int:
        """How many of the tenant's memories contain the term (0 for unknown ids)."""
        if tid is None or tid >= len(self.df):
            return 0
        return self.df[tid]

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, counts) of one term, current documents only, ascending."""
        parts_docs, parts_tf = [], []
        if tid + 1 < len(self.main_ptr):
            start, end = self.main_ptr[tid], self.main_ptr[tid + 1]
            if end > start:
                parts_docs.append(self.main_docs[start:end])
                parts_tf.append(self.main_tf[start:end])
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

    def norms(self) -> np.ndarray:
        """|d| of every document under the current statistics (recomputed when stale)."""
        with self.lock:
            if self._norms is not None and self._norms_generation == self.generation:
                return self._norms
            n = self.alive.size
            terms = self.fwd_terms.view()
            squares = (tf_weights(self.fwd_tf.view()) * self.idf_table()[terms]) ** 2
            starts = self.fwd_start.view()
            lengths = np.diff(np.append(starts, len(terms)))
            sums = np.zeros(n, dtype=np.float64)
            nonempty = lengths > 0
            if len(terms):
                sums[nonempty] = np.add.reduceat(squares, starts[nonempty])
            self._norms = np.sqrt(sums)
            self._norms_generation = self.generation
            return self._norms

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

    def memory_bytes(self) -> int:
        """Approximate bytes held by the arrays (not counting Python object overhead)."""
        total = sum(
            getattr(self, name).data.nbytes
            for name in [
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
                "fwd_start",
                "fwd_terms",
                "fwd_tf",
            ]
        )
        total += self.main_ptr.nbytes + self.main_docs.nbytes + self.main_tf.nbytes
        total += sum(
            d.buffer_info()[1] * 4 + t.buffer_info()[1] * 2 for d, t in self.delta.values()
        )
        return total + self.df.buffer_info()[1] * 4


@dataclass(frozen=True)
class Snapshot:
    """One tenant index's documents and filter columns at one moment (read-only).

    Columns are numpy arrays indexed by document. Appends and merges never touch
    the arrays a snapshot holds; the two written in place are copied. Code
    tables only grow, so codes seen here keep their meaning.
    """

    tenant: str
    ids: list[str]
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

"""One tenant's terms: each document's terms (forward lists) and each term's documents (postings).

A document's terms are appended to the forward lists in sorted term order,
with their counts (capped at 2**16 - 1). A term's documents live in a compact
main part (numpy CSR: ``main_ptr`` into ``main_docs`` and ``main_tf``, rebuilt by
`Postings.compact`) plus a small append-only delta, so adding a memory costs a
few list appends and a query touches only its terms' postings. Document
frequencies are kept current with them, or counted once when a bulk build
ends (`Postings.count`).

Postings name every document ever appended since the last compaction, retired
ones included: the tenant index masks those out (it knows which are alive).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from memcommit.recall.index.columns import Column
from memcommit.recall.index.sections import Section
from memcommit.recall.index.sizes import ENTRY, LIST, OBJECT, array_bytes
from memcommit.recall.index.text import tokenize, tokenize_many
from memcommit.recall.index.vocabulary import Vocabulary

_TF_MAX = np.iinfo(np.uint16).max
#: From this many documents on, `Postings.add` tokenizes and posts them together.
POSTED_TOGETHER = 64
_FORWARD = ("fwd_start", "fwd_terms", "fwd_tf")
#: The sections of a snapshot the forward lists, postings and frequencies fill.
SECTIONS = (*_FORWARD, "main_ptr", "main_docs", "main_tf", "df")


def spans(starts: np.ndarray, total: int, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``docs``' terms start in forward lists of ``total`` entries, and how many."""
    following = docs + 1
    ends = np.full(len(docs), total, dtype=np.int64)
    inside = following < len(starts)
    ends[inside] = starts[following[inside]]
    first = starts[docs]
    return first, ends - first


def gathered(first: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The forward-list positions of spans (`spans`) run together, and where each span starts."""
    firsts = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    return np.arange(total, dtype=np.int64) + np.repeat(first - firsts, lengths), firsts


class Postings:
    """The forward lists, postings and document frequencies of one tenant's documents."""

    def __init__(self) -> None:
        self.fwd_start = Column(np.int64)  # one entry per document
        self.fwd_terms = Column(np.int32)
        self.fwd_tf = Column(np.uint16)
        self.df = array("i")
        self.main_ptr = np.zeros(1, dtype=np.int64)
        self.main_docs = Section.of(np.zeros(0, dtype=np.int32))
        self.main_tf = Section.of(np.zeros(0, dtype=np.uint16))
        self.delta: dict[int, tuple[array[int], array[int]]] = {}
        self.delta_size = 0

    @property
    def size(self) -> int:
        """How many documents have terms here (every document appended, retired or not)."""
        return self.fwd_start.size

    def add(self, texts: Iterable[str], first: int, vocabulary: Vocabulary, *, count: bool) -> None:
        """Append the terms of documents ``first``, ``first + 1``, ... (one text each).

        ``count``: their postings and document frequencies too; a bulk build
        leaves both to `count` and `compact` when it ends. Many documents at once
        (a catch-up, a commit of many) are tokenized and posted together
        (`_append`, `_post`); a few, one by one: the same index either way.
        """
        texts = list(texts)
        if not count or len(texts) >= POSTED_TOGETHER:
            entries = self.fwd_terms.size
            self._append(texts, vocabulary)
            if count:
                self._post(first, len(texts), entries)
            return
        df, delta = self.df, self.delta
        starts: list[int] = []
        all_tids: list[int] = []
        all_tfs: list[int] = []
        offset = len(self.fwd_terms)
        for doc, text in enumerate(texts, first):
            counts = Counter(tokenize(text))
            terms = sorted(counts)  # norms sum in this order: independent of insertion order
            tids = vocabulary.ids(terms)
            tfs = [counts[term] for term in terms]
            if tfs and max(tfs) > _TF_MAX:
                tfs = [min(tf, _TF_MAX) for tf in tfs]
            starts.append(offset + len(all_tids))
            all_tids += tids
            all_tfs += tfs
            if tids and max(tids) >= len(df):
                df.extend([0] * (max(tids) + 1 - len(df)))
            for tid, tf in zip(tids, tfs, strict=True):
                df[tid] += 1
                slot = delta.get(tid)
                if slot is None:
                    slot = delta[tid] = (array("i"), array("H"))
                slot[0].append(doc)
                slot[1].append(tf)
        self.delta_size += len(all_tids)
        self.fwd_start.extend(starts)
        self.fwd_terms.extend(all_tids)
        self.fwd_tf.extend(all_tfs)

    def _post(self, first: int, added: int, entries: int) -> None:
        """The postings and document frequencies of the ``added`` documents `_append` just
        added, ``first`` on (their terms from forward-list entry ``entries`` on): each
        term's documents go to the end of its delta in document order, as `add` puts
        them one by one, with one numpy sort instead of a step per (document, term)."""
        terms = self.fwd_terms.view()[entries:]
        if not len(terms):
            return
        lengths = np.diff(np.append(self.fwd_start.view()[-added:], self.fwd_terms.size))
        docs = np.repeat(np.arange(first, first + added), lengths)
        order = np.argsort(terms, kind="stable")
        by_term = terms[order]
        starts = np.flatnonzero(np.diff(by_term, prepend=-1))
        ends = np.append(starts[1:], len(by_term))
        tids = by_term[starts]
        if int(tids[-1]) >= len(self.df):
            self.df.frombytes(bytes(self.df.itemsize * (int(tids[-1]) + 1 - len(self.df))))
        frequencies = np.frombuffer(self.df, dtype=np.intc)  # (written through; let go below)
        frequencies[tids] += (ends - starts).astype(np.intc)
        del frequencies
        posted, tfs = docs[order].tolist(), self.fwd_tf.view()[entries:][order].tolist()
        delta = self.delta
        for tid, start, end in zip(tids.tolist(), starts.tolist(), ends.tolist(), strict=True):
            slot = delta.get(tid)
            if slot is None:
                delta[tid] = (array("i", posted[start:end]), array("H", tfs[start:end]))
            else:
                slot[0].extend(posted[start:end])
                slot[1].extend(tfs[start:end])
        self.delta_size += len(terms)

    def _append(self, texts: list[str], vocabulary: Vocabulary) -> None:
        """`add` without postings (a bulk build): the forward lists of many documents at once.

        Every text is tokenized, then its terms are counted and sorted for all
        documents in one numpy pass: each (document, term) pair is a key sorted
        by document, then by the term's text, as `add` sorts one document's terms.
        New terms get their ids in the order `add` would give them (by first
        document, then text), so the index is the same whichever path built it.
        """
        distinct, docs, local = tokenize_many(texts)
        size = max(len(distinct), 1)
        by_text = sorted(range(len(distinct)), key=distinct.__getitem__)
        rank = np.empty(len(distinct), dtype=np.int64)
        rank[by_text] = np.arange(len(distinct))
        keys, counts = np.unique(docs * size + rank[local], return_counts=True)
        ranks = keys % size
        seen, first = np.unique(ranks, return_index=True)  # each term's first (document, text)
        order = np.asarray(by_text, dtype=np.int64)[seen[np.argsort(first)]]
        assigned = vocabulary.ids([distinct[position] for position in order.tolist()])
        tid_of_rank = np.zeros(len(distinct), dtype=np.int64)
        tid_of_rank[rank[order]] = assigned
        per_doc = np.bincount(keys // size, minlength=len(texts))
        offset = len(self.fwd_terms)
        self.fwd_start.extend(offset + np.cumsum(per_doc) - per_doc)
        self.fwd_terms.extend(tid_of_rank[ranks].astype(np.int32))
        self.fwd_tf.extend(np.minimum(counts, _TF_MAX).astype(np.uint16))

    def retire(self, doc: int) -> None:
        """``doc`` no longer counts in its terms' document frequencies."""
        df, start = self.df, int(self.fwd_start.data[doc])
        end = int(self.fwd_start.data[doc + 1]) if doc + 1 < self.size else self.fwd_terms.size
        for tid in self.fwd_terms.data[start:end].tolist():
            df[tid] -= 1

    def count(self, docs: np.ndarray) -> None:
        """Each term's document frequency, counted over ``docs`` (the current documents)."""
        entries, _ = gathered(*self.spans(docs))
        counts = np.bincount(self.fwd_terms.data[entries], minlength=len(self.df))
        self.df = array("i", counts.astype(np.int32).tobytes())

    def nbytes(self) -> int:
        """What the forward lists, postings and frequencies hold in memory."""
        columns = self.fwd_start.nbytes() + self.fwd_terms.nbytes() + self.fwd_tf.nbytes()
        main = array_bytes(self.main_ptr) + self.main_docs.nbytes() + self.main_tf.nbytes()
        delta = len(self.delta) * (ENTRY + 3 * LIST) + self.delta_size * 6  # a tuple, 2 arrays
        return OBJECT + columns + main + delta + len(self.df) * self.df.itemsize

    def spans(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each of ``docs``' terms start in the forward lists, and how many it has."""
        return spans(self.fwd_start.view(), self.fwd_terms.size, docs)

    def lengths(self) -> np.ndarray:
        """How many distinct terms each document has."""
        starts = self.fwd_start.view()
        return np.diff(np.append(starts, self.fwd_terms.size))

    def frequencies(self) -> np.ndarray:
        """Each term id's document frequency (a copy)."""
        return np.frombuffer(self.df, dtype=np.int32).copy()

    def forward(self) -> tuple[np.ndarray | Section, ...]:
        """The forward lists as they are now (a section not checked yet stays unchecked)."""
        return tuple(getattr(self, name).view_or_section() for name in _FORWARD)

    def needs_compacting(self) -> bool:
        """Whether the delta has grown large beside the main part."""
        return self.delta_size > max(50_000, len(self.main_docs) // 4)

    def of(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, counts) of one term, retired documents included, ascending."""
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
        return docs, tfs

    def compact(self, alive: np.ndarray) -> None:
        """Keep the documents ``alive`` marks (renumbered in order); main postings hold all.

        The forward lists are cut to the kept documents and the postings built
        from them in one pass; the delta empties. Document frequencies stay.
        """
        keep = np.flatnonzero(alive)
        starts = self.fwd_start.view()
        ends = np.append(starts[1:], self.fwd_terms.size)
        lengths = (ends - starts)[keep]
        entry_keep = np.repeat(alive, ends - starts)
        terms = self.fwd_terms.view()[entry_keep]
        tfs = self.fwd_tf.view()[entry_keep]
        if len(keep):
            self.fwd_start.replace(np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64))
        else:
            self.fwd_start.replace(np.zeros(0, dtype=np.int64))
        self.fwd_terms.replace(terms)
        self.fwd_tf.replace(tfs)
        docs = np.repeat(np.arange(len(keep), dtype=np.int32), lengths)
        order = np.argsort(terms, kind="stable")
        self.main_docs = Section.of(docs[order])
        self.main_tf = Section.of(tfs[order])
        counts = (
            np.bincount(terms, minlength=len(self.df))
            if len(terms)
            else np.zeros(len(self.df), dtype=np.int64)
        )
        self.main_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.delta, self.delta_size = {}, 0

    def export(self, keep: np.ndarray, vocabulary: Vocabulary) -> dict[str, np.ndarray]:
        """The terms of documents ``keep`` (renumbered 0, 1, ...) compactly, with the vocabulary.

        Terms no kept document has are left out and the rest renumbered in
        sorted order (`Vocabulary.export`); the postings are all main.
        """
        starts, lengths = self.spans(keep)
        entries, firsts = gathered(starts, lengths)
        df = np.frombuffer(self.df, dtype=np.int32) if len(self.df) else np.zeros(0, np.int32)
        used = np.flatnonzero(df > 0)
        arrays, renumber = vocabulary.export(used)
        terms = renumber[self.fwd_terms.data[entries]]
        tfs = self.fwd_tf.data[entries]
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
        )
        return arrays

    @classmethod
    def restore(cls, sections: Mapping[str, Section]) -> Postings:
        """What `export` wrote, read in place (forward lists and postings checked when read)."""
        found = cls()
        for name in _FORWARD:
            getattr(found, name).adopt(sections[name])
        found.main_ptr = sections["main_ptr"].whole()
        found.main_docs, found.main_tf = sections["main_docs"], sections["main_tf"]
        found.df = array("i", sections["df"].whole().tobytes())
        return found

"""Term text <-> dense term id, and each term's stem: the vocabulary of a tenant index.

Built in memory, the vocabulary is dicts and lists. Restored from a snapshot,
it is the snapshot's sorted tables read in place (`memcommit.recall.index.blobs`):
the terms (a term's id is its position), the stems, each term's stem and the
terms of each stem. A lookup bisects the terms; nothing is decoded up front, so
a fresh process pays for the few terms its query names, not for the whole
vocabulary. Terms first seen after the snapshot get the next ids, in dicts.
"""

from __future__ import annotations

import threading
from collections.abc import Set

import numpy as np

from memcommit.recall.index.blobs import Sorted, Strings, encode
from memcommit.recall.index.sections import Section
from memcommit.recall.index.sizes import ENTRY, LIST, OBJECT, SLOT
from memcommit.recall.index.stem import stem

#: The arrays of a vocabulary in a snapshot (see `Vocabulary.export`).
SECTIONS = ("terms", "term_starts", "stems", "stem_starts", "stem_of", "stem_ptr", "stem_terms")


class Vocabulary:
    """Term text <-> dense id, plus each term's stem (shared by the tenants built with it)."""

    def __init__(self, stored: dict[str, Section] | None = None) -> None:
        self._terms: Sorted | None = None
        self._stems: Sorted | None = None
        if stored is not None:
            self._terms = Sorted(Strings(stored["terms"], stored["term_starts"]))
            self._stems = Sorted(Strings(stored["stems"], stored["stem_starts"]))
            self._stem_of = stored["stem_of"]  # stored term id -> stem code
            self._stem_ptr = stored["stem_ptr"]  # stem code -> first of its stored terms
            self._stem_terms = stored["stem_terms"]  # stored term ids grouped by stem
        self._first = len(self._terms) if self._terms is not None else 0
        self._first_stem = len(self._stems) if self._stems is not None else 0
        self._ids: dict[str, int] = {}  # terms added since, and stored ones written: text -> id
        self._added: list[str] = []
        self._added_stem_of: list[int] = []
        self._stem_codes: dict[str, int] = {}  # stems added since: text -> code
        self._added_stems: list[str] = []
        self._by_stem: dict[int, list[int]] = {}  # stem code -> ids of the terms added since
        self._grouped = 0  # the added terms ``_by_stem`` lists (grouped when a query asks)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._first + len(self._added)

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.get(term) is not None

    def nbytes(self) -> int:
        """The stored tables, and the dicts and lists of terms added or looked up since."""
        stored = 0
        if self._terms is not None and self._stems is not None:
            parts = (self._stem_of, self._stem_ptr, self._stem_terms)
            stored = self._terms.nbytes() + self._stems.nbytes() + sum(p.nbytes() for p in parts)
        added = len(self._added) * 2 * SLOT + len(self._added_stems) * SLOT
        stems = (len(self._stem_codes) + len(self._by_stem)) * ENTRY + len(self._by_stem) * LIST
        return OBJECT + stored + len(self._ids) * ENTRY + added + stems

    def get(self, term: str) -> int | None:
        """The id of ``term`` if any document ever had it."""
        found = self._ids.get(term)
        if found is None and self._terms is not None:
            found = self._terms.find(term)
        return found

    def among(self, terms: Set[str]) -> Set[str]:
        """Those of ``terms`` some document ever had: `get` for many terms at once."""
        found = self._ids.keys() & terms
        if self._terms is not None:
            found |= self._terms.among(terms)
        return found

    def id(self, term: str) -> int:
        """The id of ``term``, assigned on first sight.

        A stored term's id is kept beside the added ones, so writing it again
        costs one dict lookup (as for a term added since).
        """
        found = self._ids.get(term)  # (the common case first: one dict lookup)
        if found is not None:
            return found
        if self._terms is not None:
            found = self._terms.find(term)
            if found is not None:
                self._ids[term] = found
                return found
        with self._lock:
            found = self._ids.get(term)
            if found is None:
                found = len(self)
                root = stem(term)
                code = self._stem_code(root)
                if code is None:
                    code = self._first_stem + len(self._added_stems)
                    self._added_stems.append(root)
                    self._stem_codes[root] = code
                self._added.append(term)
                self._added_stem_of.append(code)
                self._ids[term] = found
        return found

    def ids(self, terms: list[str]) -> list[int]:
        """The ids of ``terms`` (each assigned on first sight): `id` for many terms at once.

        Terms never seen are assigned in one pass under the lock, with the
        lookups held in locals: a tenant's first build assigns most of its terms.
        """
        known = self._ids.get
        found = [known(term) for term in terms]
        if None not in found:
            return found  # type: ignore[return-value]  # (no None left: checked just above)
        stored = self._terms.find if self._terms is not None else None
        with self._lock:
            ids, stem_codes = self._ids, self._stem_codes
            added, added_stem_of, added_stems = self._added, self._added_stem_of, self._added_stems
            stored_stem = self._stems.find if self._stems is not None else None
            if stored is None:  # built in memory: a term not in ``ids`` is new
                missing = [position for position, tid in enumerate(found) if tid is None]
                self._add_new([terms[position] for position in missing])
                for position in missing:
                    found[position] = ids[terms[position]]
                return found  # type: ignore[return-value]  # (every None assigned above)
            for position, term in enumerate(terms):
                if found[position] is not None:
                    continue
                tid = ids.get(term)
                if tid is None and stored is not None:
                    tid = stored(term)
                if tid is None:
                    tid = self._first + len(added)
                    root = stem(term)
                    code = stem_codes.get(root)
                    if code is None and stored_stem is not None:
                        code = stored_stem(root)
                    if code is None:
                        code = stem_codes[root] = self._first_stem + len(added_stems)
                        added_stems.append(root)
                    added.append(term)
                    added_stem_of.append(code)
                ids[term] = found[position] = tid
        return found  # type: ignore[return-value]  # (every None assigned above)

    def _add_new(self, terms: list[str]) -> None:
        """Assign the next ids to ``terms`` not known yet, in order (their stems likewise).

        `ids` for a vocabulary without stored tables, a step per kind of table
        rather than per term. Called under the lock.
        """
        ids, stem_codes = self._ids, self._stem_codes
        new = [term for term in dict.fromkeys(terms) if term not in ids]
        first = self._first + len(self._added)
        roots = list(map(stem, new))
        for root in dict.fromkeys(roots):
            if root not in stem_codes:
                stem_codes[root] = self._first_stem + len(self._added_stems)
                self._added_stems.append(root)
        codes = list(map(stem_codes.__getitem__, roots))
        ids.update(zip(new, range(first, first + len(new)), strict=True))
        self._added += new
        self._added_stem_of += codes

    def _stem_code(self, text: str) -> int | None:
        found = self._stem_codes.get(text)
        if found is None and self._stems is not None:
            found = self._stems.find(text)
        return found

    def variants(self, term: str) -> list[int]:
        """Ids of every known term with the same stem as ``term`` (itself included)."""
        code = self._stem_code(stem(term))
        if code is None:
            return []
        found: list[int] = []
        if code < self._first_stem:
            start, stop = self._stem_ptr.rows(code, code + 2).tolist()
            found = self._stem_terms.rows(start, stop).tolist()
        return found + self._grouped_by_stem().get(code, [])

    def _grouped_by_stem(self) -> dict[int, list[int]]:
        """Stem code -> ids of the terms added since the stored tables, ascending.

        Grouped when a query first asks after terms were added, not as they
        are: a writer that never recalls never groups them.
        """
        with self._lock:
            by_stem, codes = self._by_stem, self._added_stem_of
            for tid, code in enumerate(codes[self._grouped :], self._first + self._grouped):
                by_stem.setdefault(code, []).append(tid)
            self._grouped = len(codes)
            return by_stem

    def export(self, used: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The vocabulary of term ids ``used`` as snapshot arrays, and each old id's new id.

        Terms are renumbered in sorted order (-1: not used); each stem's terms
        are listed by new id.
        """
        stored_terms = self._terms.strings.decoded() if self._terms is not None else []
        stored_stems = self._stems.strings.decoded() if self._stems is not None else []
        stored_stem_of = self._stem_of.whole().tolist() if self._terms is not None else []
        stem_names = stored_stems + self._added_stems
        stem_of = stored_stem_of + self._added_stem_of
        every = stored_terms + self._added if stored_terms else self._added  # (term id -> text)
        texts = list(map(every.__getitem__, used.tolist()))
        order = sorted(range(len(texts)), key=texts.__getitem__)
        renumber = np.full(len(self), -1, dtype=np.int32)
        renumber[used[order]] = np.arange(len(order), dtype=np.int32)
        stem_codes = np.asarray(stem_of, dtype=np.int64)[used[order]] if len(used) else used
        term_stems = list(map(stem_names.__getitem__, stem_codes.tolist()))
        stems = sorted(set(term_stems))
        code = dict(zip(stems, range(len(stems)), strict=True))
        codes = np.fromiter(
            map(code.__getitem__, term_stems), dtype=np.int32, count=len(term_stems)
        )
        terms, term_starts = encode(list(map(texts.__getitem__, order)))
        stem_bytes, stem_starts = encode(stems)
        counts = np.bincount(codes, minlength=len(stems))
        arrays = {
            "terms": terms,
            "term_starts": term_starts,
            "stems": stem_bytes,
            "stem_starts": stem_starts,
            "stem_of": codes,
            "stem_ptr": np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
            "stem_terms": np.argsort(codes, kind="stable").astype(np.int32),
        }
        return arrays, renumber

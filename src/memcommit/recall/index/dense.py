"""One tenant's vectors by one embedder, row for row with the tenant index's documents.

A vector is kept as int8 codes (``round(127 · v / max|v|)``) and the length of
its codes: a quarter of float32's bytes (384 MB, not 1.5 GB, at a million
memories of 384 dims), and a dot product of two code rows is a sum of integers
below 2**24, which float32 and float64 both hold exactly. So the dense score,
the cosine of the codes ``(q · c) / (|q| |c|)``, has the same bits whatever
order the rows are summed in, by whichever kernel (simsimd's int8 dot product
when installed, numpy's float32 product of chunks otherwise): the same store
gives the same ranking on every host. The cosine of the codes differs from the
float cosine by well under 0.01 (127 levels per dimension).

Ranking a large tenant does not score every row: `nearest` first takes the
``max(CANDIDATES_PER_RANK · depth, MIN_CANDIDATES)`` rows (10,000 for the
fusion's window of 300, `memcommit.recall.scoring.focus`) nearest the query by
the Hamming distance of one-bit sign codes (`memcommit.recall.index.signs`, 48
bytes a row at 384 dims, an eighth of the int8 scan, kept by word; the cut found
by counting, ties by row), then scores those exactly by the int8 cosine, their code rows gathered
from the mapped file. `window` keeps of those only the rows at or above the
depth-th best cosine (ties included): all a ranking of the window reads. That
first stage is approximate: a row outside the candidates is not ranked densely,
even when its cosine would have placed it in the window (docs/recall.md
measures how often: on random vectors, the worst case for sign codes, 10,000
candidates of a million keep about 70% of the exact top 10). When at most
``EXACT_BELOW`` rows are eligible, every one of them is scored exactly instead.

Rows follow the documents: a new document gets a row without a vector
(``has`` False) until the store gives one; a merge keeps the rows of the
documents it keeps, in order, exactly as the index does (`keep`), and an export
writes the rows of the current documents in the export's order, so a restored
snapshot and its vector file agree document for document.

Rows mapped from a vector file are checked by their `row_sums` (two integer
check sums a row, kept in the file) the first time a process reads them, not by
the CRC of the blocks around them: the sums of 10,000 gathered candidates cost
0.3-0.6 ms, once per row (a flag a row remembers it passed), where each 8 KiB
block around a candidate cost its CRC (a million rows' 384 MB over a process's
first dozen recalls, 30-240 ms each). A row that fails is never flagged: it
fails every read. A row written in place gets its sums written with it.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Protocol

import numpy as np

from memcommit.recall.index import signs as sign_codes
from memcommit.recall.index.sections import Section

#: The largest code: a code row's dot products stay below 2**24 up to 1,040 dims.
SCALE = 127
#: Rows scored per numpy product when simsimd is absent (bounds the float32 copy).
CHUNK = 32_768
#: Up to this many eligible rows, `nearest` scores every one exactly (no Hamming stage).
EXACT_BELOW = 20_000
#: The Hamming stage keeps this many candidates per rank of the dense window ...
CANDIDATES_PER_RANK = 33
#: ... and never fewer than this many.
MIN_CANDIDATES = 10_000
#: Check sums per row of a vector file (`row_sums`).
SUMS = 2

try:  # an exact int8 kernel, many times faster than numpy's products of chunks
    import simsimd as _simsimd
except ImportError:  # pragma: no cover - numpy gives the same numbers, slower
    _simsimd = None  # type: ignore[assignment]


def codes_of(vectors: np.ndarray) -> np.ndarray:
    """Float vectors (one per row) as int8 codes; a zero row stays zero."""
    matrix = np.asarray(vectors, dtype=np.float64)
    peak = np.abs(matrix).max(axis=1, keepdims=True) if matrix.size else matrix
    scale = np.divide(SCALE, peak, out=np.zeros_like(peak), where=peak > 0)
    codes: np.ndarray = np.rint(matrix * scale).astype(np.int8)
    return codes


def code_norms(codes: np.ndarray) -> np.ndarray:
    """The length of each code row (float64; exact sums of squares under the root)."""
    wide = codes.astype(np.int64)
    norms: np.ndarray = np.sqrt((wide * wide).sum(axis=1).astype(np.float64))
    return norms


def dots(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Integer dot products of every code row with ``query``'s codes, as float64 (exact).

    ``query`` one row of codes (one product a code row) or several (a row of products each).
    """
    queries = query if query.ndim == 2 else query[None, :]
    if not len(codes):
        return np.zeros((0, len(queries)) if query.ndim == 2 else 0)
    if _simsimd is not None:
        found = np.asarray(_simsimd.cdist(codes, queries, metric="dot"), dtype=np.float64)
    else:
        found = np.empty((len(codes), len(queries)))
        wide = queries.T.astype(np.float32)
        for start in range(0, len(codes), CHUNK):
            block = codes[start : start + CHUNK].astype(np.float32)
            found[start : start + len(block)] = block @ wide
    return found if query.ndim == 2 else found.reshape(-1)


def row_sums(codes: np.ndarray) -> np.ndarray:
    """Each code row's `SUMS` check sums: its dot products with fixed weight rows (int32).

    What a vector file keeps to check a row as it is read, in place of a CRC of
    the blocks around it: any change of one code changes every sum (no weight is
    0), and a row of random bytes passes both with a chance near 1 in 10**10.
    """
    sums: np.ndarray = dots(codes, _weights(codes.shape[1])).astype(np.int32)
    return sums


@functools.cache
def _weights(dims: int) -> np.ndarray:
    """`SUMS` rows of int8 weights in 1..127 by size, either sign: the same on every host."""
    stream = np.frombuffer(hashlib.shake_128(b"memcommit dense row sums").digest(SUMS * dims),
                           dtype=np.uint8).astype(np.int16)  # fmt: skip
    weights = (stream % 127 + 1) * np.where(stream >= 128, -1, 1)
    return weights.astype(np.int8).reshape(SUMS, dims)


def gather(rows: np.ndarray, picked: np.ndarray) -> np.ndarray:
    """``rows[picked]`` of a 2-D array, each row copied as one item (a few times faster
    than numpy's indexing of rows of int8 codes or of row sums)."""
    if not (rows.flags.c_contiguous and rows.ndim == 2 and rows.shape[1]):
        found: np.ndarray = rows[picked]
        return found
    whole = rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).reshape(-1)
    gathered: np.ndarray = whole[picked].view(rows.dtype).reshape(len(picked), rows.shape[1])
    return gathered


class DenseRows:
    """Code rows aligned with a tenant index's documents (see the module doc)."""

    def __init__(
        self,
        embedder: str,
        dims: int,
        codes: np.ndarray | None = None,
        norms: np.ndarray | None = None,
        has: np.ndarray | None = None,
        signs: np.ndarray | None = None,
        unchecked: tuple[Section, np.ndarray] | None = None,
    ) -> None:
        """``signs``: the rows' sign codes by word (`signs.columns_of`). ``unchecked``: the
        mapped file section ``codes`` is a view of and the `row_sums` the file gives its
        rows, which every read of a row is checked against (`checked`)."""
        self.embedder, self.dims = embedder, dims
        self.codes = codes if codes is not None else np.zeros((0, dims), dtype=np.int8)
        self.norms = norms if norms is not None else np.zeros(0)
        self.has = has if has is not None else np.zeros(0, dtype=bool)
        self.signs = signs if signs is not None else sign_codes.columns_of(self.codes)
        self.unchecked = unchecked
        self.passed = np.zeros(0 if unchecked is None else len(unchecked[1]), dtype=bool)
        self.size = len(self.has)

    def nbytes(self) -> int:
        """The bytes its arrays hold (codes mapped from a vector file too, once read)."""
        sums = () if self.unchecked is None else (self.unchecked[1], self.passed)
        parts = (self.codes, self.norms, self.has, self.signs, *sums)
        return sum(int(part.nbytes) for part in parts)

    def checked(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The code rows (every one, or those of ``rows``), each checked against its row
        sums first while they are mapped from a file and it has not passed yet
        (IndexDamaged if one fails)."""
        if rows is not None:
            picked = gather(self.codes, rows)
            if self.unchecked is not None:
                fresh = ~self.passed[rows]
                if fresh.any():
                    section, sums = self.unchecked
                    first = rows[fresh]
                    self._check(picked[fresh], gather(sums, first), section)
                    self.passed[first] = True
            return picked
        if self.unchecked is not None:
            section, sums = self.unchecked
            for start in range(0, len(sums), CHUNK):
                stop = start + CHUNK
                self._check(self.codes[start:stop], sums[start:stop], section)
            self.unchecked, self.passed = None, np.zeros(0, dtype=bool)
        return self.codes

    def _check(self, codes: np.ndarray, sums: np.ndarray, section: Section) -> None:
        """IndexDamaged (``section``'s file marked) unless ``codes`` have the row ``sums``."""
        if not np.array_equal(dots(codes, _weights(self.dims)), sums):
            section.fail()

    def grow(self, size: int) -> None:
        """Rows up to document ``size`` (new ones without a vector); capacity doubles (the
        first rows are exactly ``size``: a small tenant holds no spare rows)."""
        if size <= self.size:
            return
        if size > len(self.has):
            capacity = max(size, 2 * len(self.has))
            codes = np.zeros((capacity, self.dims), dtype=np.int8)
            codes[: self.size] = self.checked()[: self.size]
            norms, has = np.zeros(capacity), np.zeros(capacity, dtype=bool)
            norms[: self.size], has[: self.size] = self.norms[: self.size], self.has[: self.size]
            signs = np.zeros((len(self.signs), capacity), dtype=sign_codes.WORD)
            signs[:, : self.size] = self.signs[:, : self.size]
            self.codes, self.norms, self.has, self.signs = codes, norms, has, signs
        self.size = size

    def put(self, docs: np.ndarray, vectors: np.ndarray) -> None:
        """Give documents ``docs`` their vectors (unit float rows, one per document)."""
        if not len(docs):
            return
        self.grow(int(docs.max()) + 1)
        if not self.codes.flags.writeable:  # mapped read-only: copied at the first write
            self.codes = self.checked().copy()
            self.norms, self.has, self.signs = self.norms.copy(), self.has.copy(), self.signs.copy()
        codes = codes_of(vectors)
        self.codes[docs], self.norms[docs], self.has[docs] = codes, code_norms(codes), True
        self.signs[:, docs] = sign_codes.columns_of(codes)
        if self.unchecked is not None:  # rows of a (copy-on-write) mapping, written in place
            self.unchecked[1][docs] = row_sums(codes)

    def keep(self, docs: np.ndarray) -> None:
        """Keep the rows of ``docs`` only, renumbered 0.. in that order (an index merge)."""
        docs = docs[docs < self.size]
        self.codes, self.norms, self.has = self.checked(docs), self.norms[docs], self.has[docs]
        self.signs, self.unchecked, self.passed = self.signs[:, docs], None, np.zeros(0, dtype=bool)
        self.size = len(docs)

    def missing(self, alive: np.ndarray) -> np.ndarray:
        """The documents alive in ``alive`` (one flag per document) without a vector."""
        self.grow(len(alive))
        return np.flatnonzero(alive & ~self.has[: len(alive)])

    def cosines(self, query: np.ndarray, docs: np.ndarray | None = None) -> np.ndarray:
        """Cosine of ``query``'s codes with every document's (or those of ``docs``); NaN: none."""
        codes = codes_of(np.asarray(query, dtype=np.float64)[None, :])[0]
        length = float(code_norms(codes[None, :])[0])
        if docs is None:
            found, held, norms = dots(self.checked()[: self.size], codes), self.has, self.norms
            held, norms = held[: self.size], norms[: self.size]
        elif len(docs) and int(docs.max()) < self.size:  # (the candidates: every row inside)
            found = dots(self.checked(docs), codes)
            held, norms = self.has[docs], self.norms[docs]
        else:
            inside = docs < self.size
            found = np.zeros(len(docs))
            found[inside] = dots(self.checked(docs[inside]), codes)
            held = np.zeros(len(docs), dtype=bool)
            held[inside] = self.has[docs[inside]]
            norms = np.where(held, self.norms[np.where(inside, docs, 0)], 1.0)
        out = np.full(len(found), np.nan)
        scored = held & (norms > 0) & (length > 0)
        out[scored] = found[scored] / (length * norms[scored])
        return out

    def candidates(self, query: np.ndarray, depth: int, allowed: np.ndarray) -> np.ndarray:
        """The rows `nearest` scores for a window of ``depth`` (ascending; see the module doc).

        ``allowed`` flags the documents that may be ranked (one per document, at least
        ``size`` long); a row without a vector is never a candidate.
        """
        eligible = self.has[: self.size] & allowed[: self.size]
        count = max(CANDIDATES_PER_RANK * depth, MIN_CANDIDATES)
        total = int(np.count_nonzero(eligible))
        if total <= max(count, EXACT_BELOW):
            return np.flatnonzero(eligible)
        codes = codes_of(np.asarray(query, dtype=np.float64)[None, :])
        found = sign_codes.distances(self.signs[:, : self.size], sign_codes.signs_of(codes)[0])
        return sign_codes.best(found, None if total == self.size else eligible, count)

    def nearest(
        self, query: np.ndarray, depth: int, allowed: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `candidates` for a window of ``depth`` and their exact int8 cosines."""
        rows = self.candidates(query, depth, allowed)
        return rows, self.cosines(query, rows)

    def window(
        self, query: np.ndarray, depth: int, allowed: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `nearest` rows that can take one of the ``depth`` first ranks, and their cosines.

        Every scored row at or above the ``depth``-th best cosine (ties at it
        included), ascending: what a ranking of the window reads, without an
        array over the tenant. An exact scan of every row reads the codes in
        place, in file order, rather than gathering them.
        """
        rows = self.candidates(query, depth, allowed)
        if len(rows) * 2 > self.size:  # most rows: scan in place, keep the eligible ones
            cosines = self.cosines(query)[rows]
        else:
            cosines = self.cosines(query, rows)
        scored = ~np.isnan(cosines)
        rows, cosines = rows[scored], cosines[scored]
        if len(rows) > depth > 0:
            kth = np.partition(cosines, len(cosines) - depth)[len(cosines) - depth]
            kept = cosines >= kth
            rows, cosines = rows[kept], cosines[kept]
        return rows, cosines

    def export(self, docs: np.ndarray) -> dict[str, np.ndarray]:
        """The rows of ``docs`` (an export's current documents, in its order) as named arrays;
        a document past its rows is a row without a vector (nothing grown or copied)."""
        inside = docs < self.size
        held = docs[inside]
        codes = np.zeros((len(docs), self.dims), dtype=np.int8)
        codes[inside] = self.checked(held)
        norms, has = np.zeros(len(docs)), np.zeros(len(docs), dtype=bool)
        norms[inside], has[inside] = self.norms[held], self.has[held]
        signs = np.zeros((len(self.signs), len(docs)), dtype=sign_codes.WORD)
        signs[:, inside] = self.signs[:, held]
        return {"codes": codes, "norms": norms, "has": has, "signs": signs, "sums": row_sums(codes)}


class VectorFiles(Protocol):
    """The vector files of the snapshot an index was restored from
    (`memcommit.recall.index.vectorfile.Beside`)."""

    def __call__(self, embedder: str, dims: int) -> DenseRows | None:
        """The rows of ``embedder`` (of ``dims``), or None when no sound file has them."""

    def embedders(self) -> list[tuple[str, int]]:
        """(embedder, dims) of every vector file written with the snapshot."""


def carry(dense: dict[str, DenseRows], beside: VectorFiles | None) -> list[str]:
    """Put into ``dense`` (an index's rows by embedder) the rows of every vector file
    ``beside`` its snapshot that it has not read yet; the embedders carried.

    Before the index writes a snapshot or renumbers its documents (a merge): a
    process that never ranks by meaning (a writer keeping snapshots) would
    otherwise leave the rows behind, and the next recall by meaning would read
    every vector of the tenant from the store again. The rows stay mapped (rows
    of documents added since are exported as rows without a vector).
    """
    carried = []
    for embedder, dims in [] if beside is None else beside.embedders():
        rows = None if beside is None or embedder in dense else beside(embedder, dims)
        if rows is not None:
            dense[embedder] = rows
            carried.append(embedder)
    return carried

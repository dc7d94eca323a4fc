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
bytes a row at 384 dims, an eighth of the int8 scan; the cut found by counting
the distances, ties by row), then scores those exactly by the int8 cosine, their code rows gathered
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
"""

from __future__ import annotations

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
    """Integer dot products of every code row with ``query``'s codes, as float64 (exact)."""
    if not len(codes):
        return np.zeros(0)
    if _simsimd is not None:
        found = np.asarray(_simsimd.cdist(query[None, :], codes, metric="dot"), dtype=np.float64)
        return found.reshape(-1)
    out = np.empty(len(codes))
    wide = query.astype(np.float32)
    for start in range(0, len(codes), CHUNK):
        block = codes[start : start + CHUNK].astype(np.float32)
        out[start : start + len(block)] = block @ wide
    return out


def gather(codes: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``codes[rows]``, each row copied as one item (a few times faster than int8 indexing)."""
    if not (codes.flags.c_contiguous and codes.ndim == 2 and codes.shape[1]):
        picked: np.ndarray = codes[rows]
        return picked
    whole = codes.view(np.dtype((np.void, codes.shape[1]))).reshape(-1)
    gathered: np.ndarray = whole[rows].view(np.int8).reshape(len(rows), codes.shape[1])
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
        unchecked: Section | None = None,
    ) -> None:
        """``unchecked``: the mapped file section ``codes`` is a view of, its blocks checked
        only as rows are read (`checked`)."""
        self.embedder, self.dims = embedder, dims
        self.unchecked = unchecked
        self.codes = codes if codes is not None else np.zeros((0, dims), dtype=np.int8)
        self.norms = norms if norms is not None else np.zeros(0)
        self.has = has if has is not None else np.zeros(0, dtype=bool)
        self.signs = signs if signs is not None else sign_codes.signs_of(self.checked())
        self.size = len(self.has)

    def nbytes(self) -> int:
        """The bytes its arrays hold (codes mapped from a vector file too, once read)."""
        return sum(int(part.nbytes) for part in (self.codes, self.norms, self.has, self.signs))

    def checked(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The code rows (every one, or those of ``rows``), their file blocks checked first."""
        if self.unchecked is not None and rows is not None:
            self.unchecked.check_spans(rows * self.dims, self.dims)
        elif self.unchecked is not None:
            self.unchecked.whole()
            self.unchecked = None
        return self.codes if rows is None else gather(self.codes, rows)

    def grow(self, size: int) -> None:
        """Rows up to document ``size`` (new ones without a vector); capacity doubles."""
        if size <= self.size:
            return
        if size > len(self.has):
            capacity = max(size, 2 * len(self.has), 1024)
            codes = np.zeros((capacity, self.dims), dtype=np.int8)
            codes[: self.size] = self.checked()[: self.size]
            norms, has = np.zeros(capacity), np.zeros(capacity, dtype=bool)
            norms[: self.size], has[: self.size] = self.norms[: self.size], self.has[: self.size]
            signs = np.zeros((capacity, sign_codes.width(self.dims)), dtype=np.uint8)
            signs[: self.size] = self.signs[: self.size]
            self.codes, self.norms, self.has, self.signs = codes, norms, has, signs
        self.size = size

    def put(self, docs: np.ndarray, vectors: np.ndarray) -> None:
        """Give documents ``docs`` their vectors (unit float rows, one per document)."""
        if not len(docs):
            return
        self.grow(int(docs.max()) + 1)
        if self.unchecked is not None:  # rows mapped from a file: check what is overwritten
            self.checked(docs)  # first, or the block's checksum fails when next read
        if not self.codes.flags.writeable:  # mapped from a file: copied at the first write
            self.codes, self.norms, self.has = (
                self.checked().copy(),
                self.norms.copy(),
                self.has.copy(),
            )
            self.signs = self.signs.copy()
        codes = codes_of(vectors)
        self.codes[docs], self.norms[docs], self.has[docs] = codes, code_norms(codes), True
        self.signs[docs] = sign_codes.signs_of(codes)

    def keep(self, docs: np.ndarray) -> None:
        """Keep the rows of ``docs`` only, renumbered 0.. in that order (an index merge)."""
        docs = docs[docs < self.size]
        self.codes, self.norms, self.has = self.checked(docs), self.norms[docs], self.has[docs]
        self.signs, self.unchecked = self.signs[docs], None
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
        found = sign_codes.distances(self.signs[: self.size], sign_codes.signs_of(codes)[0])
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
        """The rows of ``docs`` (an export's current documents, in its order) as named arrays."""
        self.grow(int(docs.max()) + 1 if len(docs) else 0)
        return {
            "codes": np.ascontiguousarray(self.checked(docs)),
            "norms": np.ascontiguousarray(self.norms[docs]),
            "has": np.ascontiguousarray(self.has[docs]),
            "signs": np.ascontiguousarray(self.signs[docs]),
        }

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

Rows follow the documents: a new document gets a row without a vector
(``has`` False) until the store gives one; a merge keeps the rows of the
documents it keeps, in order, exactly as the index does (`keep`), and an export
writes the rows of the current documents in the export's order, so a restored
snapshot and its vector file agree document for document.
"""

from __future__ import annotations

import numpy as np

#: The largest code: a code row's dot products stay below 2**24 up to 1,040 dims.
SCALE = 127
#: Rows scored per numpy product when simsimd is absent (bounds the float32 copy).
CHUNK = 32_768

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


class DenseRows:
    """Code rows aligned with a tenant index's documents (see the module doc)."""

    def __init__(
        self,
        embedder: str,
        dims: int,
        codes: np.ndarray | None = None,
        norms: np.ndarray | None = None,
        has: np.ndarray | None = None,
    ) -> None:
        self.embedder, self.dims = embedder, dims
        self.codes = codes if codes is not None else np.zeros((0, dims), dtype=np.int8)
        self.norms = norms if norms is not None else np.zeros(0)
        self.has = has if has is not None else np.zeros(0, dtype=bool)
        self.size = len(self.has)

    def grow(self, size: int) -> None:
        """Rows up to document ``size`` (new ones without a vector); capacity doubles."""
        if size <= self.size:
            return
        if size > len(self.has):
            capacity = max(size, 2 * len(self.has), 1024)
            codes = np.zeros((capacity, self.dims), dtype=np.int8)
            codes[: self.size] = self.codes[: self.size]
            norms, has = np.zeros(capacity), np.zeros(capacity, dtype=bool)
            norms[: self.size], has[: self.size] = self.norms[: self.size], self.has[: self.size]
            self.codes, self.norms, self.has = codes, norms, has
        self.size = size

    def put(self, docs: np.ndarray, vectors: np.ndarray) -> None:
        """Give documents ``docs`` their vectors (unit float rows, one per document)."""
        if not len(docs):
            return
        self.grow(int(docs.max()) + 1)
        if not self.codes.flags.writeable:  # mapped from a file: copied at the first write
            self.codes, self.norms, self.has = self.codes.copy(), self.norms.copy(), self.has.copy()
        codes = codes_of(vectors)
        self.codes[docs], self.norms[docs], self.has[docs] = codes, code_norms(codes), True

    def keep(self, docs: np.ndarray) -> None:
        """Keep the rows of ``docs`` only, renumbered 0.. in that order (an index merge)."""
        docs = docs[docs < self.size]
        self.codes, self.norms, self.has = self.codes[docs], self.norms[docs], self.has[docs]
        self.size = len(docs)

    def missing(self, alive: np.ndarray) -> np.ndarray:
        """The documents alive in ``alive`` (one flag per document) without a vector."""
        self.grow(len(alive))
        return np.flatnonzero(alive & ~self.has[: len(alive)])

    def cosines(self, query: np.ndarray, docs: np.ndarray | None = None) -> np.ndarray:
        """Cosine of ``query``'s codes with every document's (or those of ``docs``); NaN: none."""
        codes = codes_of(np.asarray(query, dtype=np.float64)[None, :])[0]
        length = float(code_norms(codes[None, :])[0])
        rows = np.arange(self.size) if docs is None else docs
        inside = rows < self.size
        out = np.full(len(rows), np.nan)
        if docs is None:
            found = dots(self.codes[: self.size], codes)
        else:
            found = np.zeros(len(rows))
            found[inside] = dots(np.ascontiguousarray(self.codes[rows[inside]]), codes)
        held = np.zeros(len(rows), dtype=bool)
        held[inside] = self.has[rows[inside]]
        norms = np.where(held, self.norms[np.where(inside, rows, 0)], 1.0)
        scored = held & (norms > 0) & (length > 0)
        out[scored] = found[scored] / (length * norms[scored])
        return out

    def export(self, docs: np.ndarray) -> dict[str, np.ndarray]:
        """The rows of ``docs`` (an export's current documents, in its order) as named arrays."""
        self.grow(int(docs.max()) + 1 if len(docs) else 0)
        return {
            "codes": np.ascontiguousarray(self.codes[docs]),
            "norms": np.ascontiguousarray(self.norms[docs]),
            "has": np.ascontiguousarray(self.has[docs]),
        }

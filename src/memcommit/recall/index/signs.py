"""Sign codes of dense rows and the Hamming stage that picks the rows worth an exact score.

A row's sign code is one bit per dimension (its int8 code above 0), packed and
padded to whole 64-bit words: 48 bytes for 384 dims, an eighth of the int8
codes. The Hamming distance of two sign codes counts the dimensions whose signs
differ; for unit vectors it falls as the angle between them narrows
(random-hyperplane hashing, Charikar 2002), so the rows nearest the query by
Hamming are likely, not certain, to hold its nearest rows by cosine.
`best` returns the ``count`` nearest, ties by document number: an integer
ranking, the same on every host and for every order the rows were put in.
"""

from __future__ import annotations

import numpy as np

#: Rows whose Hamming distances are summed per numpy pass (bounds the temporary arrays).
CHUNK = 65_536

try:  # a popcount kernel over packed bits, several times faster than numpy's passes
    import simsimd as _simsimd
except ImportError:  # pragma: no cover - numpy counts the same bits, slower
    _simsimd = None  # type: ignore[assignment]


def width(dims: int) -> int:
    """Bytes of one sign code: ``dims`` bits rounded up to whole 64-bit words."""
    return -(-dims // 64) * 8


def signs_of(codes: np.ndarray) -> np.ndarray:
    """The sign codes of int8 code rows (uint8, `width` bytes a row; a zero row is all 0)."""
    rows, dims = codes.shape
    packed = np.packbits(codes > 0, axis=1)
    out = np.zeros((rows, width(dims)), dtype=np.uint8)
    out[:, : packed.shape[1]] = packed
    return out


def distances(signs: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Hamming distance of every sign row to ``query``'s sign code (uint16; exact either way)."""
    if not len(signs):
        return np.zeros(0, dtype=np.uint16)
    if _simsimd is not None:  # counted as integers, written straight as uint16
        # (simsimd's stubs name float outputs only; its kernel writes uint16 as asked)
        found = _simsimd.hamming(query, signs, "bin8", out_dtype="uint16")  # type: ignore[arg-type]
        return np.asarray(found).reshape(-1)
    words = np.ascontiguousarray(query).view(np.uint64)
    out = np.empty(len(signs), dtype=np.uint16)
    for start in range(0, len(signs), CHUNK):
        block = np.ascontiguousarray(signs[start : start + CHUNK]).view(np.uint64)
        count = np.bitwise_count(block[:, 0] ^ words[0]).astype(np.uint16)
        for word in range(1, len(words)):  # a column at a time: faster than sum(axis=1)
            count += np.bitwise_count(block[:, word] ^ words[word])
        out[start : start + len(block)] = count
    return out


def best(found: np.ndarray, eligible: np.ndarray | None, count: int) -> np.ndarray:
    """The ``count`` eligible rows of least distance ``found``, ties by row; ascending rows.

    ``eligible`` None: every row is. Distances are small integers, so the cut is
    found by counting (a histogram), not by sorting: every row below the cut's
    distance, then the first rows at it, in one pass over the rows.
    """
    total = len(found) if eligible is None else int(np.count_nonzero(eligible))
    if total <= count:
        return np.arange(len(found)) if eligible is None else np.flatnonzero(eligible)
    counted = found.astype(np.uint16, copy=False)
    if eligible is not None and total < len(found):  # beyond every distance: never reached
        counted = np.where(eligible, counted, np.iinfo(np.uint16).max).astype(np.uint16)
    cut = int(np.searchsorted(np.cumsum(np.bincount(counted)), count))
    picked = np.flatnonzero(counted <= cut)
    if len(picked) > count:  # the last rows at the cut are one too many: dropped
        at = np.flatnonzero(counted[picked] == cut)
        picked = np.delete(picked, at[len(at) - (len(picked) - count) :])
    return picked

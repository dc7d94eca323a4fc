"""Checking what an embedder returned, and vectors as the bytes a store keeps.

A provider's output is never trusted: `embedded` runs an embedder and checks the
shape, the values and the norm before anything is stored or ranked; `answer`
turns a provider's lists into a matrix first, refusing what is not rows of
numbers. Stored vectors are little-endian float32, ``dims * 4`` bytes, the same
on every backend and host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memcommit.embedding.protocol import KINDS, Embedder, Kind
from memcommit.errors import EmbedderError, InvalidInput

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: How far a row's norm may be from 1 before the embedder is called wrong.
NORM_TOLERANCE = 1e-3


def unit_rows(matrix: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """``matrix`` as C-contiguous float32 with every nonzero row scaled to unit length.

    Scaled in float64, each row by its largest value first, so a row of huge
    (1e38) or tiny (1e-45) numbers keeps its direction instead of overflowing
    or vanishing on the way to its norm.
    """
    import numpy as np

    out = np.array(matrix, dtype=np.float64)
    largest = np.abs(out).max(axis=1, keepdims=True, initial=0.0)
    np.divide(out, largest, out=out, where=largest > 0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return np.ascontiguousarray(out, dtype=np.float32)


def answer(name: str, rows: Any) -> npt.NDArray[np.float64]:
    """A provider's answer given as lists (JSON, LangChain) as a float64 matrix, or EmbedderError.

    It must be rows of one length, each of at least one number a float holds: ragged
    rows, text, None, rows of bools or an int like ``10**400`` are ``values``, an
    answer that is no list of rows is ``rows``, rows of no values are ``dims``. How many rows,
    of what size, finite and of unit length is `embedded`'s to check, as for any
    embedder's answer.
    """
    import numpy as np

    try:
        matrix = np.asarray(rows)
    except (ValueError, TypeError, OverflowError) as exc:  # rows of different lengths
        raise EmbedderError(
            name, "values", type(rows).__name__, f"not rows of numbers: {exc}"
        ) from exc
    if matrix.ndim != 2:
        raise EmbedderError(name, "rows", matrix.shape, "must be a list of rows of numbers")
    if matrix.dtype.kind not in "iuf":  # text, None, bools, ints past int64: no float of them
        raise EmbedderError(name, "values", str(matrix.dtype), "must be numbers a float holds")
    if matrix.shape[1] == 0:
        raise EmbedderError(name, "dims", 0, "the vectors hold no values")
    return matrix.astype(np.float64, copy=False)


def embedded(embedder: Embedder, texts: Sequence[str], kind: Kind) -> npt.NDArray[np.float32]:
    """``embedder.embed(texts, kind=kind)``, checked: the shape, finite values, unit rows.

    A wrong answer is `EmbedderError` naming what was wrong (``dims``, ``rows``,
    ``values``, ``norm``), so nothing wrong reaches a store or a ranking.
    """
    import numpy as np

    if kind not in KINDS:
        raise InvalidInput("kind", kind, f"must be one of {', '.join(KINDS)}")
    if not texts:
        return np.zeros((0, embedder.dims), dtype=np.float32)
    got = embedder.embed(list(texts), kind=kind)
    name = embedder.name
    if getattr(got, "ndim", None) != 2 or got.shape[1] != embedder.dims:
        shape = getattr(got, "shape", type(got).__name__)
        raise EmbedderError(name, "dims", shape, f"expected rows of {embedder.dims} values")
    if got.shape[0] != len(texts):
        raise EmbedderError(name, "rows", got.shape[0], f"expected {len(texts)}, one per text")
    matrix = np.ascontiguousarray(got, dtype=np.float32)
    if not np.isfinite(matrix).all():
        raise EmbedderError(name, "values", "non-finite", "a vector holds NaN or infinity")
    norms = np.linalg.norm(matrix, axis=1)
    off = np.abs(norms - 1.0) > NORM_TOLERANCE
    if off.any():
        first = float(norms[off.argmax()])
        raise EmbedderError(name, "norm", round(first, 6), "rows must have unit L2 norm")
    return matrix


def to_bytes(vector: npt.NDArray[np.float32]) -> bytes:
    """One vector as the bytes a store keeps (little-endian float32)."""
    import numpy as np

    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_bytes(blobs: Sequence[bytes], dims: int) -> npt.NDArray[np.float32]:
    """Stored vectors back as one ``(len(blobs), dims)`` float32 matrix."""
    import numpy as np

    if not blobs:
        return np.zeros((0, dims), dtype=np.float32)
    flat = np.frombuffer(b"".join(blobs), dtype="<f4")
    return flat.reshape(len(blobs), dims).astype(np.float32, copy=False)

"""Vectors an embedder computed, kept on disk so a benchmark's rerun embeds nothing again.

An offline CPU model encodes a few texts a second: LoCoMo's and BEAM's turns
take tens of minutes once, and no time at all the second run. The cache is
one append-only file per embedder (``<root>/<name hash>.vectors``, the name
in its first line), each record the SHA-256 of (role, text) then the vector in
float32; a record cut short by a killed run is ignored, so the cache resumes
where it stopped. Keys are hashes, never the text, and the cache lives outside
the repository (default ``~/.cache/memcommit/bench-vectors``): evaluation data
is never copied into it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_ROOT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memcommit"
_DIGEST = 32


def _key(role: str, text: str) -> bytes:
    return hashlib.sha256(role.encode() + b"\0" + text.encode()).digest()


class VectorCache:
    """The vectors of one embedder (``name``, ``dims``), by role ("query", "passage") and text."""

    def __init__(self, name: str, dims: int, root: Path = DEFAULT_ROOT / "bench-vectors") -> None:
        self.name, self.dims = name, dims
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / (hashlib.sha256(name.encode()).hexdigest()[:24] + ".vectors")
        self._found: dict[bytes, np.ndarray] = {}
        self._head = (name + "\n").encode()
        if self.path.exists():
            self._read()
        else:
            self.path.write_bytes(self._head)

    def _read(self) -> None:
        data = self.path.read_bytes()
        if not data.startswith(self._head):
            raise ValueError(f"{self.path} holds another embedder's vectors")
        size = _DIGEST + 4 * self.dims
        body = data[len(self._head) :]
        whole = len(body) // size
        for n in range(whole):
            record = body[n * size : (n + 1) * size]
            self._found[record[:_DIGEST]] = np.frombuffer(record[_DIGEST:], dtype="<f4")

    def __len__(self) -> int:
        return len(self._found)

    def missing(self, role: str, texts: Sequence[str]) -> list[int]:
        """Positions of ``texts`` whose vector is not cached yet."""
        return [i for i, text in enumerate(texts) if _key(role, text) not in self._found]

    def get(self, role: str, texts: Sequence[str]) -> np.ndarray:
        """The cached vectors of ``texts`` (every one must be cached), one row each."""
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._found[_key(role, text)]
        return out

    def put(self, role: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Keep ``vectors`` (one row per text), appended to the file at once."""
        rows = np.asarray(vectors, dtype="<f4").reshape(len(texts), self.dims)
        with open(self.path, "ab") as out:
            for text, row in zip(texts, rows, strict=True):
                key = _key(role, text)
                if key not in self._found:
                    out.write(key + row.tobytes())
                    self._found[key] = row.copy()


class CachedEmbedder:
    """An embedder whose vectors come from a `VectorCache` when it has them.

    Same name and dims as ``inner``, so a store keeps its vectors under the
    model's own name; only the texts the cache lacks reach the model.
    """

    def __init__(self, inner: Any, root: Path = DEFAULT_ROOT / "bench-vectors") -> None:
        self.inner = inner
        self.cache = VectorCache(inner.name, inner.dims, root)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dims(self) -> int:
        return int(self.inner.dims)

    def embed(self, texts: Sequence[str], *, kind: str = "passage") -> np.ndarray:
        texts = list(texts)
        todo = sorted({texts[i] for i in self.cache.missing(kind, texts)})
        if todo:
            self.cache.put(kind, todo, self.inner.embed(todo, kind=kind))
        found = self.cache.get(kind, texts)
        norms = np.linalg.norm(found, axis=1, keepdims=True)
        return np.divide(found, norms, out=found, where=norms > 0)

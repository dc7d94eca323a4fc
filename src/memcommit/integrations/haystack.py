"""A Haystack ``DocumentStore`` whose documents are memcommit memories, and a recall retriever.

    import memcommit
    from memcommit.integrations.haystack import MemcommitDocumentStore, MemcommitRetriever

    docs = MemcommitDocumentStore("memory.db", tenant="acme", index="handbook")
    docs.write_documents([Document(content="Deploys run on Tuesdays.")])
    retriever = MemcommitRetriever(docs, top_k=3)
    retriever.run(query="when do deploys run")     # {"documents": [...], "context": Context}

Each document is a memory of one scope (the store's ``index``) of one tenant:
its key is the document id, its content the document's text (what recall
reads), and ``metadata["haystack"]`` the document as Haystack serializes it
(meta, embedding, blob), so a document reads back equal to the one written.
Any other memory of the index (one written through MCP or the API, whatever its
metadata says) is no document: every read leaves it out and no write touches it.
Overwriting writes a new version of the same memory; deleting invalidates it
(history keeps every version). Filters are Haystack's filter language,
evaluated by Haystack's own `haystack.utils.filters.document_matches_filter`
over the decoded documents, so they mean exactly what they mean for Haystack's
in-memory store; nothing of a filter is ever written into SQL. Needs
``memcommit[haystack]``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memcommit.errors import InvalidInput, MissingExtra

try:
    from haystack import Document, component, default_from_dict, default_to_dict
    from haystack.document_stores.errors import DuplicateDocumentError
    from haystack.document_stores.types import DuplicatePolicy
    from haystack.errors import FilterError
    from haystack.utils.filters import document_matches_filter
except ImportError as exc:
    raise MissingExtra(__name__, "haystack", exc.name) from exc

import memcommit
from memcommit.integrations import marks, opened, recall_arguments, recall_own
from memcommit.model import Memory
from memcommit.recall import Context, RecallOptions
from memcommit.recall import recall as run_recall

#: The metadata key of a memory's document (Haystack's own dict of it).
MARK = "haystack"
#: The scope recall reads, which no recall option may change.
_BOUND = "the index's scope"
#: The shape of a document's mark: Haystack's ``Document.to_dict(flatten=False)``.
_REQUIRED: marks.Shape = {"id": str, "meta": Mapping}
_OPTIONAL: marks.Shape = {
    "content": str,
    "blob": Mapping,
    "score": (int, float),
    "embedding": list,
    "sparse_embedding": Mapping,
}


class InvalidFilter(InvalidInput, FilterError):
    """A filter Haystack's filter language refuses: a memcommit InvalidInput and a FilterError."""


class DuplicateDocument(InvalidInput, DuplicateDocumentError):
    """A document id that already exists, written with `DuplicatePolicy.FAIL`."""


def _meta_key(field: str) -> str:
    """A metadata field name as Haystack accepts it, with or without "meta."."""
    if not isinstance(field, str) or not field.strip():
        raise InvalidInput("metadata_field", field, "must be a non-empty field name")
    return field.removeprefix("meta.")


def _distinct(value: Any) -> tuple[str, str]:
    """A hashable identity of a JSON value that keeps 1, 1.0, "1" and True apart."""
    return type(value).__name__, json.dumps(value, sort_keys=True)


class MemcommitDocumentStore:
    """Haystack documents kept as memories of one scope (``index``) of one tenant.

    ``store`` is a `memcommit.Store`, or a path or ``postgresql://`` URL to open
    (with ``options`` for `memcommit.open`, e.g. ``{"schema": ...}``); only a
    store opened from a target can be serialized by `to_dict`. Writes with
    `DuplicatePolicy.NONE` fail on an existing id, as Haystack's in-memory store does.
    """

    def __init__(
        self,
        store: memcommit.Store | str | Path = "memcommit.db",
        *,
        tenant: str = "default",
        index: str = "documents",
        options: Mapping[str, Any] | None = None,
        kind: str = "fact",
        author: str = "haystack",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._store, self._target = opened(store, options)
        self._options = dict(options or {})
        self.view = self._store.tenant(tenant)
        self.tenant, self.index, self.kind, self.author = tenant, index, kind, author
        self.clock = clock

    # -- serialization (the DocumentStore protocol) --------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The store as Haystack serializes components: its target, tenant and index."""
        if self._target is None:
            raise InvalidInput(
                "store", self._store, "pass a path or URL (not a Store) to serialize this store"
            )
        return default_to_dict(
            self,
            store=self._target,
            options=self._options,
            tenant=self.tenant,
            index=self.index,
            kind=self.kind,
            author=self.author,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemcommitDocumentStore:
        """The store `to_dict` described (it opens the target again)."""
        made: MemcommitDocumentStore = default_from_dict(cls, data)
        return made

    # -- the DocumentStore protocol -------------------------------------------------

    def count_documents(self) -> int:
        """How many documents the index holds now."""
        return len(self._held())

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """The documents that match ``filters`` (all without), in the order first written."""
        return [document for _, document in self._matching(filters)]

    def write_documents(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """Write the documents in one commit; how many were written.

        An existing id is skipped (SKIP), written as a new version (OVERWRITE),
        or refused with `DuplicateDocument` before anything lands (FAIL, NONE).
        """
        documents = _documents(documents)
        if not isinstance(policy, DuplicatePolicy):
            raise InvalidInput("policy", policy, "must be a haystack DuplicatePolicy")
        if policy == DuplicatePolicy.NONE:
            policy = DuplicatePolicy.FAIL
        wanted: dict[str, Document] = {}
        for document in documents:
            if document.id in wanted and policy != DuplicatePolicy.OVERWRITE:
                if policy == DuplicatePolicy.FAIL:
                    raise DuplicateDocument("documents", document.id, "the id appears twice")
                continue
            wanted[document.id] = document
        if not wanted:
            return 0
        with self._commit(f"haystack: write {len(wanted)} document(s) to {self.index}") as tx:
            found = self._current(wanted)
            written = 0
            for doc_id, document in wanted.items():
                old = found.get(doc_id)
                if old is not None and policy == DuplicatePolicy.FAIL:
                    raise DuplicateDocument("documents", doc_id, "a document with this id exists")
                if old is not None and policy == DuplicatePolicy.SKIP:
                    continue
                fields = {"content": _text(document), "metadata": {MARK: _stored(document)}}
                if old is None:
                    tx.add(kind=self.kind, scope=self.index, key=doc_id, **fields)
                else:
                    tx.update(old.id, **fields)
                written += 1
        return written  # a block that changed nothing landed nothing

    def delete_documents(self, document_ids: list[str]) -> None:
        """Invalidate the documents with these ids (history keeps them); unknown ids are ignored."""
        ids = dict.fromkeys(map(str, _listed("document_ids", document_ids)))
        self._invalidate(lambda: self._current(ids).values(), "delete")

    # -- what Haystack's stores add beyond the protocol ------------------------------

    def delete_all_documents(self) -> None:
        """Invalidate every document of the index, in one commit."""
        self._invalidate(lambda: [memory for memory, _ in self._held()], "delete all")

    def delete_by_filter(self, filters: dict[str, Any]) -> int:
        """Invalidate the documents that match ``filters``; how many."""
        filters = _required(filters)
        return self._invalidate(
            lambda: [memory for memory, _ in self._matching(filters)], "delete by filter"
        )

    def update_by_filter(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """Merge ``meta`` into the meta of every matching document (a new version each).

        The documents are read and matched inside the commit, under the writers'
        lock: a document another writer changed since is updated as that writer
        left it (its write is never undone), and only if it still matches.
        """
        if not isinstance(meta, Mapping):
            raise InvalidInput("meta", meta, "must be a mapping of metadata fields")
        filters = _required(filters)
        with self._commit(f"haystack: update by filter in {self.index}") as tx:
            matched = self._matching(filters)
            tx.message = f"haystack: update {len(matched)} document(s) in {self.index}"
            for memory, document in matched:
                document.meta.update(meta)
                tx.update(memory.id, metadata={MARK: _stored(document)})
        return len(matched)  # none matching: the block changed nothing and landed nothing

    def count_documents_by_filter(self, filters: dict[str, Any]) -> int:
        """How many documents match ``filters``."""
        return len(self._matching(filters))

    def count_unique_metadata_by_filter(
        self, filters: dict[str, Any], metadata_fields: list[str]
    ) -> dict[str, int]:
        """For each field (named with or without "meta."), its distinct non-null values' count."""
        documents = self.filter_documents(filters)
        counts = {}
        for field in _listed("metadata_fields", metadata_fields):
            key = _meta_key(field)
            seen = {_distinct(d.meta[key]) for d in documents if d.meta.get(key) is not None}
            counts[key] = len(seen)
        return counts

    def get_metadata_fields_info(self) -> dict[str, dict[str, str]]:
        """Each metadata field of the documents and its type (keyword, int, float, boolean)."""
        types: dict[str, str] = {}
        for document in self.filter_documents():
            for key, value in document.meta.items():
                if value is not None:
                    types[key] = _type_name(value)
        return {key: {"type": name} for key, name in types.items()}

    def get_metadata_field_min_max(self, metadata_field: str) -> dict[str, Any]:
        """The least and greatest value of a field (None and None without comparable values)."""
        key = _meta_key(metadata_field)
        values = [
            d.meta[key]
            for d in self.filter_documents()
            if isinstance(d.meta.get(key), (int, float, str)) and not isinstance(d.meta[key], bool)
        ]
        try:
            return {"min": min(values), "max": max(values)} if values else _NO_RANGE
        except TypeError:  # numbers beside text: no order between them
            return _NO_RANGE

    def get_metadata_field_unique_values(
        self,
        metadata_field: str,
        search_term: str | None = None,
        from_: int = 0,
        size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        """One page of a field's distinct values (ordered by their text) and how many there are.

        ``search_term`` keeps the values whose text holds it, ignoring case.
        """
        key = _meta_key(metadata_field)
        for name, number in (("from_", from_), ("size", size)):
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise InvalidInput(name, number, "must be an int >= 0")
        values: dict[tuple[str, str], Any] = {}
        for document in self.filter_documents(filters):
            value = document.meta.get(key)
            if value is not None:
                values.setdefault(_distinct(value), value)
        if search_term:
            wanted = search_term.lower()
            values = {k: v for k, v in values.items() if wanted in str(v).lower()}
        ordered = sorted(values, key=lambda k: (str(values[k]), k[0]))
        return [values[k] for k in ordered[from_ : from_ + size]], len(ordered)

    # -- recall ---------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        top_k: int | None = 10,
        filters: dict[str, Any] | None = None,
        **recall_options: Any,
    ) -> tuple[list[Document], Context]:
        """The documents `memcommit.recall` selects for ``query``, scored, and its explanation.

        ``filters`` narrow the documents recall ranks (Haystack's filter language);
        ``top_k`` is recall's ``max_records``; ``recall_options`` go to recall as
        they are (``budget``, ``pools``, ``scorer``, ``recency_weight``, ...), but
        for ``scopes``, refused (`InvalidInput`): recall reads the index; a
        ``tenant`` other than the store's is refused too. Each document's
        ``score`` is recall's score of its memory. Memories of the index that are
        no documents are never ranked with filters, and recall's cap is raised
        past them without (`recall_own`): ``top_k`` documents when the index has them.
        """
        options = _recall_options(self, top_k, recall_options)
        if filters:
            candidates = [memory for memory, _ in self._matching(filters)]
            ctx = run_recall(candidates, query, options)
        else:
            ctx = recall_own(self.view, query, options, lambda m: _document(m) is not None)
        rows = ctx.explanation.page(0, len(ctx.selected), outcome="selected")
        found = []
        for row in rows:
            document = _document(row.memory)
            if document is not None:
                found.append(replace(document, score=row.score))
        return found, ctx

    # -- async (Haystack's AsyncDocumentStore): the same work on a worker thread ----

    async def count_documents_async(self) -> int:
        """`count_documents`, off the event loop."""
        return await asyncio.to_thread(self.count_documents)

    async def filter_documents_async(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """`filter_documents`, off the event loop."""
        return await asyncio.to_thread(self.filter_documents, filters)

    async def write_documents_async(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """`write_documents`, off the event loop."""
        return await asyncio.to_thread(self.write_documents, documents, policy)

    async def delete_documents_async(self, document_ids: list[str]) -> None:
        """`delete_documents`, off the event loop."""
        await asyncio.to_thread(self.delete_documents, document_ids)

    async def delete_all_documents_async(self) -> None:
        """`delete_all_documents`, off the event loop."""
        await asyncio.to_thread(self.delete_all_documents)

    async def delete_by_filter_async(self, filters: dict[str, Any]) -> int:
        """`delete_by_filter`, off the event loop."""
        return await asyncio.to_thread(self.delete_by_filter, filters)

    async def update_by_filter_async(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """`update_by_filter`, off the event loop."""
        return await asyncio.to_thread(self.update_by_filter, filters, meta)

    async def count_documents_by_filter_async(self, filters: dict[str, Any]) -> int:
        """`count_documents_by_filter`, off the event loop."""
        return await asyncio.to_thread(self.count_documents_by_filter, filters)

    async def count_unique_metadata_by_filter_async(
        self, filters: dict[str, Any], metadata_fields: list[str]
    ) -> dict[str, int]:
        """`count_unique_metadata_by_filter`, off the event loop."""
        return await asyncio.to_thread(
            self.count_unique_metadata_by_filter, filters, metadata_fields
        )

    async def get_metadata_fields_info_async(self) -> dict[str, dict[str, str]]:
        """`get_metadata_fields_info`, off the event loop."""
        return await asyncio.to_thread(self.get_metadata_fields_info)

    async def get_metadata_field_min_max_async(self, metadata_field: str) -> dict[str, Any]:
        """`get_metadata_field_min_max`, off the event loop."""
        return await asyncio.to_thread(self.get_metadata_field_min_max, metadata_field)

    async def get_metadata_field_unique_values_async(
        self,
        metadata_field: str,
        search_term: str | None = None,
        from_: int = 0,
        size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        """`get_metadata_field_unique_values`, off the event loop."""
        return await asyncio.to_thread(
            self.get_metadata_field_unique_values, metadata_field, search_term, from_, size, filters
        )

    # -- the work -------------------------------------------------------------------

    def _commit(self, message: str) -> Any:
        now = None if self.clock is None else self.clock()
        return self.view.commit(message=message, author=self.author, now=now)

    def _held(self) -> list[tuple[Memory, Document]]:
        """The index's documents that hold now, each with its memory (other memories left out)."""
        found = self.view.find(scopes=[self.index], live=False)
        now = None if self.clock is None else self.clock()
        held = [(m, _document(m)) for m in found if m.holds(now)]
        return [(memory, document) for memory, document in held if document is not None]

    def _current(self, ids: Mapping[str, Any]) -> dict[str, Memory]:
        return {m.key: m for m, _ in self._held() if m.key in ids}

    def _matching(self, filters: dict[str, Any] | None) -> list[tuple[Memory, Document]]:
        decoded = self._held()
        if not filters:
            return decoded
        if not isinstance(filters, Mapping) or not ({"operator", "conditions"} & set(filters)):
            raise InvalidFilter("filters", filters, "needs an 'operator' (and 'conditions')")
        try:
            return [pair for pair in decoded if document_matches_filter(dict(filters), pair[1])]
        except FilterError as exc:
            raise InvalidFilter("filters", filters, str(exc)) from exc

    def _invalidate(self, pick: Callable[[], Iterable[Memory]], what: str) -> int:
        """Invalidate the documents ``pick`` reads inside the commit; how many.

        Read under the writers' lock, they are the ones that hold as the commit
        lands: one another writer deleted (or wrote anew) since is not
        invalidated a second time, and its new version is the one deleted.
        """
        with self._commit(f"haystack: {what} in {self.index}") as tx:
            memories = list(pick())
            tx.message = f"haystack: {what} {len(memories)} document(s) in {self.index}"
            for memory in memories:
                tx.invalidate(memory.id)
        return len(memories)


_NO_RANGE: dict[str, Any] = {"min": None, "max": None}


def _recall_options(
    store: MemcommitDocumentStore, top_k: int | None, given: Mapping[str, Any]
) -> RecallOptions:
    """Recall's options for the store's index: ``given`` checked, and the store's own tenant.

    ``scopes`` is refused (the index is the scope), as is another ``tenant``,
    with or without filters, as a tenant view refuses one.
    """
    options = RecallOptions(
        **{
            "max_records": top_k,
            "tiers": None,
            "latest_per_key": False,  # the key is the document id, which other indexes share
            "now": None if store.clock is None else store.clock(),
            **recall_arguments(given, bound=_BOUND),
        }
    )
    if options.tenant not in (None, store.tenant):
        raise InvalidInput(
            "tenant", options.tenant, f"this store reads only tenant {store.tenant!r}"
        )
    return options.replace(tenant=store.tenant, scopes=(store.index,))


def _documents(documents: Any) -> list[Document]:
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Iterable):
        raise InvalidInput("documents", documents, "must be a list of haystack Documents")
    checked: list[Document] = []
    for document in documents:
        if not isinstance(document, Document):
            raise InvalidInput("documents", document, "each item must be a haystack Document")
        checked.append(document)
    return checked


def _listed(field: str, values: Any) -> list[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise InvalidInput(field, values, "must be a list")
    return list(values)


def _required(filters: Any) -> dict[str, Any]:
    if not filters:
        raise InvalidFilter("filters", filters, "name the documents: an empty filter is refused")
    return dict(filters)


def _text(document: Document) -> str:
    """What recall reads of a document: its text, or its id when it has none (a blob)."""
    content = document.content
    return content if isinstance(content, str) and content.strip() else f"document {document.id}"


def _stored(document: Document) -> dict[str, Any]:
    stored = document.to_dict(flatten=False)
    stored["score"] = None  # a retrieval's score is not part of the document
    return stored


def _document(memory: Memory) -> Document | None:
    """The document ``memory`` holds if it has the shape this store writes, else None.

    Any memory of the index may carry metadata named "haystack" (one written
    through MCP or the API, say): only a mark of the store's shape, its id the
    memory's key, that Haystack decodes, makes it a document.
    """
    mark = marks.mark_of(memory, MARK, key="id", required=_REQUIRED, optional=_OPTIONAL)
    if mark is None or not isinstance((mark.get("blob") or {"data": []}).get("data"), list):
        return None  # (a blob's data is a list of bytes: a number would allocate that many)
    try:
        return Document.from_dict(dict(mark))
    except (KeyError, TypeError, ValueError):  # a blob or sparse embedding Haystack refuses
        return None


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    return "float" if isinstance(value, float) else "keyword"


@component
class MemcommitRetriever:
    """A Haystack component: the documents recall selects for a query, and recall's explanation.

    Outputs ``documents`` (scored by recall, best first) and ``context`` (the
    `memcommit.recall` Context: every document's row, with the reason each
    left-out one was excluded).
    """

    def __init__(
        self,
        document_store: MemcommitDocumentStore,
        *,
        top_k: int = 10,
        filters: dict[str, Any] | None = None,
        recall_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(document_store, MemcommitDocumentStore):
            raise InvalidInput("document_store", document_store, "must be a MemcommitDocumentStore")
        self.document_store, self.top_k, self.filters = document_store, top_k, filters
        self.recall_options = recall_arguments(recall_options or {}, bound=_BOUND)

    @component.output_types(documents=list[Document], context=Context)
    def run(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None
    ) -> dict[str, Any]:
        """Recall for ``query``; ``filters`` and ``top_k`` override the component's own."""
        documents, ctx = self.document_store.recall(
            query,
            top_k=self.top_k if top_k is None else top_k,
            filters=self.filters if filters is None else filters,
            **self.recall_options,
        )
        return {"documents": documents, "context": ctx}


__all__: Sequence[str] = (
    "DuplicateDocument",
    "InvalidFilter",
    "MemcommitDocumentStore",
    "MemcommitRetriever",
)

"""memcommit inside agent frameworks: one module per framework, each an optional extra.

    memcommit.integrations.langgraph      MemcommitStore, AsyncMemcommitStore (BaseStore)
    memcommit.integrations.langchain      MemcommitRetriever, MemcommitVectorStore
    memcommit.integrations.openai_agents  MemcommitSession, recall_instructions
    memcommit.integrations.haystack       MemcommitDocumentStore, MemcommitRetriever
    memcommit.integrations.autogen        MemcommitMemory (autogen-core's Memory)
    memcommit.integrations.llama_index    MemcommitChatStore, MemcommitRecallBlock
    memcommit.integrations.google_adk     MemcommitMemoryService (ADK's BaseMemoryService)
    memcommit.integrations.crewai         MemcommitStorage (CrewAI's memory StorageBackend)

Each module imports its framework (``pip install "memcommit[langgraph]"`` and so on);
this package and ``import memcommit`` import none of them, and a module whose
framework is missing raises `memcommit.errors.MissingExtra` naming the extra.
`namespaces`, `filters` and `marks` are the framework-free rules the modules share,
as are `needs`, `opened`, `recall_arguments` and `recall_own` below.
docs/integrations.md has the mapping tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import memcommit
from memcommit.errors import InvalidInput, MissingExtra
from memcommit.model import Memory

if TYPE_CHECKING:
    from memcommit.recall import Context, RecallOptions


@contextmanager
def needs(extra: str, module: str) -> Iterator[None]:
    """Around ``module``'s framework imports: a missing one is `MissingExtra` naming ``extra``."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise MissingExtra(module, extra, exc.name) from exc


def opened(
    store: memcommit.Store | str | Path, options: Mapping[str, Any] | None
) -> tuple[memcommit.Store, str | None]:
    """An adapter's store: the one given, or one opened from a path or URL (then also returned)."""
    if isinstance(store, memcommit.Store):
        return store, None
    if isinstance(store, (str, Path)):
        return memcommit.open(store, **dict(options or {})), str(store)
    raise InvalidInput("store", store, "must be a memcommit.Store, a path or a URL")


def recall_arguments(options: Mapping[str, Any], *, bound: str) -> dict[str, Any]:
    """``options`` checked as the recall arguments an adapter passes on to `memcommit.recall`.

    Each must be a `RecallOptions` field, and ``scopes`` is refused: an adapter
    that recalls from one scope (``bound``: an ADK user, an AutoGen memory's
    name, a Haystack index) owns that binding as a tenant view owns its tenant,
    and a ``scopes`` of the caller's would reach other users' memories.
    """
    from memcommit.recall import RecallOptions  # the recall layer loads when first used

    fields = {field.name for field in dataclasses.fields(RecallOptions)}
    for name, value in options.items():
        if name == "scopes":
            raise InvalidInput(name, value, f"is bound by the adapter: it recalls {bound} only")
        if name not in fields:
            raise InvalidInput(name, value, "is not a memcommit.recall argument")
    return dict(options)


def recall_own(
    source: Any, query: str, options: RecallOptions, own: Callable[[Memory], bool]
) -> Context:
    """Recall whose selection holds ``options.max_records`` of the adapter's own memories,
    when that many are there to select.

    Any memory of an adapter's scope may be one it did not write (through MCP or
    the API), which it drops from what recall selects; at the cap, those would
    leave the adapter fewer of its own than asked. So while the memories selected
    under the cap are fewer of its own than the cap, recall runs again with a cap
    twice as high, and once enough are found, once more with the cap ending at
    the last own memory asked for: recall's ranking is the same at every cap, so
    that selection is the first one's with the foreign memories counted on top.
    Always-scope memories are outside every cap and not counted. With ``pools``
    the caps are the pools' own, and recall runs once.
    """
    from memcommit.recall import recall  # the recall layer loads when first used

    if options.now is None:  # every run ranks at one moment
        options = options.replace(now=datetime.now(timezone.utc))
    wanted = options.max_records
    ctx = recall(source, query, options)
    if not wanted or options.pools is not None:
        return ctx
    cap = wanted
    while True:
        ranked = [m for m in ctx.selected if not m.always]
        mine = [n for n, memory in enumerate(ranked, 1) if own(memory)]
        if len(mine) >= wanted:
            enough = mine[wanted - 1]  # the cap that ends at the last one asked for
            if enough < cap:
                ctx = recall(source, query, options.replace(max_records=enough))
            return ctx
        if len(ranked) < cap:  # recall selected all it could
            return ctx
        cap *= 2
        ctx = recall(source, query, options.replace(max_records=cap))

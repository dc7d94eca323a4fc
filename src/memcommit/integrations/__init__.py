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
`namespaces` and `filters` are the framework-free rules the modules share, as are
`needs`, `opened` and `recall_arguments` below.
docs/integrations.md has the mapping tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import memcommit
from memcommit.errors import InvalidInput, MissingExtra


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

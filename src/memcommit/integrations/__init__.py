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
`namespaces` and `filters` are the framework-free rules the modules share.
docs/integrations.md has the mapping tables.
"""

from __future__ import annotations

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

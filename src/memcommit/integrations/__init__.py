"""memcommit inside agent frameworks: one module per framework, each an optional extra.

    memcommit.integrations.langgraph      MemcommitStore, AsyncMemcommitStore (BaseStore)
    memcommit.integrations.langchain      MemcommitRetriever, MemcommitVectorStore
    memcommit.integrations.openai_agents  MemcommitSession, recall_instructions
    memcommit.integrations.haystack       MemcommitDocumentStore, MemcommitRetriever
    memcommit.integrations.autogen        MemcommitMemory (autogen-core's Memory)
    memcommit.integrations.llama_index    MemcommitChatStore, MemcommitRecallBlock

Each module imports its framework (``pip install "memcommit[langgraph]"`` and so on);
this package and ``import memcommit`` import none of them, and a module whose
framework is missing raises `memcommit.errors.MissingExtra` naming the extra.
`namespaces` and `filters` are the framework-free rules the modules share.
docs/integrations.md has the mapping tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memcommit.errors import MissingExtra


@contextmanager
def needs(extra: str, module: str) -> Iterator[None]:
    """Around ``module``'s framework imports: a missing one is `MissingExtra` naming ``extra``."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise MissingExtra(module, extra, exc.name) from exc

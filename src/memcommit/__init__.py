"""memcommit: the memory of an AI agent.

A store where every change is an atomic, auditable commit; a working memory that
behaves like a cache over it; and a recall layer that packs a bounded context
with reserved budgets, corrections that always load, and a reason for every
memory left out.

    import memcommit
    store = memcommit.open("memcommit.db")
    with store.commit(message="learned", author="agent") as tx:
        tx.add("Deploys happen on weekdays after 10:00.", kind="fact", tenant="acme")
    print(store.recall("when do deploys happen", tenant="acme").render())

``AllOf`` and ``AnyOf`` combine promotion policies; ``Every`` combines
compaction's trace policies.

Importing the package is cheap: the model and the store (pure Python) load now;
recall, tiers and compaction, and numpy with them, load when one of their names
is first used (PEP 562 ``__getattr__``). That first use may come from many
threads at once: each layer is loaded by one thread while the others wait for
it whole (`_load`), never handed a module still being initialized.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memcommit import errors
from memcommit.model import KINDS, LIVE_TIERS, STORES, TIERS, Change, Commit, Memory, Trace, Usage
from memcommit.store import Store, StoreLike, TenantView, ViewLike, open
from memcommit.store.operations import StoreApi

if TYPE_CHECKING:
    from memcommit.recall import Context, RecallOptions

__version__ = "0.1.0"

#: Where each public name that is not loaded at import time lives.
_LAZY = {
    **dict.fromkeys(
        [
            "Compactor",
            "Every",
            "FinishedTraces",
            "KeepFailed",
            "OlderThan",
            "UnderPressure",
            "outline",
        ],
        "memcommit.compaction",
    ),
    **dict.fromkeys(
        ["Context", "Pool", "RecallOptions", "Tokens", "Words", "recall"], "memcommit.recall"
    ),
    **dict.fromkeys(
        [
            "ARC",
            "FIFO",
            "LFU",
            "LRU",
            "TTL",
            "AccessCount",
            "AllOf",
            "AnyOf",
            "Forgetting",
            "ImportanceAtLeast",
            "KindIn",
            "Learned",
            "Never",
            "Scored",
            "TieredMemory",
            "TwoQueue",
            "simulate",
        ],
        "memcommit.tiers",
    ),
}


#: Layers reached as attributes (``memcommit.tiers.LRU``), imported when first reached.
_LAYERS = ("compaction", "tiers")


#: Held while a layer loads. Python's import system, seeing two threads import modules of
#: one package in different orders (say ``recall`` for a recall, ``recall.index.live`` for a
#: purge's hook), breaks the deadlock it fears by handing one of them a module still being
#: initialized: ``ImportError: cannot import name ... from partially initialized module``.
_loading = threading.RLock()
_loaded: set[str] = set()


def _load(module: str) -> types.ModuleType:
    """``module``, imported by one thread at a time: the others wait until it is whole."""
    if module not in _loaded:
        with _loading:
            importlib.import_module(module)
            _loaded.add(module)
    return sys.modules[module]


def __getattr__(name: str) -> Any:
    """Load a public name's layer the first time the name is asked for, and keep the value."""
    if name in _LAYERS:
        return _load(f"{__name__}.{name}")
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_load(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_LAYERS})


class _Package(types.ModuleType):
    """This package's module type: ``memcommit.recall`` stays the function.

    When the ``memcommit.recall`` subpackage first loads, the import system sets it
    as this package's ``recall`` attribute; eagerly imported, the function was bound
    after that and won. Loaded lazily, the subpackage may arrive later, so the
    binding is refused here and ``__getattr__`` supplies the function.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "recall" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _recall(view: ViewLike, query: str, options: RecallOptions | None = None, **kw: Any) -> Context:
    """``store.recall(...)``: loads the recall layer on the first call."""
    recall: Callable[..., Context] = _load("memcommit.recall.pipeline.run").recall
    return recall(view, query, options, **kw)


def _erase_purged(store: Store, commit: Commit) -> None:
    """After a purge, recall's snapshots on disk forget it too (loading the recall layer then)."""
    _load("memcommit.recall.index.live").erase_purged(store, commit)


def _forget_purged_calls(store: Store, purged: list[tuple[str, str]]) -> None:
    """In a purge's commit, the MCP tools' stored calls that wrote it keep no digest of its text."""
    _load("memcommit.interfaces.request_ids").forget_purged(store, purged)


def _keep_snapshots(store: Store, commit: Commit) -> None:
    """After a commit, a tenant it brought far past its snapshot has the snapshot written again."""
    _load("memcommit.upkeep").after_commit(store, commit)


# ``store.recall(...)`` and ``view.recall(...)``: the store sits below recall and never imports
# it, so the one call that goes up is connected here, where both layers are known.
StoreApi.connect_recall(_recall)
Store.connect_purge(_erase_purged)
Store.connect_purging(_forget_purged_calls)
Store.connect_landed(_keep_snapshots)

__all__ = [
    "ARC",
    "FIFO",
    "KINDS",
    "LFU",
    "LIVE_TIERS",
    "LRU",
    "STORES",
    "TIERS",
    "TTL",
    "AccessCount",
    "AllOf",
    "AnyOf",
    "Change",
    "Commit",
    "Compactor",
    "Context",
    "Every",
    "FinishedTraces",
    "Forgetting",
    "ImportanceAtLeast",
    "KeepFailed",
    "KindIn",
    "Learned",
    "Memory",
    "Never",
    "OlderThan",
    "Pool",
    "RecallOptions",
    "Scored",
    "Store",
    "StoreLike",
    "TenantView",
    "TieredMemory",
    "Tokens",
    "Trace",
    "TwoQueue",
    "UnderPressure",
    "Usage",
    "ViewLike",
    "Words",
    "__version__",
    "errors",
    "open",
    "outline",
    "recall",
    "simulate",
]

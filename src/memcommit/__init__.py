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
"""

from memcommit import errors
from memcommit.compaction import (
    Compactor,
    Every,
    FinishedTraces,
    KeepFailed,
    OlderThan,
    UnderPressure,
    outline,
)
from memcommit.model import KINDS, STORES, TIERS, Change, Commit, Memory, Trace, Usage
from memcommit.recall import Context, Pool, Tokens, Words, recall
from memcommit.recall.sources import erase_purged
from memcommit.store import Store, StoreLike, TenantView, ViewLike, open
from memcommit.store.operations import StoreApi
from memcommit.tiers import (
    ARC,
    FIFO,
    LFU,
    LRU,
    TTL,
    AccessCount,
    AllOf,
    AnyOf,
    Forgetting,
    ImportanceAtLeast,
    KindIn,
    Learned,
    Never,
    Scored,
    TieredMemory,
    TwoQueue,
    simulate,
)

__version__ = "0.1.0"

# ``store.recall(...)`` and ``view.recall(...)``: the store sits below recall and never imports
# it, so the one call that goes up is connected here, where both layers are known.
StoreApi.connect_recall(recall)
StoreApi.connect_purge(erase_purged)

__all__ = [
    "ARC",
    "FIFO",
    "KINDS",
    "LFU",
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

"""memcommit: the memory of an AI agent.

A store where every change is an atomic, auditable commit; a working memory that
behaves like a cache over it; and a recall layer that packs a bounded context
with reserved budgets, corrections that always load, and a reason for every
memory left out.
"""

from memcommit import errors
from memcommit.model import KINDS, STORES, TIERS, Change, Commit, Memory, Trace, Usage
from memcommit.store import Store, TenantView, open

__version__ = "0.1.0"

__all__ = [
    "KINDS",
    "STORES",
    "TIERS",
    "Change",
    "Commit",
    "Memory",
    "Store",
    "TenantView",
    "Trace",
    "Usage",
    "__version__",
    "errors",
    "open",
]

try:  # compaction: guarded so `import memcommit` survives a part that is mid-build
    from memcommit.compaction import (
        Compactor,
        FinishedTraces,
        KeepFailed,
        OlderThan,
        UnderPressure,
        outline,
    )
except ImportError:  # pragma: no cover
    pass
else:
    __all__ += [
        "Compactor",
        "FinishedTraces",
        "KeepFailed",
        "OlderThan",
        "UnderPressure",
        "outline",
    ]

try:  # recall: guarded so `import memcommit` survives a part that is mid-build
    from memcommit.recall import Context, Tokens, Words, recall
except ImportError:  # pragma: no cover
    pass
else:
    __all__ += ["Context", "Tokens", "Words", "recall"]

try:  # tiers: guarded so `import memcommit` survives a part that is mid-build
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
except ImportError:  # pragma: no cover
    pass
else:
    __all__ += [
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
    ]

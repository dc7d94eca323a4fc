"""The store: memories changed only by atomic commits, with history, traces and tenants.

``memcommit.open(target)`` picks a backend by the target's scheme (a SQLite
path by default) and returns a `Store`. `StoreLike`, `ViewLike` and
`TenantViewLike` are the shapes to annotate with in code that takes a store or
a tenant view. `Store.verify` walks the hash chain; `Store.witness` is the
head to keep outside the store (docs/verification.md).
"""

from memcommit.store.backends import register
from memcommit.store.backends.base import Backend, Batch, MemoryQuery, TraceRow
from memcommit.store.backends.problems import Problem
from memcommit.store.check import CheckReport
from memcommit.store.embeddings import EmbedReport, StoredVectors
from memcommit.store.protocols import CommitRef, StoreLike, TenantViewLike, ViewLike
from memcommit.store.store import DEFAULT_RECALL_CACHE_BYTES, Store, open
from memcommit.store.tenant import TenantView
from memcommit.store.transaction import Transaction
from memcommit.store.verify import VerifyReport, Witness

__all__ = [
    "DEFAULT_RECALL_CACHE_BYTES",
    "Backend",
    "Batch",
    "CheckReport",
    "CommitRef",
    "EmbedReport",
    "MemoryQuery",
    "Problem",
    "Store",
    "StoreLike",
    "StoredVectors",
    "TenantView",
    "TenantViewLike",
    "TraceRow",
    "Transaction",
    "VerifyReport",
    "ViewLike",
    "Witness",
    "open",
    "register",
]

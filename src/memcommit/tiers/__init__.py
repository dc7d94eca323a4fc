"""Working memory: a cache over the store, with pluggable eviction and promotion.

``TieredMemory`` keeps short-term partitions, mid-term segments, long-term and
the archive; policies live in ``memcommit.tiers.policies`` and
``memcommit.tiers.promotion``; ``simulate`` replays a trace of touches through
any policy.
"""

from memcommit.tiers.candidate import Candidate
from memcommit.tiers.memory import MaintenanceResult, TieredMemory, TouchResult
from memcommit.tiers.policies import (
    ARC,
    FIFO,
    LFU,
    LRU,
    TTL,
    EvictionPolicy,
    Forgetting,
    Learned,
    PromotionPolicy,
    Scored,
    TwoQueue,
)
from memcommit.tiers.promotion import AccessCount, AllOf, AnyOf, ImportanceAtLeast, KindIn, Never
from memcommit.tiers.segments import Segment
from memcommit.tiers.simulate import Simulation, simulate
from memcommit.tiers.stats import Counts, TierStats

__all__ = [
    "ARC",
    "FIFO",
    "LFU",
    "LRU",
    "TTL",
    "AccessCount",
    "AllOf",
    "AnyOf",
    "Candidate",
    "Counts",
    "EvictionPolicy",
    "Forgetting",
    "ImportanceAtLeast",
    "KindIn",
    "Learned",
    "MaintenanceResult",
    "Never",
    "PromotionPolicy",
    "Scored",
    "Segment",
    "Simulation",
    "TierStats",
    "TieredMemory",
    "TouchResult",
    "TwoQueue",
    "simulate",
]

"""Eviction policies: the classics, and ones that score memories.

An eviction policy is any object with ``victims(candidates, n, now)``; stateful
ones may also define ``on_use``, ``on_evict`` and ``on_page_in``.
"""

from memcommit.tiers.policies.base import EvictionPolicy, PromotionPolicy
from memcommit.tiers.policies.classic import ARC, FIFO, LFU, LRU, TwoQueue
from memcommit.tiers.policies.forgetting import Forgetting
from memcommit.tiers.policies.learned import Learned
from memcommit.tiers.policies.scored import Scored
from memcommit.tiers.policies.ttl import TTL

__all__ = [
    "ARC",
    "FIFO",
    "LFU",
    "LRU",
    "TTL",
    "EvictionPolicy",
    "Forgetting",
    "Learned",
    "PromotionPolicy",
    "Scored",
    "TwoQueue",
]

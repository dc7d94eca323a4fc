"""Eviction policies by name: the one table that ``simulate`` and the CLI read.

A name maps to the class, which builds a fresh policy with its defaults; a new
policy that needs no arguments is one row here and is then offered by
``memcommit tiers simulate`` and ``--eviction`` at once.
"""

from __future__ import annotations

from collections.abc import Callable

from memcommit.errors import InvalidInput
from memcommit.tiers.policies.base import EvictionPolicy
from memcommit.tiers.policies.classic import ARC, FIFO, LFU, LRU, TwoQueue
from memcommit.tiers.policies.forgetting import Forgetting
from memcommit.tiers.policies.learned import Learned
from memcommit.tiers.policies.scored import Scored

#: Every policy a name can choose, in the order the CLI lists and replays them.
EVICTION_POLICIES: dict[str, Callable[[], EvictionPolicy]] = {
    "fifo": FIFO,
    "lru": LRU,
    "lfu": LFU,
    "2q": TwoQueue,
    "arc": ARC,
    "forgetting": Forgetting,
    "scored": Scored,
    "learned": Learned,
}

#: Other spellings accepted for a name above.
ALIASES = {"twoqueue": "2q"}


def policy_by_name(name: str) -> EvictionPolicy:
    """A fresh policy from its name or alias (case-insensitive), as the CLI takes it."""
    key = name.lower() if isinstance(name, str) else None
    found = EVICTION_POLICIES.get(ALIASES.get(key, key)) if key is not None else None
    if found is None:
        allowed = sorted({*EVICTION_POLICIES, *ALIASES})
        raise InvalidInput("policy", name, "must be one of " + ", ".join(allowed))
    return found()

"""The scorers recall knows by name: the one list the API, CLI, MCP and workbench read.

A new named scorer is one line in `SCORERS`. Everything that offers a choice
of scorer (an option's help, a page's menu, an error's list of allowed values)
derives it from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from memcommit.errors import InvalidInput
from memcommit.recall.scoring.jaccard import Jaccard
from memcommit.recall.scoring.memory import MemoryScorer
from memcommit.recall.scoring.scorers import BatchScorer, PoolsplitScore, Scorer, Tfidf

#: Each name, and what makes a fresh scorer of that name (the default first).
SCORERS: Mapping[str, Callable[[], Scorer | BatchScorer]] = MappingProxyType(
    {
        "memory": MemoryScorer,
        "tfidf": Tfidf,
        "poolsplit": PoolsplitScore,
        "jaccard": Jaccard,
    }
)

#: The scorer of a recall that names none.
DEFAULT_SCORER = "memory"


def make_scorer(name: str) -> Scorer | BatchScorer:
    """A fresh scorer called ``name``; InvalidInput (field ``scorer``) for any other name."""
    if name not in SCORERS:
        raise InvalidInput("scorer", name, "allowed: " + ", ".join(SCORERS) + ", or a callable")
    return SCORERS[name]()

"""Compaction: finished traces become long-term summaries, and summaries of one task merge.

    Compactor(store, policy=FinishedTraces(), summarizer=outline).compact(now=...)
    Compactor(store).merge(by="task")

Policies (``policies``) choose the traces; a summarizer is any callable from a
Trace to JSON data (``outline`` needs no model); ``fold`` merges summaries.
"""

from memcommit.compaction.compactor import (
    COMPACTED_INTO,
    CompactionResult,
    Compactor,
    MergeResult,
    TraceError,
)
from memcommit.compaction.fold import fold
from memcommit.compaction.outline import outline
from memcommit.compaction.policies import (
    Every,
    FinishedTraces,
    KeepFailed,
    OlderThan,
    Policy,
    UnderPressure,
)
from memcommit.compaction.summary import render

__all__ = [
    "COMPACTED_INTO",
    "CompactionResult",
    "Compactor",
    "Every",
    "FinishedTraces",
    "KeepFailed",
    "MergeResult",
    "OlderThan",
    "Policy",
    "TraceError",
    "UnderPressure",
    "fold",
    "outline",
    "render",
]

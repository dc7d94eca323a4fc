"""Recall: scope filters, ranking by words (and meaning), packing, a reason for every memory.

    from memcommit.recall import recall, Words
    ctx = recall(store, "database timeout", tenant="team-a", budget=Words(80))
    options = RecallOptions(tenant="team-a", budget=Words(80))  # the same call, as one value
    ctx = recall(store, "database timeout", options)
    print(ctx.render())
    for row in ctx.rows:
        print(row.memory.id, row.stage, row.cosine, row.score, row.outcome, row.reason)

Three wings, each importing only those below it:

- ``index/``: each tenant's memories as an inverted index (one column table,
  ``table.COLUMNS``), kept current by commits, saved as a checked snapshot and
  read in place; dense rows beside it for hybrid recall; ``live`` finds, opens
  and caches the tenants within a byte budget.
- ``scoring/``: one ``TermSearch`` over postings that each formula (TF-IDF cosine,
  BM25, Jaccard) supplies weights and bounds to; the default ``memory`` scorer;
  MaxScore top-k; the hybrid fusion; ``registry.SCORERS`` names them.
- ``pipeline/``: ``RecallOptions`` checked once; ``run.recall`` (stored -> filters ->
  ranking -> pack with poolsplit -> ``Context``); a ``Row`` and a reason for every
  memory (``reasons.REASONS``).
"""

from memcommit.recall.pipeline.budget import Pool, TiktokenCounter, Tokens, Words, count_words
from memcommit.recall.pipeline.context import STAGES, Context
from memcommit.recall.pipeline.explain import Explanation, ExplanationCounts
from memcommit.recall.pipeline.options import RecallOptions
from memcommit.recall.pipeline.reasons import REASONS, Reason
from memcommit.recall.pipeline.row import Row
from memcommit.recall.pipeline.run import recall
from memcommit.recall.scoring.components import Components
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.scorers import (
    BatchScorer,
    ExplainedScorer,
    Hybrid,
    PoolsplitScore,
    Scorer,
    Tfidf,
)

__all__ = [
    "REASONS",
    "STAGES",
    "BatchScorer",
    "Components",
    "Context",
    "ExplainedScorer",
    "Explanation",
    "ExplanationCounts",
    "Hybrid",
    "Pool",
    "PoolsplitScore",
    "Query",
    "Reason",
    "RecallOptions",
    "Row",
    "Scorer",
    "Tfidf",
    "TiktokenCounter",
    "Tokens",
    "Words",
    "count_words",
    "recall",
]

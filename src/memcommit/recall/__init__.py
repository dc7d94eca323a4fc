"""Recall: scope filters, TF-IDF + recency ranking, poolsplit packing, a reason for every memory.

    from memcommit.recall import recall, Words
    ctx = recall(store, "database timeout", tenant="team-a", budget=Words(80))
    options = RecallOptions(tenant="team-a", budget=Words(80))  # the same call, as one value
    ctx = recall(store, "database timeout", options)
    print(ctx.render())
    for row in ctx.rows:
        print(row.memory.id, row.stage, row.cosine, row.score, row.outcome, row.reason)

Modules, in pipeline order: text (terms) and stem, tfidf (the formulas), index
(per-tenant inverted index kept current by commits, with its vocabulary and
columns; persist, sections and blobs keep it on disk and read it in place),
sources (store or list), filters, rank (cosines) and scorers, budget, pack
(poolsplit), context, and explain (the rows, counted at once and built a page
at a time); reasons lists every reason a row can give for leaving a memory out.
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

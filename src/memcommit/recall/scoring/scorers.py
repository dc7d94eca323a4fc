"""Scorers: how recall ranks the memories that passed the filters, and what each asks for.

Any callable ``scorer(memory, query) -> float | None`` works: None means "no
match" (the memory is excluded with ``no_lexical_match``), a number ranks it
(higher first). Recall loads every memory that passed the filters for it.

A faster scorer declares more, each by a protocol below, and asks the
`Query` for what it reads (``query.tfidf``: the TF-IDF search, built only when
asked; ``query.index``: postings, sessions, neighbours, speakers):

- `BatchScorer` scores arrays of index documents at once (``score_docs``),
  what keeps recall fast at a million memories; `ExplainedScorer` also
  returns the parts of its scores (``score_parts``, shown as `Row.components`).
- `PresortedScorer` ranks before the filters run (``presort``), so recall
  filters and scores only as deep as packing reads (at recency weight 0).
- `Lexical` (``lexical = True``) promises no score without a shared term, so
  recall skips the memories whose TF-IDF cosine is 0 without asking.

`SearchScorer` is a scorer over one term search (`memcommit.recall.scoring.search`):
a formula is then a search and a name. Built in (by name: `memcommit.recall.scoring.registry`):

- ``"tfidf"``: the seed exactly, ``(1 - w)·cosine + w·2^(-age/half_life)``;
  zero cosine is no match, even at w = 1.
- ``"jaccard"``: shared terms over all terms (`memcommit.recall.scoring.jaccard`).
- ``"poolsplit"``: poolsplit's ``default_scorer`` over the memory's fields.
- `Hybrid`: TF-IDF cosine mixed with any embedding's cosine.
- ``"memory"`` (the default): see `memcommit.recall.scoring.memory`.
"""

from __future__ import annotations

import math
import weakref
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeGuard, cast, runtime_checkable

import numpy as np

import poolsplit
from memcommit.errors import InvalidInput
from memcommit.model import Memory
from memcommit.recall.index.columns import iso_micros, to_micros
from memcommit.recall.scoring import params
from memcommit.recall.scoring.components import Components
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.maxscore import Level
from memcommit.recall.scoring.search import TermSearch


class Scorer(Protocol):
    """Relevance of one memory to a query; None when it does not match at all."""

    def __call__(self, memory: Memory, query: Query) -> float | None: ...


@runtime_checkable
class BatchScorer(Protocol):
    """Scores many index documents at once; NaN marks "no match"."""

    name: str

    def score_docs(self, query: Query, docs: np.ndarray) -> np.ndarray:
        """Scores of ``docs`` (index documents of ``query.index``, ascending)."""


@runtime_checkable
class ExplainedScorer(BatchScorer, Protocol):
    """A batch scorer that also returns the parts of its scores (shown as `Row.components`)."""

    def score_parts(self, query: Query, docs: np.ndarray) -> tuple[np.ndarray, Components]:
        """Scores of ``docs`` (as `BatchScorer.score_docs`) and every scored document's parts."""


@runtime_checkable
class Lexical(Protocol):
    """A scorer that gives no score without a term shared with the query, when ``lexical``."""

    lexical: bool


def _no_parts(best: float) -> Components:
    return Components()


@dataclass(frozen=True)
class Presorted:
    """A ranking known before the filters run: relevance now, scores once the best is known.

    ``levels`` give the matched documents (relevance > 0) a level at a time
    (`memcommit.recall.pipeline.ranking`); ``relevance`` rates any documents. A matched
    document that passes the filters scores ``scale(relevance, best)``, where
    ``best`` is the highest relevance of any passing document; ``scale`` must
    keep the order (None: the relevance is the score). ``parts(best)`` gives
    every matched document's parts.
    """

    levels: Sequence[Callable[[], Level]]
    relevance: Callable[[np.ndarray], np.ndarray]
    scale: Callable[[np.ndarray, float], np.ndarray] | None = None
    parts: Callable[[float], Components] = field(default=_no_parts)


@runtime_checkable
class PresortedScorer(BatchScorer, Protocol):
    """A batch scorer that can rank before filtering when no recency is blended in.

    Recall then scores and filters only the best matches, as deep as packing
    reads (see `memcommit.recall.pipeline.ranking`); its scores equal ``score_docs``'s
    exactly.
    """

    def presort(self, query: Query) -> Presorted:
        """The matches of ``query``, whose ``recency_weight`` is 0."""


def is_batch(scorer: object) -> TypeGuard[BatchScorer]:
    """Whether ``scorer`` scores index documents in bulk (`BatchScorer`)."""
    return _declares(scorer, BatchScorer)


def is_explained(scorer: object) -> TypeGuard[ExplainedScorer]:
    """Whether ``scorer`` gives the parts of its scores (`ExplainedScorer`)."""
    return _declares(scorer, ExplainedScorer)


def is_presorted(scorer: object) -> TypeGuard[PresortedScorer]:
    """Whether ``scorer`` can rank before the filters run (`PresortedScorer`)."""
    return _declares(scorer, PresortedScorer)


def is_lexical(scorer: object) -> bool:
    """Whether ``scorer`` promises no score without a shared term (`Lexical`, ``lexical`` true)."""
    return _declares(scorer, Lexical) and bool(cast(Lexical, scorer).lexical)


#: Per scorer class: which protocols it implements, decided once.
_DECLARED: weakref.WeakKeyDictionary[type, dict[type, bool]] = weakref.WeakKeyDictionary()


def _declares(scorer: object, contract: type) -> bool:
    """``isinstance(scorer, contract)``, decided once per class of scorer.

    typing's structural check walks the protocol's members on every call, tens
    of microseconds (a few percent of a warm recall); what a scorer implements
    is its class's declaration.
    """
    kind = type(scorer)
    try:
        known = _DECLARED.setdefault(kind, {})
    except TypeError:  # a class that cannot be weakly referenced: checked every time
        return isinstance(scorer, contract)
    found = known.get(contract)
    if found is None:
        found = known[contract] = isinstance(scorer, contract)
    return found


class SearchScorer(ABC):
    """A term search's score as relevance, blended with recency; no shared term, no match.

    A subclass names itself and gives `search`; scoring in bulk, presorting
    and the ``lexical`` promise come from here.
    """

    name: str
    lexical = True  # no shared term, no score: recall may skip memories with cosine 0

    @abstractmethod
    def search(self, query: Query) -> TermSearch:
        """The search whose scores are this scorer's relevance (from 0, no match, upwards)."""

    def score_docs(self, query: Query, docs: np.ndarray) -> np.ndarray:
        """``(1 - w)·relevance + w·recency`` where relevance > 0, NaN elsewhere."""
        relevance = self.search(query).of(docs)
        out = np.full(len(docs), np.nan)
        hits = np.flatnonzero(relevance > 0.0)
        w = query.recency_weight
        if w == 0.0:
            out[hits] = relevance[hits]
        else:
            out[hits] = (1.0 - w) * relevance[hits] + w * query.recencies(docs[hits])
        return out

    def presort(self, query: Query) -> Presorted:
        """The relevance is the score (recency weight 0): a top-k search over the postings."""
        search = self.search(query)
        return Presorted(search.levels(), search.of)


class Tfidf(SearchScorer):
    """The seed's ranking: TF-IDF cosine blended with recency; no shared term, no match."""

    name = "tfidf"

    def search(self, query: Query) -> TermSearch:
        """The query's TF-IDF search (`Query.tfidf`)."""
        return query.tfidf

    def __call__(self, memory: Memory, query: Query) -> float | None:
        cos = query.cosine(memory)
        return None if cos <= 0.0 else query.blend(cos, memory)


class PoolsplitScore:
    """poolsplit's ``default_scorer`` (priority, 90-day recency, tags, project, overlap).

    ``importance`` (0..1) becomes poolsplit's ``base_priority`` (0..10, 5 by
    default). A memory sharing no term with the query is no match, as for every
    lexical scorer. poolsplit has its own recency factor, so recall's
    ``recency_weight`` must stay 0 with this scorer.
    """

    name = "poolsplit"
    lexical = True

    def __init__(self, *, tags: Sequence[str] = (), project: str | None = None) -> None:
        if not isinstance(tags, (list, tuple)) or not all(isinstance(tag, str) for tag in tags):
            raise InvalidInput("tags", tags, "must be a list of strings")
        if project is not None and not isinstance(project, str):
            raise InvalidInput("project", project, "must be a string or None")
        self.tags = list(tags)
        self.project = project

    def __call__(self, memory: Memory, query: Query) -> float | None:
        if query.cosine(memory) <= 0.0:
            return None
        entry = {
            "content": memory.content,
            "type": memory.kind,
            "tags": list(memory.tags),
            "project": memory.project,
            "created": iso_micros(to_micros(memory.created_at, 0)) if memory.created_at else "",
            "base_priority": 10.0 * memory.importance,
            "id": memory.id,
        }
        context = {"message": query.text, "tags": self.tags, "project": self.project}
        return poolsplit.default_scorer(entry, context, now=query.now)


class Hybrid:
    """TF-IDF cosine mixed with an embedding cosine: the hook for semantic recall.

    ``embed(text)`` returns a vector (any sequence of floats). Relevance is
    ``(1 - semantic)·tfidf + semantic·embedding``, then blended with recency
    like the seed; relevance <= 0 is no match. Memory vectors are cached by
    (id, version), so a memory is embedded once per version.
    """

    name = "hybrid"

    def __init__(
        self,
        embed: Callable[[str], Sequence[float]],
        *,
        semantic: float = 0.5,
        cache: int = 100_000,
    ) -> None:
        if not callable(embed):
            raise InvalidInput("embed", embed, "must be a callable(text) -> vector")
        self.embed = embed
        self.semantic = params.weight("semantic", semantic, most=1.0)
        self._cache: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()
        self._size = params.count("cache", cache)
        self._query: tuple[str, np.ndarray] | None = None

    def _vector(self, text: str) -> np.ndarray:
        vector = np.asarray(self.embed(text), dtype=np.float64)
        length = float(np.linalg.norm(vector))
        return vector / length if length > 0 else vector

    def _memory_vector(self, memory: Memory) -> np.ndarray:
        key = (memory.id, memory.version)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._vector(memory.content)
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return found

    def __call__(self, memory: Memory, query: Query) -> float | None:
        if self._query is None or self._query[0] != query.text:
            self._query = (query.text, self._vector(query.text))
        semantic = float(np.dot(self._query[1], self._memory_vector(memory)))
        relevance = (1.0 - self.semantic) * query.cosine(memory) + self.semantic * semantic
        if not relevance > 0.0 or math.isnan(relevance):
            return None
        return query.blend(relevance, memory)

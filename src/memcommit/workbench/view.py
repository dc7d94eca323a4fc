"""Shape a recall() Context into the JSON the page draws: the selection, and pages of rows.

Two answers: the selection (what the tray holds), ready as soon as recall()
returns, and the table: counts over every memory plus one page of rows, which
recall()'s explanation builds on demand (a page of a 100,000-memory table reads
a page of memories, not all of them). Every number is recall()'s own, copied
from its Context and rows; nothing is ranked or packed again here. The page also needs a
few display facts a row does not carry (age in hours, whitespace words, tenant
and its display name, key, tier), added per row.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from memcommit.model import Memory
from memcommit.recall import Explanation, Reason, Row
from memcommit.workbench.api import RecallRequest

#: How far each stage's exclusions got: a card excluded at "ranking" passed the filters.
STAGE_INDEX = {"stored": 0, "filters": 1, "ranking": 2, "packing": 3}

#: At most this many exclusions are listed in the one-line summary (baseline, notebook).
SUMMARY_LIMIT = 30


def age_hours(memory: Memory, now: datetime) -> float | None:
    """Hours between the memory's creation and ``now`` (None when unknown)."""
    if memory.created_at is None:
        return None
    return round((now - memory.created_at).total_seconds() / 3600, 3)


def display(memory: Memory, now: datetime, tenant_labels: Mapping[str, str]) -> dict[str, Any]:
    """Display facts of one memory that a Context row does not carry."""
    return {
        "id": memory.id,
        "kind": memory.kind,
        "content": memory.content,
        "tenant": memory.tenant,
        "tenant_label": tenant_labels.get(memory.tenant, memory.tenant),
        "session": memory.session,
        "key": memory.key,
        "scope": memory.scope,
        "tier": memory.tier,
        "age_hours": age_hours(memory, now),
        "always": memory.always,
        "words": len(memory.content.split()),
    }


def row_json(row: Row, now: datetime, tenant_labels: Mapping[str, str]) -> dict[str, Any]:
    """``row.to_dict()`` plus the display facts."""
    return {**row.to_dict(), **display(row.memory, now, tenant_labels)}


def other_tenant_row(memory: Memory) -> Row:
    """Another tenant's record: listed in the teaching bank's table, never ranked."""
    return Row(memory, "filters", None, None, "excluded", Reason.OTHER_TENANT.value, None, None)


def natural_key(row: Row) -> tuple[int | str, ...]:
    """Sort M2 before M10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", row.memory.id))


def reached(row: Row) -> int:
    """The furthest diagram lane (0..3) a row reaches: selected rows reach the tray."""
    if row.outcome == "selected":
        return 3
    return max(0, STAGE_INDEX[row.stage] - 1)


def selection_json(
    context: Any,
    now: datetime,
    tenant_labels: Mapping[str, str],
    *,
    elapsed_ms: float,
    supporting: Iterable[str] | None = None,
) -> dict[str, Any]:
    """What recall() selected, in render order, with the Context's own summary."""
    selected = [memory.id for memory in context.selected]
    pool_of = {m.id: name for name, ms in context.pools.items() for m in ms}
    coverage = None
    if supporting is not None:
        declared = list(supporting)
        coverage = {"declared": declared, "found": [i for i in declared if i in selected]}
    return {
        "context": context.to_dict(rows=False),
        "selected": selected,
        "selected_memories": [
            {**display(m, now, tenant_labels), "pool": pool_of[m.id]} for m in context.selected
        ],
        "coverage": coverage,
        "rendered": context.render(),
        "elapsed_ms": elapsed_ms,
    }


class Table(Protocol):
    """The rows of one recall in table order, with the counts every page shows."""

    def counts(self) -> dict[str, Any]:
        """Selected, excluded, exclusions per reason, and rows reaching each diagram lane."""

    def total(self, outcome: str) -> int:
        """Rows of ``outcome`` ("all", "selected" or "excluded")."""

    def page(self, outcome: str, offset: int, limit: int) -> list[Row]:
        """Rows ``offset`` .. ``offset + limit`` of ``outcome``."""


class RowTable:
    """A table of rows already built (the teaching bank also lists other tenants' records)."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = list(rows)
        excluded = [r for r in self.rows if r.outcome == "excluded"]
        self.by_outcome = {
            "all": self.rows,
            "selected": [r for r in self.rows if r.outcome == "selected"],
            "excluded": excluded,
        }
        reach = Counter(reached(row) for row in self.rows)
        self._counts = {
            "selected": len(self.rows) - len(excluded),
            "excluded": len(excluded),
            "reasons": dict(Counter(r.reason for r in excluded)),
            "reached": [sum(n for lane, n in reach.items() if lane >= i) for i in range(4)],
        }

    def counts(self) -> dict[str, Any]:
        return self._counts

    def total(self, outcome: str) -> int:
        return len(self.by_outcome[outcome])

    def page(self, outcome: str, offset: int, limit: int) -> list[Row]:
        return self.by_outcome[outcome][offset : offset + limit]


class ExplainedTable:
    """recall()'s own explanation: counts from the index, rows built a page at a time."""

    def __init__(self, explanation: Explanation) -> None:
        self.explanation = explanation
        counts = explanation.counts()
        stages = counts.stages
        self._counts = {
            "selected": counts.selected,
            "excluded": counts.excluded,
            "reasons": counts.reasons,
            # a row reaches lane i when it got past i stages; selected rows reach the tray
            "reached": [
                counts.rows,
                stages["ranking"] + stages["packing"],
                stages["packing"],
                counts.selected,
            ],
        }

    def counts(self) -> dict[str, Any]:
        return self._counts

    def total(self, outcome: str) -> int:
        return self.explanation.total(outcome)

    def page(self, outcome: str, offset: int, limit: int) -> list[Row]:
        return self.explanation.page(offset, limit, outcome=outcome)


def rows_json(
    request: RecallRequest,
    table: Table,
    now: datetime,
    tenant_labels: Mapping[str, str],
) -> dict[str, Any]:
    """Counts over every row, the first exclusions, and the requested page of rows."""
    page = table.page(request.outcome, request.offset, request.limit)
    first = table.page("excluded", 0, SUMMARY_LIMIT)
    return {
        "counts": table.counts(),
        "excluded_summary": [{"id": r.memory.id, "reason": r.reason} for r in first],
        "rows": [row_json(row, now, tenant_labels) for row in page],
        "total": table.total(request.outcome),
        "offset": request.offset,
        "limit": request.limit,
    }

"""The result of a recall: the packed context and one row per memory explaining it.

The workbench, the CLI and the MCP server all show this object. Rows can be
expensive at a million memories, so a `Context` may compute them on first
access (``explain=False``); they are the same rows either way. Its
`explanation` counts them and builds them a page at a time, for tables too
long to build whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcommit.model import Memory
from memcommit.recall.pipeline.explain import Explanation
from memcommit.recall.pipeline.row import Row

STAGES = ("stored", "filters", "ranking", "packing")


@dataclass
class Context:
    """Selected memories (render order), per-pool totals, and a row per visible memory.

    Iterating a context, and ``len(context)``, go over ``selected`` only, so
    ``tiers.touch([m.id for m in context])`` counts a use of what was selected.
    """

    query: str
    tenant: str
    now: datetime
    unit: str
    budget: int | None
    selected: list[Memory]
    pools: dict[str, list[Memory]]
    used: dict[str, int]
    scorer: str
    #: Counts of every row, and rows a page at a time (see `memcommit.recall.pipeline.explain`).
    explanation: Explanation = field(repr=False)
    note: str | None = None
    _rows: list[Row] | None = field(default=None, repr=False)

    @property
    def rows(self) -> list[Row]:
        """One row per memory the tenant can see: selected first (render order), then the rest.

        Rows not selected are ordered by blended score (highest first; rows
        without one last), then creation time and id.
        """
        if self._rows is None:
            self._rows = self.explanation.rows()
        return self._rows

    def __iter__(self) -> Iterator[Memory]:
        """The selected memories, in render order (not the rows)."""
        return iter(self.selected)

    def __len__(self) -> int:
        """How many memories were selected."""
        return len(self.selected)

    @property
    def total_used(self) -> int:
        """Words or tokens used over every pool (always-scope memories included)."""
        return sum(self.used.values())

    def render(self) -> str:
        """The selected memories as a prompt-ready block, one line each, grouped by pool."""
        lines: list[str] = []
        several = len(self.pools) > 1
        for name, memories in self.pools.items():
            if several and memories:
                lines.append(f"## {name}")
            lines.extend(f"- {memory.content}" for memory in memories)
        return "\n".join(lines)

    def to_dict(self, *, rows: bool = True) -> dict[str, Any]:
        """Everything as JSON-serializable values; ``rows=True`` computes the rows if lazy."""
        out = {
            "query": self.query,
            "tenant": self.tenant,
            "now": self.now.isoformat(),
            "unit": self.unit,
            "budget": self.budget,
            "scorer": self.scorer,
            "note": self.note,
            "selected": [
                {"id": m.id, "kind": m.kind, "scope": m.scope, "pool": name, "content": m.content}
                for name, ms in self.pools.items()
                for m in ms
            ],
            "used": dict(self.used),
        }
        if rows:
            out["rows"] = [row.to_dict() for row in self.rows]
        return out

"""`Row`: what recall did with one memory, the unit of every explanation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memcommit.model import Memory


@dataclass(frozen=True)
class Row:
    """What recall did with one memory: the stage it reached and its outcome.

    ``trail`` lists (pool, decision) for every pool that considered the memory,
    in pool order; ``claimed_by_pool`` there means an earlier pool had already
    selected it. ``components`` are the parts of ``score`` when the scorer
    gives them (the default one does: see `memcommit.recall.scoring.memory`).
    """

    memory: Memory
    stage: str
    cosine: float | None
    score: float | None
    outcome: str  # "selected" | "excluded"
    reason: str | None
    pool: str | None
    cost: int | None
    trail: tuple[tuple[str, str], ...] = ()
    components: Mapping[str, float] | None = None

    @property
    def fusion(self) -> str | None:
        """How a hybrid recall ranked this memory, in words (None: not a hybrid score).

        Its place in each ranking ("words #2 · meaning #1 (0.83 ×2)": the rank, the
        cosine and the focus' factor when not 1, `scoring.focus`; "below": under that
        ranking's window; "words: none": no term shared), and "no vector yet" for a
        memory the store has not embedded (found by words only).
        """
        parts = self.components
        if parts is None or "fused" not in parts:
            return None
        if "lexical_rank" in parts:
            words = f"words #{int(parts['lexical_rank'])}"
        else:
            words = "words: below" if "lexical" in parts else "words: none"
        if not parts.get("vector"):
            meaning = "no vector yet"
        elif "dense_rank" in parts:
            factor = parts.get("dense_factor", 1.0)
            focus = f" ×{factor:.3g}" if factor != 1.0 else ""
            meaning = f"meaning #{int(parts['dense_rank'])} ({parts['dense']:.2f}{focus})"
        else:
            meaning = f"meaning: below ({parts['dense']:.2f})"
        return f"{words} · {meaning}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (the memory as id, kind, scope and content)."""
        m = self.memory
        return {
            "id": m.id,
            "kind": m.kind,
            "scope": m.scope,
            "session": m.session,
            "always": m.always,
            "created_at": m.created_at.isoformat() if m.created_at else None,
            "content": m.content,
            "stage": self.stage,
            "cosine": self.cosine,
            "score": self.score,
            "outcome": self.outcome,
            "reason": self.reason,
            "pool": self.pool,
            "cost": self.cost,
            "trail": [list(step) for step in self.trail],
            "components": dict(self.components) if self.components is not None else None,
            "fusion": self.fusion,
        }

"""``fold``: many summaries of one task become one evolving summary.

A task done thirty times should leave one summary that says how often it ran,
how it ended, and the lines and errors seen across the runs, not thirty near
copies. Folding a folded summary with newer ones keeps evolving it: run and
status counts add up, lines and errors are merged without repeats. Works on
``outline`` data and on any other summary (a string or mapping without
``lines`` contributes its rendered text as one line).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from memcommit.compaction.outline import key_line
from memcommit.compaction.summary import render

#: Bounds on the merged lists, so an evolving summary stays small however often it runs.
MAX_LINES = 200
MAX_ERRORS = 50


def _lines_of(data: Any) -> list[str]:
    """The key lines a summary contributes."""
    if isinstance(data, Mapping) and isinstance(data.get("lines"), list):
        return [str(line) for line in data["lines"]]
    text = render(data)
    return [key_line(text)] if text else []


def _errors_of(data: Any) -> list[str]:
    """The error texts a summary contributes."""
    if not isinstance(data, Mapping) or not isinstance(data.get("errors"), list):
        return []
    return [str(e.get("error", "")) if isinstance(e, Mapping) else str(e) for e in data["errors"]]


def _unique(items: list[str], limit: int) -> list[str]:
    """Items without case-insensitive repeats, the most recent ``limit`` of them."""
    seen: dict[str, str] = {}
    for item in items:
        if item:
            seen.pop(item.casefold(), None)
            seen[item.casefold()] = item
    return list(seen.values())[-limit:]


def fold(task: str, summaries: Sequence[Any]) -> dict[str, Any]:
    """One summary of ``task`` from ``summaries`` (oldest first), deterministic.

    Lines and errors keep their latest position, so the newest runs come last
    and survive the bound.
    """
    runs = 0
    statuses: Counter[str] = Counter()
    steps = 0
    starts: list[str] = []
    ends: list[str] = []
    lines: list[str] = []
    errors: list[str] = []
    for data in summaries:
        info = data if isinstance(data, Mapping) else {}
        count = info.get("runs", 1)
        runs += count if isinstance(count, int) else 1
        if isinstance(info.get("statuses"), Mapping):
            statuses.update({str(k): int(v) for k, v in info["statuses"].items()})
        elif isinstance(info.get("status"), str):
            statuses[info["status"]] += 1
        if isinstance(info.get("steps"), int):
            steps += info["steps"]
        starts += [info[k] for k in ("started", "first") if isinstance(info.get(k), str)]
        ends += [info[k] for k in ("ended", "last") if isinstance(info.get(k), str)]
        lines += _lines_of(data)
        errors += _errors_of(data)
    return {
        "task": task,
        "runs": runs,
        "statuses": dict(sorted(statuses.items())),
        "steps": steps,
        "first": min(starts) if starts else None,
        "last": max(ends) if ends else None,
        "lines": _unique(lines, MAX_LINES),
        "errors": _unique(errors, MAX_ERRORS),
    }

"""``outline``: the summarizer that needs no model.

It turns a trace into a small JSON object a person (or a recall query) can read:
the task, how it ended, when, which kinds of step it had, the key line of every
step without repeats, the errors of failed steps, and the ids it was built from.
The same trace always gives the same outline.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.model import Memory, Trace

#: Longest key line kept, in characters; longer ones end in an ellipsis.
LINE_CHARS = 200


def key_line(content: str) -> str:
    """The first non-blank line of ``content``, whitespace collapsed, cut at LINE_CHARS."""
    for raw in content.splitlines():
        line = " ".join(raw.split())
        if line:
            return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"
    return ""


def task_text(root: Memory) -> str:
    """The task of a trace: its root's content with whitespace collapsed ("" once purged)."""
    return "" if root.status == "purged" else " ".join(root.content.split())


def step_error(step: Memory) -> str | None:
    """The error a step records, or None when the step did not fail.

    A step failed when its metadata has a non-empty ``error``, or a ``status``
    of "failed" or "error"; the error text is ``error`` when it is a string,
    else the step's key line.
    """
    error = step.metadata.get("error")
    if isinstance(error, str) and error.strip():
        return key_line(error)
    if error or step.metadata.get("status") in ("failed", "error"):
        return key_line(step.content) or "failed"
    return None


def _errors(trace: Trace, steps: list[Memory]) -> list[dict[str, Any]]:
    """Errors of failed steps; a failed trace with none marked blames its last step."""
    errors = [{"step": s.step, "error": text} for s in steps if (text := step_error(s)) is not None]
    if not errors and trace.status == "failed" and steps:
        last = steps[-1]
        errors.append({"step": last.step, "error": key_line(last.content) or "failed"})
    return errors


def _dedupe(lines: list[str], max_lines: int) -> tuple[list[str], int]:
    """Lines without case-insensitive repeats; past ``max_lines``, the first and last halves."""
    seen: set[str] = set()
    unique = []
    for line in lines:
        folded = line.casefold()
        if line and folded not in seen:
            seen.add(folded)
            unique.append(line)
    if len(unique) <= max_lines:
        return unique, 0
    head = max_lines - max_lines // 2
    tail = max_lines // 2
    return unique[:head] + (unique[-tail:] if tail else []), len(unique) - max_lines


def outline(trace: Trace, *, max_lines: int = 200) -> dict[str, Any]:
    """Summarize ``trace`` as a JSON object; deterministic and model-free.

    ``max_lines`` bounds the key lines kept (first and last halves of a longer
    list, with ``omitted`` saying how many were left out), so a trace of ten
    thousand steps still gives a summary of bounded size.
    """
    if isinstance(max_lines, bool) or not isinstance(max_lines, int) or max_lines < 1:
        raise InvalidInput("max_lines", max_lines, "must be a positive int")
    steps = sorted(trace.steps, key=lambda s: (s.step or 0, s.id))
    readable = [s for s in steps if s.status != "purged"]
    lines, omitted = _dedupe([key_line(s.content) for s in readable], max_lines)
    times = [t for m in (trace.root, *steps) if (t := m.created_at) is not None]
    started = trace.started_at or (min(times) if times else None)
    ended = trace.ended_at or (max(times) if times else None)
    data: dict[str, Any] = {
        "task": task_text(trace.root),
        "status": trace.status,
        "steps": len(steps),
        "started": started.isoformat() if started else None,
        "ended": ended.isoformat() if ended else None,
        "seconds": (ended - started).total_seconds() if started and ended else None,
        "kinds": dict(sorted(Counter(s.kind for s in steps).items())),
        "lines": lines,
        "errors": _errors(trace, readable),
        "ids": {"trace": trace.id, "root": trace.root.id, "steps": [s.id for s in steps]},
    }
    if omitted:
        data["omitted"] = omitted
    return data

"""A mid-term segment's summary, made by a plug-in summarizer whose failures are caught.

Consolidation runs inside maintenance, which may run right after a user's own
commit: a summarizer that raises or returns something unusable must not make
that commit raise, so its failure becomes a `ConsolidationError` to report.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConsolidationError:
    """A segment left in mid-term because its summary could not be made or kept."""

    segment: str
    tenant: str
    reason: str


class Unusable(Exception):
    """The summarizer raised, or gave a summary that cannot be stored."""


def summarizer_name(summarizer: Callable[..., Any]) -> str:
    """A readable name: the function's or the class's."""
    while isinstance(summarizer, functools.partial):
        summarizer = summarizer.func
    return getattr(summarizer, "__name__", None) or type(summarizer).__name__


def summary_text(summarizer: Callable[[Any], Any], trace: Any) -> str:
    """The summary of ``trace`` as JSON text; Unusable when it cannot be made."""
    name = summarizer_name(summarizer)
    try:
        data = summarizer(trace)
    except Exception as exc:  # a plug-in may fail any way; the segment just stays
        raise Unusable(f"{name} raised {type(exc).__name__}: {exc}") from exc
    try:
        text = json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise Unusable(f"{name} returned data that is not JSON: {exc}") from exc
    if text in ("null", '""', "{}", "[]"):
        raise Unusable(f"{name} returned an empty summary: {text}")
    return text

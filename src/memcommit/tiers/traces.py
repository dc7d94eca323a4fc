"""Synthetic access traces: Zipf popularity, optionally interrupted by scans or loops.

Used by the benchmark, the tests and ``memcommit tiers simulate --synthetic``
to compare policies on the same, seeded data. Ids are positive integers.
"""

from __future__ import annotations

import itertools
import random

from memcommit.errors import InvalidInput


def zipf(n: int, ids: int, alpha: float = 0.8, *, seed: int = 0) -> list[int]:
    """``n`` requests over ids 1..``ids``, id k drawn with probability ∝ k^-alpha."""
    if n < 0:
        raise InvalidInput("n", n, "must be at least 0")
    if ids < 1:
        raise InvalidInput("ids", ids, "must be at least 1")
    weights = itertools.accumulate(1.0 / (k**alpha) for k in range(1, ids + 1))
    return random.Random(seed).choices(range(1, ids + 1), cum_weights=list(weights), k=n)


def with_scans(trace: list[int], *, every: int, length: int) -> list[int]:
    """``trace`` with a one-time scan of ``length`` fresh ids after each ``every`` requests.

    Scan ids start above the largest id of ``trace`` and are never requested again.
    """
    if every < 1 or length < 0:
        raise InvalidInput("every", every, "every must be at least 1 and length at least 0")
    out: list[int] = []
    fresh = max(trace, default=0) + 1
    for start in range(0, len(trace), every):
        out.extend(trace[start : start + every])
        out.extend(range(fresh, fresh + length))
        fresh += length
    return out


def with_loops(trace: list[int], *, every: int, span: int, repeats: int) -> list[int]:
    """``trace`` with a loop over ``span`` ids, ``repeats`` times, after each ``every`` requests.

    Every loop walks the same ids (above the largest id of ``trace``), in order.
    """
    if every < 1 or span < 0 or repeats < 0:
        raise InvalidInput("every", every, "every must be at least 1; span, repeats at least 0")
    base = max(trace, default=0) + 1
    loop = list(range(base, base + span)) * repeats
    out: list[int] = []
    for start in range(0, len(trace), every):
        out.extend(trace[start : start + every])
        out.extend(loop)
    return out


#: The synthetic traces the benchmark and ``memcommit tiers simulate --synthetic`` offer.
SYNTHETIC = ("zipf", "scans", "loops")


def synthetic(kind: str, n: int, *, ids: int = 100_000, seed: int = 1) -> list[int]:
    """Exactly ``n`` requests: Zipf α=0.8 over ``ids`` ids, plain or interrupted.

    "scans" puts a one-time scan of n/100 fresh ids after every tenth of the
    trace; "loops" a loop over n/200 ids, walked twice. Either way about 90% of
    the requests stay Zipf; the interruptions' rounding is made up with more
    Zipf requests at the end (or cut there), so ``--requests`` is what replays.
    """
    if kind not in SYNTHETIC:
        raise InvalidInput("kind", kind, "must be one of " + ", ".join(SYNTHETIC))
    if kind == "zipf":
        return zipf(n, ids, 0.8, seed=seed)
    base = zipf(n - n // 10, ids, 0.8, seed=seed)
    every = max(n // 10, 1)
    if kind == "scans":
        out = with_scans(base, every=every, length=n // 100)
    else:
        out = with_loops(base, every=every, span=n // 200, repeats=2)
    if len(out) < n:
        out += zipf(n - len(out), ids, 0.8, seed=seed + 1)
    return out[:n]

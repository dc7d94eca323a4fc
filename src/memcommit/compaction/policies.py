"""Which traces to compact: small policies behind one protocol.

A policy gets the traces not yet compacted (open ones too), the time, and how
many records each partition holds, and returns the traces to compact. Policies
are pure: same traces, same time, same counts, same choice.

    FinishedTraces()                  every finished or failed trace
    OlderThan(age)                    ... that ended strictly more than ``age`` ago
    KeepFailed(records=N)             ... but each tenant's newest failures stay raw, up to N steps
    UnderPressure(threshold, per=...) ... only while a partition (or the store) is over threshold
    Every(a, b, ...)                  the traces every one of them selects
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from memcommit.errors import InvalidInput
from memcommit.model import Trace

#: A partition: the records of one scope of one tenant.
Partition = tuple[str, str]

#: Traces in these states are done and may be compacted; "open" ones never are.
DONE = ("finished", "failed")


@runtime_checkable
class Policy(Protocol):
    """Chooses the traces to compact."""

    def select(
        self, traces: Sequence[Trace], now: datetime, held: Mapping[Partition, int]
    ) -> list[Trace]:
        """The traces to compact, from ``traces`` (none compacted yet), in compaction order.

        ``held`` counts the records each (tenant, scope) partition holds outside
        the archive; only policies that need it read it, so it may be lazy.
        """
        ...


def _oldest_first(traces: Sequence[Trace]) -> list[Trace]:
    """Done traces ordered by when they ended (then started, then id), oldest first."""

    def order(t: Trace) -> tuple[int, datetime, str] | tuple[int, str]:
        ended = t.ended_at or t.started_at
        return (0, ended, t.id) if ended is not None else (1, t.id)

    return sorted((t for t in traces if t.status in DONE), key=order)


class FinishedTraces:
    """Every finished or failed trace; open traces are still being worked on."""

    def select(
        self, traces: Sequence[Trace], now: datetime, held: Mapping[Partition, int]
    ) -> list[Trace]:
        """Done traces, oldest first."""
        return _oldest_first(traces)

    def __repr__(self) -> str:
        return "FinishedTraces()"


class OlderThan:
    """Done traces that ended strictly more than ``age`` before ``now``.

    A trace that ended exactly ``age`` ago is kept, as recall's maximum age is
    inclusive: a trace still young enough to be recalled whole stays whole.
    """

    def __init__(self, age: timedelta) -> None:
        if not isinstance(age, timedelta) or age < timedelta(0):
            raise InvalidInput("age", age, "must be a timedelta of zero or more")
        self.age = age

    def select(
        self, traces: Sequence[Trace], now: datetime, held: Mapping[Partition, int]
    ) -> list[Trace]:
        """Done traces with ``now - ended_at > age``, oldest first."""
        return [
            t
            for t in _oldest_first(traces)
            if t.ended_at is not None and now - t.ended_at > self.age
        ]

    def __repr__(self) -> str:
        return f"OlderThan({self.age!r})"


class KeepFailed:
    """Like FinishedTraces, but failed traces stay raw while there is room for them.

    Failures are what people debug, so each tenant's newest failed traces are
    kept as they are while their steps add up to at most ``records``; that
    tenant's first failed trace that would go over, and every older one, is
    compacted. The budget is per tenant: one tenant's failures never cost
    another's.
    """

    def __init__(self, records: int) -> None:
        if isinstance(records, bool) or not isinstance(records, int) or records < 0:
            raise InvalidInput("records", records, "must be an int of zero or more")
        self.records = records

    def kept(self, traces: Sequence[Trace]) -> set[str]:
        """Ids of the failed traces kept raw: per tenant, newest first while steps <= records."""
        by_tenant: dict[str, list[Trace]] = {}
        for trace in _oldest_first(traces):
            if trace.status == "failed":
                by_tenant.setdefault(trace.tenant, []).append(trace)
        kept: set[str] = set()
        for failed in by_tenant.values():
            total = 0
            for trace in reversed(failed):
                total += len(trace.steps)
                if total > self.records:
                    break
                kept.add(trace.id)
        return kept

    def select(
        self, traces: Sequence[Trace], now: datetime, held: Mapping[Partition, int]
    ) -> list[Trace]:
        """Done traces except the failed ones kept raw, oldest first."""
        kept = self.kept(traces)
        return [t for t in _oldest_first(traces) if t.id not in kept]

    def __repr__(self) -> str:
        return f"KeepFailed(records={self.records})"


def relief(trace: Trace) -> int:
    """How many held records compacting ``trace`` frees: held root and steps, less the summary."""
    members = (trace.root, *trace.steps)
    return sum(1 for m in members if m.tier != "archive" and m.holds()) - 1


class UnderPressure:
    """Compact only where more than ``threshold`` records are held, oldest first.

    ``per="partition"`` looks at each (tenant, scope) on its own; ``per="store"``
    at the total. Traces chosen by ``among`` (default: every done trace) are
    taken oldest first until the count is at most ``threshold``; a count exactly
    at the threshold is not over it. A trace whose compaction would free nothing
    (one held record, root or step: the summary takes its place) is skipped.
    """

    def __init__(self, threshold: int, per: str = "partition", among: Policy | None = None):
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
            raise InvalidInput("threshold", threshold, "must be an int of zero or more")
        if per not in ("partition", "store"):
            raise InvalidInput("per", per, "must be either 'partition' or 'store'")
        if among is not None and not isinstance(among, Policy):
            raise InvalidInput("among", among, "must be a policy with select(traces, now, held)")
        self.threshold = threshold
        self.per = per
        self.among = among if among is not None else FinishedTraces()

    def select(
        self, traces: Sequence[Trace], now: datetime, held: Mapping[Partition, int]
    ) -> list[Trace]:
        """The oldest eligible traces of each over-full partition (or of the store)."""
        eligible = _oldest_first(self.among.select(traces, now, held))
        left: dict[Partition | str, int]
        where: dict[str, Partition | str]
        if self.per == "store":
            left = {"store": sum(held.values())}
            where = {t.id: "store" for t in eligible}
        else:
            left = dict(held.items())
            where = {t.id: (t.tenant, t.scope) for t in eligible}
        chosen = []
        for trace in eligible:
            part = where[trace.id]
            freed = relief(trace)
            if left.get(part, 0) > self.threshold and freed > 0:
                chosen.append(trace)
                left[part] -= freed
        return chosen

    def __repr__(self) -> str:
        return f"UnderPressure({self.threshold}, per={self.per!r}, among={self.among!r})"


class Every:
    """The traces every given policy selects, in the first policy's order.

    Each policy sees all the traces, so ``Every(OlderThan(age), KeepFailed(n))``
    keeps the newest failures raw even when they are younger than ``age``. To
    relieve pressure among some traces only, use ``UnderPressure(among=...)``.
    """

    def __init__(self, *policies: Policy) -> None:
        if not policies:
            raise InvalidInput("policies", policies, "Every needs at least one policy")
        for policy in policies:
            if not isinstance(policy, Policy):
                raise InvalidInput("policies", policy, "must have select(traces, now, held)")
        self.policies = policies

    def select(
        self, traces: Sequence[Trace], now: datetime, held: Mapping[Partition, int]
    ) -> list[Trace]:
        """Intersection of every policy's selection."""
        first, *rest = (p.select(traces, now, held) for p in self.policies)
        common = set.intersection({t.id for t in first}, *({t.id for t in s} for s in rest))
        return [t for t in first if t.id in common]

    def __repr__(self) -> str:
        return f"Every({', '.join(map(repr, self.policies))})"

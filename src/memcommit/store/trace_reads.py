"""Reading traces through the store's API: one, or a page of them with their members."""

from __future__ import annotations

from memcommit.errors import InvalidInput, NotFound
from memcommit.model import Memory, Trace
from memcommit.store import validate as v
from memcommit.store.api_part import ApiPart, reading
from memcommit.store.backends.base import MemoryQuery, TraceRow
from memcommit.store.protocols import CommitRef
from memcommit.store.trace_steps import TRACE_ENDINGS

TRACE_STATUSES = ("open", *TRACE_ENDINGS)
_TRACE_PAGE = 1000  # traces whose members one read loads


class TraceReads(ApiPart):
    """`trace` and `traces`: each trace with its root and ordered steps, as of a commit."""

    @reading
    def trace(self, trace_id: str, *, as_of: CommitRef | None = None) -> Trace:
        """A trace with its root and ordered steps, as it stood at ``as_of``."""
        core = self._core
        seq = core.seq(as_of)
        rows = core.backend.traces(ids=[v.text("trace_id", trace_id)], as_of=seq)
        if not rows or not self._visible(rows[0].tenant):
            raise NotFound("trace_id", trace_id)
        return self._trace(rows[0], seq)

    @reading
    def traces(
        self,
        *,
        tenant: str | None = None,
        status: str | None = None,
        as_of: CommitRef | None = None,
        unmarked: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> list[Trace]:
        """Traces in the order they began, optionally of one tenant and status.

        ``unmarked`` keeps only traces whose root has no metadata key of that
        name (the Compactor marks compacted roots with "compacted_into", so
        ``unmarked="compacted_into"`` lists the traces not compacted yet).
        ``after`` (a trace id) and ``limit`` page through a long listing: pass
        the last trace of one page as ``after`` to get the next. Every filter
        runs in the backend, and the members of a page load in one read.
        """
        core = self._core
        tenant = v.optional_text("tenant", tenant)
        if status is not None and status not in TRACE_STATUSES:
            raise InvalidInput("status", status, f"must be one of {', '.join(TRACE_STATUSES)}")
        if self._only is not None:
            if tenant is not None and tenant != self._only:
                raise InvalidInput("tenant", tenant, f"this view reads only tenant {self._only!r}")
            tenant = self._only
        unmarked = v.optional_text("unmarked", unmarked)
        after = v.optional_text("after", after)
        limit = v.limit(limit)
        seq = core.seq(as_of)
        if after is not None:
            found = core.backend.traces(ids=[after], tenant=tenant)
            if not found:
                raise NotFound("after", after)
        rows = core.backend.traces(
            tenant=tenant, as_of=seq, status=status, unmarked=unmarked, after=after, limit=limit
        )
        out: list[Trace] = []
        for start in range(0, len(rows), _TRACE_PAGE):
            out += self._traces(rows[start : start + _TRACE_PAGE], seq)
        return out

    def _trace(self, row: TraceRow, seq: int | None) -> Trace:
        return self._traces([row], seq)[0]

    def _traces(self, rows: list[TraceRow], seq: int | None) -> list[Trace]:
        """Traces with their root and steps, the members of all of them read at once."""
        if not rows:
            return []
        if len(rows) == 1:
            members = self._core.backend.memories(MemoryQuery(trace=rows[0].id, as_of=seq))
        else:
            members = self._core.backend.memories(
                MemoryQuery(traces=[r.id for r in rows], as_of=seq)
            )
        by_trace: dict[str, list[Memory]] = {r.id: [] for r in rows}
        for m in members:
            by_trace[m.trace_id].append(m)  # type: ignore[index]
        out = []
        for row in rows:
            status, ended = row.status, row.ended_at
            if seq is not None and row.ended_seq is not None and row.ended_seq > seq:
                status, ended = "open", None
            root, *steps = by_trace[row.id]  # in step order: the root (step 0) first
            trace = Trace(
                id=row.id,
                tenant=row.tenant,
                scope=row.scope,
                status=status,
                root=root,
                steps=tuple(steps),
                started_at=row.started_at,
                ended_at=ended,
            )
            out.append(trace)
        return out

"""Traces inside a commit: a task's root memory, its numbered steps, and its end."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from memcommit.errors import InvalidInput, NotFound
from memcommit.model import Memory
from memcommit.store import validate as v
from memcommit.store.backends.base import TraceRow
from memcommit.store.pending import Buffer
from memcommit.store.records import fields_of, memory

TRACE_ENDINGS = ("finished", "failed")


class TraceSteps(Buffer):
    """`begin_trace`, `step` and `finish`: a trace's memories and its row, buffered."""

    def begin_trace(
        self,
        task: str,
        *,
        tenant: str | None = None,
        scope: str = "shared",
        session: str | None = None,
        kind: str = "event",
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a trace; its root memory holds the task, with trace_id set and step 0."""
        p = self.pending  # the trace row keeps its commit: ordered first
        root = self._new_memory(
            task, kind=kind, scope=scope, tenant=tenant, session=session, metadata=metadata, step=0
        )
        trace_id = root.id  # the trace is named after its root memory
        root = memory({**fields_of(root), "trace_id": trace_id})
        self._traces[trace_id] = TraceRow(
            id=trace_id,
            tenant=root.tenant,
            scope=root.scope,
            session=root.session,
            status="open",
            last_step=0,
            started_seq=p.seq,
            started_at=p.time,
        )
        self._record(root, "begin_trace", None)
        return trace_id

    def step(
        self,
        trace_id: str,
        content: str,
        *,
        kind: str = "event",
        metadata: Mapping[str, Any] | None = None,
        importance: float = 0.5,
        tags: Iterable[str] = (),
    ) -> Memory:
        """Append the next step (1, 2, ...) to an open trace."""
        trace = self._open_trace(trace_id)
        n = trace.last_step + 1
        m = self._new_memory(
            content,
            kind=kind,
            scope=trace.scope,
            tenant=trace.tenant,
            session=trace.session,
            importance=importance,
            tags=tags,
            metadata=metadata,
            trace_id=trace_id,
            step=n,
        )
        self._traces[trace_id] = replace(trace, last_step=n)
        self._record(m, "step", {"trace": trace_id, "step": n})
        return m

    def finish(self, trace_id: str, status: str = "finished") -> None:
        """Close an open trace as "finished" or "failed"."""
        if status not in TRACE_ENDINGS:
            raise InvalidInput("status", status, f"must be one of {', '.join(TRACE_ENDINGS)}")
        trace = self._open_trace(trace_id)
        self._check_open()
        p = self.pending
        self._traces[trace_id] = replace(trace, status=status, ended_seq=p.seq, ended_at=p.time)
        self._changes.append(("finish_trace", trace_id, None, {"status": status}))
        self._tenants.append(trace.tenant)

    def _open_trace(self, trace_id: str) -> TraceRow:
        v.text("trace_id", trace_id)
        trace = self._traces.get(trace_id)
        if trace is None:
            rows = self._backend.traces(ids=[trace_id])
            if not rows or not self._visible(rows[0].tenant):
                raise NotFound("trace_id", trace_id)
            trace = rows[0]
        if trace.status != "open":
            raise InvalidInput("trace_id", trace_id, f"trace is already {trace.status}")
        return trace

"""The task tools: a task's trace begun, its steps recorded in order, and its end."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from memcommit.interfaces.request_ids import AnsweredWrites
from memcommit.interfaces.tool_fields import (
    Importance,
    Kind,
    Metadata,
    RequestId,
    Scope,
    Tags,
    Text,
)
from memcommit.store import Transaction


class TaskTools(AnsweredWrites):
    """`begin_task`, `add_step` and `finish_task`: one trace per task, in the tenant."""

    tenant: str

    def begin_task(
        self,
        task: Annotated[Text, Field(description="What you are about to do.")],
        scope: Scope = "shared",
        session: str | None = None,
        metadata: Metadata = None,
        request_id: RequestId = None,
    ) -> dict[str, Any]:
        """Start recording a task; add its steps with `add_step`, end it with `finish_task`.

        Finished tasks are later compacted into one summary, so record the steps
        that matter (what you tried, what failed, what worked).
        """

        def work(tx: Transaction) -> dict[str, Any]:
            trace_id = tx.begin_trace(
                task, tenant=self.tenant, scope=scope, session=session, metadata=metadata
            )
            tx.message = f"begin task {trace_id}"
            return {"trace_id": trace_id}

        arguments = {"task": task, "scope": scope, "session": session, "metadata": metadata}
        return self._write("begin task", request_id, ("begin_task", arguments), work)

    def add_step(
        self,
        trace_id: Annotated[str, Field(min_length=1, description="From begin_task.")],
        content: Annotated[Text, Field(description="What happened in this step.")],
        kind: Kind = "event",
        importance: Importance = 0.5,
        tags: Tags | None = None,
        metadata: Metadata = None,
        request_id: RequestId = None,
    ) -> dict[str, Any]:
        """Record one step of an open task, in order."""

        def work(tx: Transaction) -> dict[str, Any]:
            memory = tx.step(
                trace_id,
                content,
                kind=kind,
                importance=importance,
                tags=tuple(tags or ()),
                metadata=metadata,
            )
            tx.message = f"step {memory.step} of task {trace_id}: {memory.id}"
            return {"id": memory.id, "step": memory.step}

        arguments = {
            "trace_id": trace_id,
            "content": content,
            "kind": kind,
            "importance": importance,
            "tags": tags,
            "metadata": metadata,
        }
        return self._write("step", request_id, ("add_step", arguments), work)

    def finish_task(
        self,
        trace_id: Annotated[str, Field(min_length=1, description="From begin_task.")],
        status: Literal["finished", "failed"] = "finished",
        request_id: RequestId = None,
    ) -> dict[str, Any]:
        """End a task as finished or failed; it becomes eligible for compaction."""
        trace = self.view.trace(trace_id)

        def work(tx: Transaction) -> dict[str, Any]:
            tx.finish(trace_id, status=status)
            return {"trace_id": trace_id, "status": status, "steps": len(trace.steps)}

        call = ("finish_task", {"trace_id": trace_id, "status": status})
        return self._write(f"{status} task {trace_id}", request_id, call, work)

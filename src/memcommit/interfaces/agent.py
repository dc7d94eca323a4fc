"""What an agent does with its memory, bound to one tenant: the MCP server's tools.

Each public method of ``AgentMemory`` is one MCP tool: its docstring is what the
agent reads, and its annotated parameters become the tool's JSON schema. The
tenant is fixed when the object is made (from the server's configuration) and
is deliberately not a parameter of any method, so no tool call can name another
tenant. Every read and write goes through ``store.tenant(name)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from memcommit.errors import InvalidInput, NotFound
from memcommit.interfaces.request_ids import KEPT_ANSWERS, REQUEST_ORDER, REQUESTS, call_digest
from memcommit.interfaces.task_tools import TaskTools
from memcommit.interfaces.tool_fields import (
    Importance,
    Kind,
    Metadata,
    PoolSpec,
    RequestId,
    Scope,
    Tags,
    Text,
)
from memcommit.model import Commit, Memory
from memcommit.store import StoreLike, Transaction
from memcommit.tiers.memory import TieredMemory

if TYPE_CHECKING:
    from memcommit.recall import RecallOptions

#: How many excluded memories a recall shows by name; the rest are only counted.
NEAR_MISSES = 5


def memory_json(memory: Memory) -> dict[str, Any]:
    """A memory, every field, as the JSON an agent sees."""
    out: dict[str, Any] = {}
    for f in fields(memory):
        value = getattr(memory, f.name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        out[f.name] = value
    return out


def commit_json(commit: Commit) -> dict[str, Any]:
    """A commit with its changes, without their details, as JSON."""
    return {
        "seq": commit.seq,
        "id": commit.id,
        "time": commit.time.isoformat(),
        "author": commit.author,
        "message": commit.message,
        "changes": [
            {"op": c.op, "memory_id": c.memory_id, "version": c.version} for c in commit.changes
        ],
    }


def recall_options(
    tenant: str,
    budget: int,
    budget_unit: Literal["words", "tokens"],
    pools: list[PoolSpec] | None,
    **same: Any,
) -> RecallOptions:
    """The `RecallOptions` of one MCP recall call, for the server's tenant.

    The budget and its unit become `Words` or `Tokens`, and the pools poolsplit
    pools; every other argument of the tool (``same``) is the field of its name.
    """
    from memcommit.recall import Pool, RecallOptions, Tokens, Words

    pool_objects = None
    if pools:
        pool_objects = tuple(
            Pool(p.name, p.max_tokens, p.max_entries, tuple(p.kinds) if p.kinds else None)
            for p in pools
        )
    unit = Words if budget_unit == "words" else Tokens
    return RecallOptions(tenant=tenant, budget=unit(budget), pools=pool_objects, **same)


class AgentMemory(TaskTools):
    """One tenant's memory, as the operations an agent can call.

    ``kept_answers``: how many of the newest request ids keep their answer; a
    retry under an older id is a new write.
    """

    def __init__(
        self,
        store: StoreLike,
        tenant: str,
        *,
        author: str = "mcp",
        kept_answers: int = KEPT_ANSWERS,
    ) -> None:
        if isinstance(kept_answers, bool) or not isinstance(kept_answers, int) or kept_answers < 1:
            raise InvalidInput("kept_answers", kept_answers, "must be a positive integer")
        self.tenant = tenant
        self.author = author
        self.kept_answers = kept_answers
        self.view = store.tenant(tenant)
        #: The tenant's working memory; it maintains itself after each commit.
        self.tiers = TieredMemory(self.view)

    def remember(
        self,
        content: Annotated[Text, Field(description="What to remember, in plain words.")],
        kind: Annotated[Kind, Field(description="fact, event, procedure, decision, ...")] = "fact",
        scope: Scope = "shared",
        key: Annotated[
            str | None,
            Field(
                description="Stable name of the fact; a newer one with the same key"
                " replaces it in recall."
            ),
        ] = None,
        importance: Importance = 0.5,
        tags: Tags | None = None,
        session: Annotated[str | None, Field(description="Conversation it came from.")] = None,
        project: str | None = None,
        metadata: Metadata = None,
        request_id: RequestId = None,
    ) -> dict[str, Any]:
        """Remember something worth knowing later (a fact, event, procedure or decision).

        Commits one new memory. Give a `key` to a fact that can change (e.g.
        "user.editor"): recall then returns only its latest version. A memory of
        kind "correction" is a rule that loads into every recall, as `correct`
        stores it. Returns the new memory's id and the commit that stored it.
        """
        arguments = {
            "content": content,
            "kind": kind,
            "scope": scope,
            "key": key,
            "importance": importance,
            "tags": tags,
            "session": session,
            "project": project,
            "metadata": metadata,
        }

        def work(tx: Transaction) -> dict[str, Any]:
            memory = tx.add(
                content,
                kind=kind,
                scope=scope,
                tenant=self.tenant,
                session=session,
                key=key,
                importance=importance,
                tags=tuple(tags or ()),
                project=project,
                metadata=metadata,
                always=kind == "correction",  # the recall tool promises corrections always load
            )
            tx.message = f"remember {memory.kind} {memory.id}"
            return {"id": memory.id, "version": memory.version}

        return self._write("remember", request_id, ("remember", arguments), work)

    def recall(
        self,
        query: Annotated[str, Field(description="What you need to know, in words.")],
        budget: Annotated[int, Field(ge=0, description="Size of the context.")] = 300,
        budget_unit: Literal["words", "tokens"] = "words",
        max_records: Annotated[int | None, Field(ge=0)] = 20,
        kinds: Annotated[list[Kind] | None, Field(description="Only these kinds.")] = None,
        scopes: Annotated[list[Scope] | None, Field(description="Only these scopes.")] = None,
        session: Annotated[str | None, Field(description="The current conversation.")] = None,
        include_previous_sessions: bool = True,
        latest_per_key: Annotated[
            bool,
            Field(
                description="Drop older memories whose key has a newer one (default); false"
                " lets every version compete."
            ),
        ] = True,
        recency_weight: Annotated[
            float, Field(ge=0.0, le=1.0, description="0 ranks by text match only, 1 by age.")
        ] = 0.0,
        pools: Annotated[
            list[PoolSpec] | None,
            Field(description="Reserved budgets per kind of memory (corrections always load)."),
        ] = None,
    ) -> dict[str, Any]:
        """Recall the memories relevant to a query, packed into a context of bounded size.

        Corrections always load first. Returns `context` (text ready for a prompt),
        the `selected` memories, the budget `used`, `excluded`: how many memories
        were left out and why, with the closest misses by name, and a `note` when
        there is something to know (e.g. nothing stored yet). Recall does not count
        as use: call `touch` with the ids you actually relied on.
        """
        from memcommit.recall import recall

        options = recall_options(
            self.tenant,
            budget,
            budget_unit,
            pools,
            max_records=max_records,
            kinds=kinds,
            scopes=scopes,
            session=session,
            include_previous_sessions=include_previous_sessions,
            latest_per_key=latest_per_key,
            recency_weight=recency_weight,
        )
        context = recall(self.view, query, options)
        # Counted from the index, and only the best-ranked misses built as rows.
        counts = context.explanation.counts()
        near = [
            row
            for row in context.explanation.page(0, NEAR_MISSES, outcome="excluded")
            if row.score is not None
        ]
        return {
            "context": context.render(),
            "note": context.note,
            "selected": [
                {"id": m.id, "kind": m.kind, "scope": m.scope, "content": m.content}
                for m in context.selected
            ],
            "used": dict(context.used),
            "excluded": {
                "total": counts.excluded,
                "by_reason": dict(sorted(counts.reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
                "near_misses": [
                    {"id": row.memory.id, "reason": row.reason, "score": row.score} for row in near
                ],
            },
        }

    def correct(
        self,
        content: Annotated[Text, Field(description="The rule to follow from now on.")],
        scope: Scope = "shared",
        key: Annotated[
            str | None, Field(description="Name of the rule; a newer one replaces it.")
        ] = None,
        tags: Tags | None = None,
        request_id: RequestId = None,
    ) -> dict[str, Any]:
        """Record a behavioural correction: a rule that loads into every recall, always.

        Use it when you were told not to repeat a mistake ("never force-push to
        main"). Corrections bypass budgets, so keep them short and few.
        """

        def work(tx: Transaction) -> dict[str, Any]:
            memory = tx.add(
                content,
                kind="correction",
                scope=scope,
                tenant=self.tenant,
                key=key,
                importance=1.0,
                tags=tuple(tags or ()),
                always=True,
            )
            tx.message = f"correct {memory.id}"
            return {"id": memory.id, "version": memory.version}

        arguments = {"content": content, "scope": scope, "key": key, "tags": tags}
        return self._write("correct", request_id, ("correct", arguments), work)

    def forget(
        self,
        id: Annotated[str, Field(min_length=1, description="The memory's id.")],
        mode: Annotated[
            Literal["invalidate", "purge"],
            Field(description="invalidate: no longer holds, kept in history; purge: erased."),
        ] = "invalidate",
        confirm: Annotated[
            str | None, Field(description="For purge only: the same id again, to confirm.")
        ] = None,
        request_id: RequestId = None,
    ) -> dict[str, Any]:
        """Forget a memory: mark it as no longer holding, or purge its content for good.

        `invalidate` (the default) keeps it in history, out of recall. `purge`
        erases its content from every version and cannot be undone: it runs only
        when `confirm` repeats the id.
        """
        call = ("forget", {"id": id, "mode": mode, "confirm": confirm})
        earlier = self._answered(request_id, "forget", call_digest(*call))
        if earlier is not None:  # a retry: the memory may be purged already
            return earlier
        self.view.get(id)
        if mode == "purge" and confirm != id:
            raise InvalidInput(
                "confirm", confirm, "purge erases the content for good; repeat the id to confirm"
            )

        def work(tx: Transaction) -> dict[str, Any]:
            if mode == "purge":
                tx.purge(id)
            elif tx.read([id])[0].status != "invalidated":  # forgotten already: no commit
                tx.invalidate(id)
            return {"id": id, "mode": mode}

        return self._write(f"forget ({mode}) {id}", request_id, call, work)

    def touch(
        self,
        ids: Annotated[
            list[Annotated[str, Field(min_length=1)]],
            Field(min_length=1, description="Ids of the memories you actually used."),
        ],
    ) -> dict[str, Any]:
        """Report which memories you actually used, so working memory keeps them close.

        Call it after answering, with the ids that helped. Used memories stay in
        short-term memory; archived ones are paged back in.
        """
        unknown = []
        for memory_id in ids:
            try:
                self.view.get(memory_id)
            except NotFound:
                unknown.append(memory_id)
        if unknown:
            raise NotFound("ids", unknown)
        result = self.tiers.touch(ids)
        return {
            "touched": list(ids),
            "hits": result.hits,
            "warm_hits": result.warm_hits,
            "misses": result.misses,
            "paged_in": result.paged_in,
            "evicted": result.evicted,
        }

    def log(
        self,
        limit: Annotated[int, Field(ge=1, le=1000, description="How many commits.")] = 20,
    ) -> dict[str, Any]:
        """List the most recent commits to this memory, newest first: who changed what, and why."""
        return {"commits": [commit_json(c) for c in self.view.log(limit=limit)]}

    def working(self) -> dict[str, Any]:
        """The memories in working memory now."""
        return {"working": [memory_json(m) for m in self.tiers.working()]}

    def memory(self, memory_id: str) -> dict[str, Any]:
        """One memory of this tenant, all its fields."""
        return memory_json(self.view.get(memory_id))


#: The methods of AgentMemory that the MCP server offers as tools, in this order.
TOOLS = (
    "remember",
    "recall",
    "correct",
    "forget",
    "begin_task",
    "add_step",
    "finish_task",
    "touch",
    "log",
)


__all__ = [
    "KEPT_ANSWERS",
    "REQUESTS",
    "REQUEST_ORDER",
    "TOOLS",
    "AgentMemory",
    "PoolSpec",
    "commit_json",
    "memory_json",
    "recall_options",
]

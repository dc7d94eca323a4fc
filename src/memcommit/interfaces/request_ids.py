"""Writes an agent can retry: each tool call's answer kept under its request id, in its commit.

A client whose reply was lost calls the same tool again with the same
``request_id``; `AnsweredWrites._write` finds the answer stored by the first
call (under the writers' lock) and returns it without writing twice. Only the
newest ``kept_answers`` ids keep theirs: a ring of slots in the tenant's state.

A call is kept as a digest of its arguments, never the arguments themselves;
still, a digest of a memory's text lets anyone who reads the store test a guess
at that text, so a purge of the memory a call wrote drops the call's digest, in
the purge's own commit (`forget_purged`, connected by the package top with
``Store.connect_purging``): a crash lands both or neither. Each memory an answer
names has the request ids that name it under a namespace of its own (`named_by`),
so a purge reads only those. Its answer stays: a retry still gets it, and under
that id any call of the same tool is then taken for the retry.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.store import StoreLike, TenantViewLike, Transaction
from memcommit.store import validate as v

#: The state namespace where each write tool's call and answer are kept under its request id.
REQUESTS = "mcp-calls"
#: The state namespace of the order request ids came in: slot ``n % kept`` holds the n-th.
REQUEST_ORDER = "mcp-call-order"
#: How many request ids a tenant's answers are kept for: the newest ones; older ids are forgotten.
KEPT_ANSWERS = 10_000
#: The key in `REQUEST_ORDER` of the count of calls known to be in `named_by`: every one
#: while it equals "next" (a call kept by an earlier version moves "next" alone).
INDEXED = "indexed"
#: A purge of more memories than this in one tenant reads every kept call once instead.
READ_ALL_ABOVE = 64


class _Repeated(Exception):
    """Raised inside a commit block to drop it: the request was answered before."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer


def call_digest(tool: str, arguments: Mapping[str, Any]) -> str:
    """A digest of one tool call: equal for a retry, different for any other call.

    Kept instead of the arguments themselves, so a stored call never holds the
    text of a memory that is later purged.
    """
    text = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def named(kept: Any) -> list[str]:
    """The memories (and trace) a kept call's answer names (none for anything malformed:
    a purge must never fail on it)."""
    answer = kept.get("answer") if isinstance(kept, dict) else None
    if not isinstance(answer, dict):
        return []
    return [mid for mid in (answer.get("id"), answer.get("trace_id")) if isinstance(mid, str)]


def named_by(memory_id: str) -> str:
    """The state namespace whose keys are the request ids of the kept calls naming
    ``memory_id`` (one namespace a memory: a call adds a key, never rewrites a list)."""
    return "mcp-call-by-memory-" + hashlib.sha256(memory_id.encode("utf-8")).hexdigest()[:32]


def forget_purged(store: StoreLike, purged: list[tuple[str, str]]) -> None:
    """Inside a commit that purges ``purged`` ((tenant, id) each): drop the digest of every
    stored call whose answer names one of them, and the `named_by` keys of them.

    Each purged memory's `named_by` keys are read, unless the tenant purges more
    than `READ_ALL_ABOVE` at once or a call was kept without its keys (by an earlier
    version: `INDEXED` short of "next"): then every kept call is read, once, and the
    keys made for the rest. A tenant that never kept a call costs a few reads."""
    by_tenant: dict[str, set[str]] = {}
    for tenant, memory_id in purged:
        by_tenant.setdefault(tenant, set()).add(memory_id)
    for tenant, ids in sorted(by_tenant.items()):
        view = store.tenant(tenant)
        kept_so_far = view.state_get(REQUEST_ORDER, "next", 0)
        indexed = view.state_get(REQUEST_ORDER, INDEXED, 0) == kept_so_far
        if indexed and len(ids) <= READ_ALL_ABOVE:
            naming = [(m, r) for m in sorted(ids) for r in view.state_items(named_by(m))]
            for memory_id, request_id in naming:
                _forget(view, request_id, view.state_get(REQUESTS, request_id), [memory_id])
            continue
        calls = view.state_items(REQUESTS)
        for request_id, kept in calls.items():
            gone = [m for m in named(kept) if m in ids]
            if gone:
                _forget(view, request_id, kept, gone)
            elif not indexed:  # made once for the calls an earlier version kept
                for memory_id in named(kept):
                    view.state_set(named_by(memory_id), request_id, True)
        if calls and not indexed:
            view.state_set(REQUEST_ORDER, INDEXED, kept_so_far)


def _forget(view: TenantViewLike, request_id: str, kept: Any, purged: list[str]) -> None:
    """Drop the digest of the call kept under ``request_id`` and its keys of ``purged``;
    a kept call that cannot be written back as JSON goes whole (erasure first)."""
    if isinstance(kept, dict) and kept.get("call") is not None:
        try:
            view.state_set(REQUESTS, request_id, {**kept, "call": None})
        except InvalidInput:
            view.state_delete(REQUESTS, request_id)
    for memory_id in purged:
        view.state_delete(named_by(memory_id), request_id)


class AnsweredWrites:
    """The commits of the write tools, each answered once per request id."""

    view: TenantViewLike
    author: str
    kept_answers: int

    def _commit(self, message: str) -> AbstractContextManager[Transaction]:
        return self.view.commit(message=message, author=self.author)

    def _answered(self, request_id: str | None, tool: str, digest: str) -> dict[str, Any] | None:
        """The stored answer of this very call under ``request_id``, or None if the id is new.

        The id of another call (another tool, or other arguments) is refused: a
        reused id must never swallow a different write.
        """
        if request_id is None:
            return None
        v.text("request_id", request_id)  # named as the caller gave it (state would say key)
        earlier = self.view.state_get(REQUESTS, request_id)
        if earlier is None:
            return None
        if earlier["call"] not in (digest, None) or earlier["tool"] != tool:  # None: purged
            raise InvalidInput(
                "request_id",
                request_id,
                f"already answered a different call (of {earlier['tool']}); a retry repeats"
                " the same tool with the same arguments, any other write needs a new request_id",
            )
        return dict(earlier["answer"])

    def _keep(self, request_id: str, tool: str, digest: str, answer: dict[str, Any]) -> None:
        """Store ``answer`` under ``request_id`` and forget the id that falls out of the window."""
        view = self.view
        n = int(view.state_get(REQUEST_ORDER, "next", 0))
        slot = str(n % self.kept_answers)
        oldest = view.state_get(REQUEST_ORDER, slot)
        if oldest is not None:
            forgotten = view.state_get(REQUESTS, oldest)
            view.state_delete(REQUESTS, oldest)
            for memory_id in named(forgotten):
                view.state_delete(named_by(memory_id), oldest)
        view.state_set(REQUEST_ORDER, slot, request_id)
        view.state_set(REQUEST_ORDER, "next", n + 1)
        if view.state_get(REQUEST_ORDER, INDEXED, 0) == n:  # every call before it has its keys
            view.state_set(REQUEST_ORDER, INDEXED, n + 1)
        view.state_set(REQUESTS, request_id, {"tool": tool, "call": digest, "answer": answer})
        for memory_id in named({"answer": answer}):
            view.state_set(named_by(memory_id), request_id, True)

    def _write(
        self,
        message: str,
        request_id: str | None,
        call: tuple[str, Mapping[str, Any]],
        work: Callable[[Transaction], dict[str, Any]],
    ) -> dict[str, Any]:
        """``work(tx)`` in one commit; its answer gets the seq (None when it changed nothing).

        ``call`` is the tool's name and arguments. With a ``request_id`` the
        answer is stored in the same commit, and the same call finding one
        stored (checked under the writers' lock) drops its commit and returns
        that answer: a client retrying a call whose reply was lost never writes
        twice. Another call under a known id is refused (`_answered`).
        """
        tool, arguments = call
        digest = call_digest(tool, arguments)
        try:
            with self._commit(message) as tx:
                earlier = self._answered(request_id, tool, digest)
                if earlier is not None:
                    raise _Repeated(earlier)
                answer = {**work(tx)}
                if request_id is not None:  # kept in this commit: its seq is asked for here
                    answer["commit"] = tx.pending.seq if tx.changed else None
                    self._keep(request_id, tool, digest, answer)
        except _Repeated as repeated:
            return repeated.answer
        # after the block: a write without a request id stays unordered until it lands
        answer["commit"] = tx.result.seq if tx.result is not None else None  # None: nothing landed
        return answer

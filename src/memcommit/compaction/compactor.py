"""``Compactor``: finished traces become long-term summaries, their steps archived.

For every trace its policy selects, one commit adds a summary memory (kind
"summary", tier "long", the trace's tenant and scope, provenance in metadata),
archives the steps, and marks the root as compacted and archives it too (the
summary holds its task: recall packs the summary, not both); history and as-of
reads before that commit still show the trace as it was. The
summaries are made before their commit opens, so a summarizer that fails leaves
its trace untouched and is reported, while the other traces still compact; so
does a trace another writer changed or purged a memory of meanwhile (the commit
checks each memory a summary carries is still as it was read).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcommit import inputs
from memcommit.commit_time import commit_at_or_after, landed
from memcommit.compaction import gcpause
from memcommit.compaction.fold import fold
from memcommit.compaction.outline import outline, task_text
from memcommit.compaction.policies import DONE, FinishedTraces, Partition, Policy
from memcommit.compaction.summary import MAX_BYTES, UnusableSummary, summarize, summarizer_name
from memcommit.errors import Conflict, InvalidInput, NotFound, Purged
from memcommit.model import LIVE_TIERS, Commit, Memory, Trace
from memcommit.store import Transaction, ViewLike, validate

#: Metadata key on a compacted trace's root: the id of the summary made from it.
COMPACTED_INTO = "compacted_into"

#: Traces listed per read while looking for candidates.
_PAGE = 1000


#: A summarizer: any callable from a Trace to JSON-serializable data.
Summarizer = Callable[[Trace], Any]

#: A merger: the task text and the summaries' data (oldest first) to one summary's data.
Merger = Callable[[str, Sequence[Any]], Any]

#: Told how far a long run has got: (done, total).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class TraceError:
    """Why one trace (or one group of summaries) was left as it was."""

    trace_id: str
    tenant: str
    error: str


@dataclass(frozen=True)
class CompactionResult:
    """What ``compact`` did: the traces compacted, their summaries, the steps archived."""

    traces: tuple[str, ...] = ()
    summaries: tuple[Memory, ...] = ()
    moved: tuple[str, ...] = ()
    errors: tuple[TraceError, ...] = ()
    commits: tuple[Commit, ...] = ()

    @property
    def commit(self) -> Commit | None:
        """The commit that did it (the last one when ``batch`` split the work), or None."""
        return self.commits[-1] if self.commits else None


@dataclass(frozen=True)
class MergeResult:
    """What ``merge`` did: the evolving summaries made and the summaries they superseded."""

    summaries: tuple[Memory, ...] = ()
    superseded: tuple[str, ...] = ()
    errors: tuple[TraceError, ...] = ()
    commit: Commit | None = None


@dataclass(frozen=True)
class _Plan:
    """One trace, summarized and ready to write."""

    trace: Trace
    content: str
    key: str | None
    metadata: dict[str, Any] = field(hash=False)

    @property
    def ids(self) -> set[str]:
        """The root and step ids this plan writes over."""
        return {self.trace.root.id, *(s.id for s in self.trace.steps)}


def _compactable(root: Memory) -> bool:
    """Whether a trace whose root reads as ``root`` may be compacted: neither purged nor
    already marked as compacted."""
    return root.status != "purged" and COMPACTED_INTO not in root.metadata


class _Held(Mapping[Partition, int]):
    """Records held outside the archive per (tenant, scope), counted on first use only."""

    def __init__(self, count: Callable[[], dict[Partition, int]]) -> None:
        self._count = count
        self._counts: dict[Partition, int] | None = None

    def _data(self) -> dict[Partition, int]:
        if self._counts is None:
            self._counts = self._count()
        return self._counts

    def __getitem__(self, part: Partition) -> int:
        return self._data()[part]

    def __iter__(self) -> Iterator[Partition]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())


class Compactor:
    """Turns the traces ``policy`` selects into long-term summaries made by ``summarizer``.

    ``max_bytes`` bounds a summary (its JSON and its rendered text); a bigger one
    is an error for that trace. ``key`` gives the summary's key from the trace
    (default: the root's key), which ``merge(by="key")`` groups on.
    """

    def __init__(
        self,
        store: ViewLike,
        policy: Policy | None = None,
        summarizer: Summarizer = outline,
        *,
        merger: Merger = fold,
        max_bytes: int = MAX_BYTES,
        key: Callable[[Trace], str | None] | None = None,
        author: str = "compactor",
    ) -> None:
        if not all(callable(getattr(store, name, None)) for name in ("commit", "find", "traces")):
            raise InvalidInput("store", store, "must be a memcommit store or tenant view")
        if key is not None and not callable(key):
            raise InvalidInput("key", key, "must be a callable Trace -> str or None")
        validate.text("author", author)  # checked now, not at the first commit (a trace's error)
        policy = policy if policy is not None else FinishedTraces()
        if not isinstance(policy, Policy):
            raise InvalidInput("policy", policy, "must have select(traces, now, held)")
        if not callable(summarizer):
            raise InvalidInput("summarizer", summarizer, "must be a callable Trace -> JSON data")
        if not callable(merger):
            raise InvalidInput("merger", merger, "must be a callable (task, summaries) -> JSON")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise InvalidInput("max_bytes", max_bytes, "must be a positive int")
        self.store = store
        self.policy = policy
        self.summarizer = summarizer
        self.merger = merger
        self.max_bytes = max_bytes
        self.key = key if key is not None else (lambda trace: trace.root.key)
        self.author = author

    # -- choosing ---------------------------------------------------------

    def _now(self, now: datetime | None) -> datetime:
        """``now`` checked, or the current UTC time for the policy.

        Commits get ``now`` as given, so without it the store's own clock dates them.
        """
        return inputs.now("now", now)

    def _held(self) -> dict[Partition, int]:
        held = self.store.find(tiers=LIVE_TIERS, live=True)
        return dict(Counter((m.tenant, m.scope) for m in held))

    def candidates(self) -> list[Trace]:
        """Traces not compacted yet (open ones too) whose root can still be marked.

        The store leaves out compacted traces itself (their roots carry the
        mark), so a run reads only the traces it may still compact. It lists
        them before it reads their memories: a root read marked was compacted by
        another writer in between, and is left out too (the commit then checks
        that the root is still as read, so the trace is compacted once).
        """
        out: list[Trace] = []
        after = None
        while True:
            page = self.store.traces(unmarked=COMPACTED_INTO, after=after, limit=_PAGE)
            out += [t for t in page if _compactable(t.root)]
            if len(page) < _PAGE:
                return out
            after = page[-1].id

    def select(self, now: datetime | None = None) -> list[Trace]:
        """The traces ``compact(now)`` would compact, in order; reads only.

        Whatever a policy returns, only done candidates are kept, each once: an
        open trace is still being written, and a compacted one is done for good.
        """
        candidates = self.candidates()
        done = {t.id for t in candidates if t.status in DONE}
        chosen = self.policy.select(candidates, self._now(now), _Held(self._held))
        kept = []
        for trace in chosen:
            if trace.id in done:
                done.discard(trace.id)
                kept.append(trace)
        return kept

    # -- summarizing ------------------------------------------------------

    def _usable(self, make: Callable[[], Any]) -> tuple[str, Any]:
        """Call a plug-in through the one summary path: (content, data), or UnusableSummary."""
        limit = getattr(self.store, "max_content_bytes", None)
        return summarize(make, max_bytes=self.max_bytes, content_bytes=limit)

    def _plan(self, trace: Trace) -> _Plan:
        """Summarize one trace; raises UnusableSummary when the summary cannot be kept."""
        content, data = self._usable(functools.partial(self.summarizer, trace))
        try:
            key = self.key(trace)
        except Exception as exc:  # the key function is a plug-in too
            raise UnusableSummary(f"key raised {type(exc).__name__}: {exc}") from exc
        if key is not None and (not isinstance(key, str) or not key.strip() or "\x00" in key):
            raise UnusableSummary(f"key returned {key!r}; it must be None or a non-empty string")
        built_from = [trace.root, *trace.steps]
        metadata = {
            "task": task_text(trace.root),
            "summary": data,
            "summarizer": summarizer_name(self.summarizer),
            "provenance": {
                "trace_id": trace.id,
                "trace_ids": [trace.id],
                "built_from": [m.id for m in built_from],
                "versions": {m.id: m.version for m in built_from},
            },
        }
        return _Plan(trace, content, key, metadata)

    # -- writing ----------------------------------------------------------

    def _write(self, tx: Transaction, plan: _Plan) -> tuple[Memory, list[str]]:
        """Inside ``tx``: the summary, the steps to the archive, the root marked and archived."""
        trace, root = plan.trace, plan.trace.root
        members = [root, *trace.steps]
        summary = tx.add(
            plan.content,
            kind="summary",
            tier="long",
            scope=trace.scope,
            tenant=trace.tenant,
            session=root.session,
            key=plan.key,
            importance=max(m.importance for m in members),
            tags=tuple(sorted({t for m in members for t in m.tags})),
            project=root.project,
            metadata=plan.metadata,
        )
        steps = [s for s in trace.steps if s.tier != "archive" and s.status != "purged"]
        tx.archive_many(steps)
        moved = [s.id for s in steps]
        tx.update(  # archived too: recall would otherwise pack the task beside its summary
            root.id,
            expected_version=root.version,
            metadata={**root.metadata, COMPACTED_INTO: summary.id},
            tier="archive",
        )
        return summary, moved

    def _commit(
        self,
        plans: list[_Plan],
        now: datetime | None,
        progress: Progress | None,
        done: int,
        total: int,
    ) -> tuple[Commit, list[Memory], list[str]]:
        """Write ``plans`` in one commit; all of them land or none."""
        summaries: list[Memory] = []
        moved: list[str] = []
        message = f"compact {len(plans)} trace{'s' if len(plans) != 1 else ''}"
        with commit_at_or_after(self.store, message=message, author=self.author, now=now) as tx:
            # one read checks that every memory a summary carries is still as it was read:
            # one purged or changed meanwhile raises, and `compact` drops its trace
            tx.read_unchanged([m for plan in plans for m in (plan.trace.root, *plan.trace.steps)])
            for i, plan in enumerate(plans, 1):
                summary, steps = self._write(tx, plan)
                summaries.append(summary)
                moved += steps
                if progress is not None:
                    progress(done + i, total)
        return landed(tx), summaries, moved

    def compact(
        self,
        now: datetime | None = None,
        *,
        batch: int | None = None,
        progress: Progress | None = None,
    ) -> CompactionResult:
        """Compact the traces the policy selects; one commit (or one per ``batch`` traces).

        A trace whose summarizer fails, or that another writer changed since it
        was read, is left as it was and reported in ``errors``. ``progress(done, total)``
        is told after each trace is written.
        """
        if batch is not None and (
            isinstance(batch, bool) or not isinstance(batch, int) or batch < 1
        ):
            raise InvalidInput("batch", batch, "must be a positive int or None")
        if progress is not None and not callable(progress):
            raise InvalidInput("progress", progress, "must be callable as progress(done, total)")
        self._now(now)  # checked before anything is read
        with gcpause.paused():
            pending = self.select(now)
        total = len(pending)
        size = batch or max(total, 1)
        errors: list[TraceError] = []
        commits, summaries, moved, traces = [], [], [], []
        while pending:
            # Let go of each batch's traces once written: a smaller heap keeps long runs linear.
            start = total - len(pending)
            with gcpause.paused():
                chunk, pending = self._plans(pending[:size], errors), pending[size:]
            while chunk:
                try:
                    with gcpause.paused():
                        commit, made, steps = self._commit(chunk, now, progress, start, total)
                except (Conflict, Purged, NotFound) as exc:
                    chunk = self._without_culprit(chunk, exc, errors)
                    continue
                commits.append(commit)
                summaries += made
                moved += steps
                traces += [p.trace.id for p in chunk]
                break
        return CompactionResult(
            tuple(traces), tuple(summaries), tuple(moved), tuple(errors), tuple(commits)
        )

    def _plans(self, traces: Sequence[Trace], errors: list[TraceError]) -> list[_Plan]:
        """Summaries for one batch of traces (made just before it is written, to bound memory)."""
        plans = []
        for trace in traces:
            try:
                plans.append(self._plan(trace))
            except UnusableSummary as exc:
                errors.append(TraceError(trace.id, trace.tenant, str(exc)))
        return plans

    @staticmethod
    def _without_culprit(
        chunk: list[_Plan], exc: Exception, errors: list[TraceError]
    ) -> list[_Plan]:
        """The plans left when a memory of one trace changed under us (another writer).

        A root or step changed, purged or gone since it was read leaves that trace
        alone (reported; its summary would carry text that no longer stands) and
        the rest is tried again; any other failure is not ours to hide.
        """
        culprit = getattr(exc, "memory_id", None) or getattr(exc, "value", None)
        lost = next((p for p in chunk if culprit in p.ids), None)
        if lost is None:
            raise exc
        errors.append(TraceError(lost.trace.id, lost.trace.tenant, f"changed meanwhile: {exc}"))
        return [p for p in chunk if p is not lost]

    # -- merging ----------------------------------------------------------

    def _groups(
        self, by: str, task: str | None, key: str | None, tenant: str | None
    ) -> dict[tuple[str, str, str], list[Memory]]:
        """Live summaries grouped by tenant, scope and task text (or key), oldest first."""
        found = self.store.find(kinds=["summary"], tenant=tenant, key=key, live=True)
        wanted = " ".join(task.split()) if task is not None else None
        groups: dict[tuple[str, str, str], list[Memory]] = {}
        for memory in found:
            label = memory.key if by == "key" else memory.metadata.get("task")
            if not isinstance(label, str) or (wanted is not None and label != wanted):
                continue
            groups.setdefault((memory.tenant, memory.scope, label), []).append(memory)
        for members in groups.values():
            members.sort(key=lambda m: (m.created_commit or 0, m.id))
        return {k: v for k, v in sorted(groups.items()) if len(v) > 1}

    def _merged_fields(self, members: list[Memory], task: str, data: Any) -> dict[str, Any]:
        """Fields of the summary that replaces ``members``: what they share, and provenance."""

        def shared(values: set[Any]) -> Any:
            return values.pop() if len(values) == 1 else None

        trace_ids: list[str] = []
        for m in members:
            provenance = m.metadata.get("provenance")
            found = provenance.get("trace_ids") if isinstance(provenance, Mapping) else None
            trace_ids += [t for t in found if isinstance(t, str)] if isinstance(found, list) else []
        return {
            "session": shared({m.session for m in members}),
            "key": shared({m.key for m in members}),
            "project": shared({m.project for m in members}),
            "importance": max(m.importance for m in members),
            "tags": tuple(sorted({t for m in members for t in m.tags})),
            "metadata": {
                "task": task,
                "summary": data,
                "summarizer": summarizer_name(self.merger),
                "provenance": {
                    "trace_ids": list(dict.fromkeys(trace_ids)),
                    "built_from": [m.id for m in members],
                    "versions": {m.id: m.version for m in members},
                },
            },
        }

    def merge(
        self,
        *,
        by: str = "task",
        task: str | None = None,
        key: str | None = None,
        tenant: str | None = None,
        now: datetime | None = None,
    ) -> MergeResult:
        """Fold the live summaries of each task into one evolving summary, in one commit.

        Summaries of the same tenant, scope and task text (``by="task"``) or key
        (``by="key"``) are folded by the merger into a new long-term summary, and
        each old one is superseded by it. ``task``, ``key`` and ``tenant`` narrow
        which summaries are looked at. A group the merger fails on is left as it
        was and reported.
        """
        if by not in ("task", "key"):
            raise InvalidInput("by", by, "must be either 'task' or 'key'")
        if task is not None and not isinstance(task, str):  # any length: a task is a root's text
            raise InvalidInput("task", task, "must be a task's text (a string) or None")
        self._now(now)  # checked before anything is read
        errors: list[TraceError] = []
        planned = []
        for (group_tenant, scope, label), members in self._groups(by, task, key, tenant).items():
            task_of = str(members[-1].metadata.get("task") or label)
            datas = [m.metadata.get("summary", m.content) for m in members]
            try:
                content, data = self._usable(functools.partial(self.merger, task_of, datas))
            except UnusableSummary as exc:
                errors.append(TraceError(str(label), group_tenant, str(exc)))
                continue
            fields = self._merged_fields(members, task_of, data)
            planned.append((members, content, {"tenant": group_tenant, "scope": scope, **fields}))
        if not planned:
            return MergeResult(errors=tuple(errors))
        made, superseded = [], []
        message = f"merge the summaries of {len(planned)} task{'s' if len(planned) != 1 else ''}"
        with commit_at_or_after(self.store, message=message, author=self.author, now=now) as tx:
            for members, content, fields in planned:
                merged = tx.add(content, kind="summary", tier="long", **fields)
                for member in members:
                    tx.supersede(member.id, merged.id)
                    superseded.append(member.id)
                made.append(merged)
        return MergeResult(tuple(made), tuple(superseded), tuple(errors), landed(tx))

"""The loader: the record stream turned back into one `Batch` per commit, each record checked."""

from __future__ import annotations

import heapq
import json
from collections import defaultdict
from datetime import datetime
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.model import OPS, STATUSES, Change, Commit, Memory
from memcommit.store import validate
from memcommit.store.backends import seals
from memcommit.store.backends.base import Backend, Batch, TraceRow
from memcommit.store.backends.vectors import VectorRow
from memcommit.store.records import memory as make_memory
from memcommit.store.transfer import vectors
from memcommit.store.transfer.format import FORMAT, READABLE, RECORD_TYPES, Progress, Summary

_TRACE_STATUSES = ("open", "finished", "failed")


class Loader:
    """Turns the record stream back into one `Batch` per commit."""

    def __init__(self, backend: Backend, progress: Progress | None) -> None:
        self.backend = backend
        self.progress = progress
        self.total: int | None = None
        self.batch: Batch | None = None
        self.versions: list[Memory] = []  # the versions of ``batch``, as they are read
        self.closes: dict[int, list[tuple[str, int, str]]] = defaultdict(list)
        self.usage: dict[str, tuple[int, int, int]] = {}
        self.erased: set[str] = set()  # ids with a version without content
        self.purged: set[str] = set()
        self.state: list[tuple[str, str, str]] = []
        self.counts = dict.fromkeys(RECORD_TYPES, 0)
        self.chained = True  # the export carries its chain (version 3 on)
        self.vectored = True  # and its vectors (version 4 on)
        self.vectors: list[tuple[int, VectorRow]] = []  # (line, row), written at the end
        self.seals: list[tuple[str | None, str | None]] = []  # of the versions of ``batch``
        self.hashes: dict[int, tuple[int, str]] = {}  # seq -> (line, exported hash)
        self.number = 0  # the line being read

    def take(self, number: int, record: Any) -> None:
        """Check one record and add it to the commit being rebuilt."""
        self.number = number
        try:
            if not isinstance(record, dict):
                raise InvalidInput("record", record, "must be a JSON object")
            kind = record.get("type")
            if self.total is None:
                if kind != "header" or record.get("format") != FORMAT:
                    raise InvalidInput("type", kind, f"the first line must be a {FORMAT} header")
                if record.get("version") not in READABLE:
                    raise InvalidInput(
                        "version", record.get("version"), f"must be one of {READABLE}"
                    )
                self.chained = record["version"] >= 3
                self.vectored = record["version"] >= 4
                self.total = _int("commits", record.get("commits"))
                return
            if kind == "commit":
                self._commit(record)
            elif kind == "version":
                self._version(record)
            elif kind == "trace":
                self._trace(record)
            elif kind == "usage":
                self._usage(record)
            elif kind == "state":
                self._state(record)
            elif kind == "vector" and self.vectored:
                self._flush()
                self.vectors.append((number, vectors.parsed(record)))
            else:
                raise InvalidInput("type", kind, f"must be one of {', '.join(RECORD_TYPES)}")
        except InvalidInput as exc:
            raise InvalidInput(f"line {number}: {exc.field}", exc.value, exc.reason) from None
        self.counts[kind] += 1

    def _commit(self, r: dict[str, Any]) -> None:
        self._flush()
        seq = _int("seq", r.get("seq"))
        if seq != self.counts["commit"] + 1:
            raise InvalidInput("seq", seq, f"expected {self.counts['commit'] + 1}")
        changes, tenants = [], []
        for item in _list("changes", r.get("changes")):
            if not isinstance(item, dict) or item.get("op") not in OPS:
                raise InvalidInput("changes", item, f"each needs an op among {', '.join(OPS)}")
            changes.append(
                Change(
                    item["op"],
                    validate.optional_text("memory_id", item.get("memory_id")),
                    validate.count("version", item.get("version")),
                    validate.metadata(item.get("detail")),
                )
            )
            tenants.append(validate.optional_text("tenant", item.get("tenant")))
        commit = Commit(
            seq,
            validate.text("id", r.get("id")),
            validate.optional_text("parent", r.get("parent")),
            _time("time", r.get("time")),
            validate.text("author", r.get("author")),
            _str("message", r.get("message")),
            tuple(changes),
        )
        self.versions = []
        self.seals = []
        self.batch = Batch(
            commit=commit,
            tenants=tenants,
            versions=self.versions,
            closes=self.closes.pop(seq, []),
            seals=self.seals if self.chained else None,
        )
        if self.chained:
            self.hashes[seq] = (self.number, _hex("hash", r.get("hash"), 64))

    def _version(self, r: dict[str, Any]) -> None:
        batch = self._current("version")
        seq = batch.commit.seq
        m = _memory(r)
        if m.updated_commit != seq:
            raise InvalidInput("updated_commit", m.updated_commit, f"must be its commit, {seq}")
        end_seq = validate.count("end_seq", r.get("end_seq"))
        if end_seq is not None and end_seq < seq:
            raise InvalidInput("end_seq", end_seq, f"is before the version's commit {seq}")
        if not m.content:
            self.erased.add(m.id)
        if m.status == "purged":
            self.purged.add(m.id)
        if self.chained:
            salt = r.get("salt")
            erased = r.get("erased")
            if (salt is None) == (erased is None):
                raise InvalidInput("salt", salt, "a version has a salt, or (erased) a body hash")
            self.seals.append(
                (None if salt is None else _hex("salt", salt, 32),
                 None if erased is None else _hex("erased", erased, 64))
            )  # fmt: skip
        self.versions.append(m)
        batch.ended.append(end_seq == seq)
        if end_seq is not None and end_seq > seq:
            self.closes[end_seq].append((m.id, m.version, m.tenant))

    def _trace(self, r: dict[str, Any]) -> None:
        batch = self._current("trace")
        status = r.get("status")
        if status not in _TRACE_STATUSES:
            raise InvalidInput("status", status, f"must be one of {', '.join(_TRACE_STATUSES)}")
        ended_seq = validate.count("ended_seq", r.get("ended_seq"))
        trace = TraceRow(
            validate.text("id", r.get("id")),
            validate.text("tenant", r.get("tenant")),
            validate.text("scope", r.get("scope")),
            validate.optional_text("session", r.get("session")),
            status,
            _int("last_step", r.get("last_step")),
            _int("started_seq", r.get("started_seq")),
            _time("started_at", r.get("started_at")),
            ended_seq,
            _optional_time("ended_at", r.get("ended_at")),
        )
        if max(trace.started_seq, ended_seq or 0) != batch.commit.seq:
            raise InvalidInput("started_seq", trace.started_seq, "trace is out of place")
        batch.traces.append(trace)

    def _usage(self, r: dict[str, Any]) -> None:
        self._flush()
        count = _int("count", r.get("count"))
        first = _int("first_tick", r.get("first_tick"))
        last = _int("last_tick", r.get("last_tick"))
        if count < 1 or not 1 <= first <= last or (count == 1) != (first == last):
            raise InvalidInput("count", count, f"does not fit ticks {first}..{last}")
        self.usage[validate.text("id", r.get("id"))] = (count, first, last)

    def _state(self, r: dict[str, Any]) -> None:
        self._flush()
        value = _str("value", r.get("value"))
        try:
            json.loads(value)
        except json.JSONDecodeError:
            raise InvalidInput("value", value, "must be JSON text") from None
        namespace = validate.text("namespace", r.get("namespace"))
        self.state.append((namespace, validate.text("key", r.get("key")), value))

    def _current(self, kind: str) -> Batch:
        if self.batch is None:
            raise InvalidInput("type", kind, "must follow the commit that wrote it")
        return self.batch

    def _flush(self) -> None:
        if self.batch is None:
            return
        self.backend.write(self.batch)
        self.batch = None
        if self.progress is not None:
            self.progress(self.counts["commit"], self.total or 0)

    def finish(self) -> Summary:
        """Write what is still pending and the use counts; the counts of what was loaded."""
        if self.total is None:
            raise InvalidInput("input", "", "is empty; expected a memcommit export")
        self._flush()
        if self.counts["commit"] != self.total:
            raise InvalidInput("commits", self.counts["commit"], f"header says {self.total}")
        if self.closes:
            seq = min(self.closes)
            raise InvalidInput("end_seq", seq, "names a commit that is not in the input")
        unexplained = sorted(self.erased - self.purged)
        if unexplained:
            raise InvalidInput("content", unexplained[0], "is empty but the memory is not purged")
        self._check_hashes()
        if self.usage:
            self.backend.record_uses(replay_uses(self.usage))
        for namespace, key, value in self.state:  # after the uses: it holds their clock too
            self.backend.state_set(namespace, key, value)
        vectors.write(self.backend, self.vectors)
        if not self.chained:  # hashed here, not as written: the chain says where it starts
            record = {"format": seals.FORMAT, "sealed_upto": self.total}
            self.backend.state_set(*seals.CHAIN_STATE, json.dumps(record))
        return Summary(*self.counts.values())

    def _check_hashes(self) -> None:
        """InvalidInput naming the first commit whose recomputed hash is not the exported one."""
        if not self.chained:
            return
        for seq, stored in self.backend.hashes(sorted(self.hashes)):
            number, exported = self.hashes[seq]
            if stored != exported:
                raise InvalidInput(
                    f"line {number}: hash",
                    exported,
                    f"is not the hash of commit {seq} as exported ({stored}): the commit, a"
                    " version it wrote, or an earlier commit was edited",
                )


def replay_uses(usage: dict[str, tuple[int, int, int]]) -> list[str]:
    """A sequence of uses, one per tick from 1, that gives every id its (count, first, last).

    Ticks are global, so each tick is one use of one id: the first and last uses
    are pinned, and the uses in between go, tick by tick, to the waiting id whose
    last tick comes soonest (earliest deadline first), which finds an order
    whenever one exists, and one always does for counts the store recorded.
    """
    pinned: dict[int, str] = {}
    for memory_id, (_, first, last) in usage.items():
        for tick in (first, last):
            if pinned.setdefault(tick, memory_id) != memory_id:
                raise InvalidInput("usage", memory_id, f"shares tick {tick} with another id")
    total = sum(count for count, _, _ in usage.values())
    starts = sorted((first, last, mid, count - 2) for mid, (count, first, last) in usage.items())
    waiting: list[tuple[int, str, int]] = []  # (last tick, id, middle uses left)
    order: list[str] = []
    index = 0
    for tick in range(1, total + 1):
        if tick in pinned:
            order.append(pinned[tick])
            continue
        while index < len(starts) and starts[index][0] < tick:
            first, last, mid, middle = starts[index]
            if middle > 0:
                heapq.heappush(waiting, (last, mid, middle))
            index += 1
        if waiting and waiting[0][0] < tick:
            raise InvalidInput("usage", waiting[0][1], "its uses do not fit between its ticks")
        if not waiting:
            raise InvalidInput("usage", tick, "no id was used at this tick")
        last, mid, middle = heapq.heappop(waiting)
        order.append(mid)
        if middle > 1:
            heapq.heappush(waiting, (last, mid, middle - 1))
    return order


# -- checking one record -----------------------------------------------------------


def _memory(r: dict[str, Any]) -> Memory:
    status = r.get("status")
    if status not in STATUSES:
        raise InvalidInput("status", status, f"must be one of {', '.join(STATUSES)}")
    content = _str("content", r.get("content"))
    if content:  # empty only when purged, which `Loader.finish` checks
        validate.content(content, limit=len(content.encode("utf-8")) + 1)
    step = validate.count("step", r.get("step"))
    return make_memory(
        {
            "id": validate.text("id", r.get("id")),
            "content": content,
            "kind": validate.kind(r.get("kind")),
            "scope": validate.text("scope", r.get("scope")),
            "tenant": validate.text("tenant", r.get("tenant")),
            "session": validate.optional_text("session", r.get("session")),
            "key": validate.optional_text("key", r.get("key")),
            "importance": validate.importance(r.get("importance")),
            "tags": validate.tags(r.get("tags")),
            "project": validate.optional_text("project", r.get("project")),
            "always": validate.flag("always", r.get("always")),
            "token_count": validate.count("token_count", r.get("token_count")),
            "trace_id": validate.optional_text("trace_id", r.get("trace_id")),
            "step": step,
            "metadata": validate.metadata(r.get("metadata")),
            "valid_from": _optional_time("valid_from", r.get("valid_from")),
            "valid_to": _optional_time("valid_to", r.get("valid_to")),
            "superseded_by": validate.optional_text("superseded_by", r.get("superseded_by")),
            "status": status,
            "tier": validate.tier(r.get("tier")),
            "version": _int("version", r.get("version"), least=1),
            "created_at": _time("created_at", r.get("created_at")),
            "created_commit": _int("created_commit", r.get("created_commit"), least=1),
            "updated_at": _time("updated_at", r.get("updated_at")),
            "updated_commit": _int("updated_commit", r.get("updated_commit"), least=1),
        }
    )


def _hex(name: str, value: Any, length: int) -> str:
    if not isinstance(value, str) or len(value) != length or value.strip("0123456789abcdef"):
        raise InvalidInput(name, value, f"must be {length} lowercase hex digits")
    return value


def _int(name: str, value: Any, *, least: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidInput(name, value, f"must be an integer >= {least}")
    return value


def _str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInput(name, value, "must be a string")
    return value


def _list(name: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidInput(name, value, "must be a list")
    return value


def _optional_time(name: str, value: Any) -> datetime | None:
    return None if value is None else _time(name, value)


def _time(name: str, value: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(_str(name, value))
    except ValueError:
        raise InvalidInput(name, value, "must be an ISO 8601 time") from None
    return validate.moment(name, moment, optional=False)

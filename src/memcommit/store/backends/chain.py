"""Walking the hash chain of a SQL store: hashing an old history once, and verifying it.

Both work on the raw rows through two functions a backend hands in (``select``:
a query's rows; ``write_all``: one statement for many rows), so they run inside
the backend's migration transaction as well as in a read. `seal_history` runs
once, right after the migration that adds the chain; `walk` is the check behind
`Store.verify`: it recomputes every version's digest from its fields and every
commit's hash from its fields, its parent's hash and its versions' digests, and
names what does not match and how (see `Problem`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from memcommit.store.backends import seals
from memcommit.store.backends.problems import Problem, Walk
from memcommit.store.backends.sql import COMMIT, VERSION_ROW, Rows, names
from memcommit.store.ids import seq_of
from memcommit.store.records import to_text

Select = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
WriteAll = Callable[[str, Iterable[Sequence[Any]]], None]
Progress = Callable[[int, int], None]

#: Rows read per query while walking (keyset pages: memory stays bounded per page).
PAGE = 5000
#: The most problems one walk lists (the first is the one that matters).
MOST = 20
_COMMIT_SELECT = names(COMMIT)
_VERSION_SELECT = names(VERSION_ROW)
_POS = {c.field: i for i, c in enumerate(VERSION_ROW)}
_ID, _VERSION, _SEQ, _END = _POS["id"], _POS["version"], _POS["updated_commit"], _POS["end_seq"]
_SALT, _DIGEST, _STATUS = _POS["salt"], _POS["digest"], _POS["status"]
_BODY = tuple(_POS[f] for f in seals.BODY)
_EMPTY_BODY = ("", "[]", "{}")


def _time_text(stored: Any) -> str:
    """A stored commit time as the canonical text: SQLite stores that text itself."""
    return stored if isinstance(stored, str) else to_text(stored)  # type: ignore[return-value]


def header_of(parent_hash: str | None, row: Sequence[Any]) -> bytes:
    """The canonical header of a stored commit row (`COMMIT` order)."""
    f = dict(zip((c.field for c in COMMIT), row, strict=True))
    return seals.commit_header(
        parent_hash,
        f["seq"],
        f["id"],
        f["parent"],
        _time_text(f["time"]),
        f["author"],
        f["message"],
        f["changes"],
    )


def _versions(select: Select, rows: Rows, after: int) -> Iterable[tuple[Any, ...]]:
    """Every version row a walk after commit ``after`` must see, in (id, version) order.

    Those written after it, and those a commit after it ended (their end_seq moved).
    """
    mark = rows.dialect.mark
    last: tuple[str, int] | None = None
    while True:
        where = f"(seq > {mark} OR end_seq > {mark})"
        params: list[Any] = [after, after]
        if last is not None:  # a row value: both databases seek the primary key to it
            where += f" AND (id, version) > ({mark}, {mark})"
            params += [last[0], last[1]]
        page = select(
            f"SELECT {_VERSION_SELECT} FROM versions WHERE {where}"
            f" ORDER BY id, version LIMIT {PAGE}",
            params,
        )
        yield from page
        if len(page) < PAGE:
            return
        last = (page[-1][_ID], page[-1][_VERSION])


def _commits(select: Select, after: int, mark: str) -> Iterable[tuple[Any, ...]]:
    """Every commit row after seq ``after``, in seq order, a page at a time."""
    while True:
        page = select(
            f"SELECT {_COMMIT_SELECT} FROM commits WHERE seq > {mark} ORDER BY seq LIMIT {PAGE}",
            (after,),
        )
        yield from page
        if len(page) < PAGE:
            return
        after = page[-1][0]


def _counted(select: Select, after: int, mark: str) -> int:
    versions = select(
        f"SELECT count(*) FROM versions WHERE seq > {mark} OR end_seq > {mark}", (after, after)
    )[0][0]
    commits = select(f"SELECT count(*) FROM commits WHERE seq > {mark}", (after,))[0][0]
    return int(versions) + int(commits)


class _Tally:
    """Progress told every `PAGE` rows (and at the end)."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def step(self) -> None:
        self.done += 1
        if self.progress is not None and self.done % PAGE == 0:
            self.progress(self.done, self.total)

    def end(self) -> None:
        if self.progress is not None:
            self.progress(self.done, self.total)


class Chained:
    """`Backend.chain` of a SQL backend: ``class MyBackend(Chained, sql.SQLBackend)``."""

    rows: ClassVar[Rows]
    _select: Select

    def chain(self, *, after: int = 0, progress: Progress | None = None) -> Walk:
        return walk(self.rows, self._select, after=after, progress=progress)


def walk(
    rows: Rows,
    select: Select,
    *,
    after: int = 0,
    progress: Progress | None = None,
) -> Walk:
    """Verify every commit after seq ``after`` (0: all) and every version they touched.

    The chain is anchored at the stored hash of commit ``after``: an incremental
    walk trusts what an earlier one verified (`Store.verify` checks that anchor
    against a witness when it is given one).
    """
    mark = rows.dialect.mark
    out = Walk()
    tally = _Tally(progress, _counted(select, after, mark) if progress else 0)
    found = _check_versions(rows, select, after, out, tally)
    anchor = select(f"SELECT id, hash FROM commits WHERE seq = {mark}", (after,)) if after else []
    if after and not anchor:
        out.problems.append(Problem("missing", after, "the commit to verify from is not stored"))
        return out
    prev_id, prev_hash = anchor[0] if anchor else (None, None)
    prev_seq = after
    for row in _commits(select, after, mark):
        tally.step()
        out.commits += 1
        seq = row[0]
        try:
            problem = _commit_problem(row, prev_seq, prev_id, prev_hash, found)
        except (ValueError, TypeError, IndexError, AttributeError) as exc:  # not decodable
            problem = Problem("edited", seq, f"it cannot be read back ({exc})")
        if problem is not None:
            out.problems.append(problem)
        prev_seq, prev_id, prev_hash = seq, row[1], row[6]
    for (memory_id, version), (seq, _) in sorted(found.items(), key=lambda kv: kv[1][0]):
        if seq > after:
            out.problems.append(
                Problem("inserted", seq, "no commit wrote this version", memory_id, version)
            )
    tally.end()
    out.problems.sort(key=lambda p: p.seq if p.seq is not None else 0)
    del out.problems[MOST:]
    return out


def _commit_problem(
    row: tuple[Any, ...],
    prev_seq: int,
    prev_id: str | None,
    prev_hash: str | None,
    found: dict[tuple[str, int], tuple[int, str]],
) -> Problem | None:
    """What is wrong with one stored commit, given the one before it (None: nothing).

    Takes the commit's versions out of ``found``, so what is left at the end was
    written by no commit.
    """
    seq, commit_id, parent, stored = row[0], row[1], row[2], row[6]
    problem = None
    if seq != prev_seq + 1:
        gap = f"{prev_seq + 1}" if seq == prev_seq + 2 else f"{prev_seq + 1} to {seq - 1}"
        problem = Problem("missing", prev_seq + 1, f"commit {gap} is not stored")
    elif seq_of(commit_id) != seq:
        problem = Problem(
            "reordered", seq, f"it holds commit {commit_id}, which names seq {seq_of(commit_id)}"
        )
    elif parent != prev_id:
        problem = Problem(
            "reordered", seq, f"its parent is {parent}, not the commit before it ({prev_id})"
        )
    digests: list[str] = []
    for memory_id, version in seals.wrote(json.loads(row[-1])):
        seen = found.pop((memory_id, version), None)
        if seen is None:
            problem = problem or Problem(
                "missing", seq, "the version it wrote is not stored", memory_id, version
            )
            continue
        if seen[0] != seq:
            problem = problem or Problem(
                "reordered", seq, f"its version is stored as commit {seen[0]}'s",
                memory_id, version,
            )  # fmt: skip
        digests.append(seen[1])
    if problem is None and seals.commit_hash(header_of(prev_hash, row), digests) != stored:
        problem = Problem(
            "edited",
            seq,
            "its hash does not match its fields, its versions and its parent's hash"
            " (this commit or its parent's hash was rewritten)",
        )
    return problem


def _check_versions(
    rows: Rows, select: Select, after: int, out: Walk, tally: _Tally
) -> dict[tuple[str, int], tuple[int, str]]:
    """Each version's digest recomputed; (id, version) -> (seq, digest) of the ones seen.

    Also: the versions of one memory follow each other (each ends where the next
    begins, the last is current), and an erased one (no salt) has an empty body
    and belongs to a purged memory.
    """
    found: dict[tuple[str, int], tuple[int, str]] = {}
    digest_of = rows.digest_of
    prev: tuple[Any, ...] | None = None
    erased_in: str | None = None  # the memory whose versions are read, if one was erased

    def ended(last: tuple[Any, ...]) -> None:
        if last[_END] is not None:
            add("missing", last, f"it ends at commit {last[_END]}, which has no next version")
        elif erased_in == last[_ID] and last[_STATUS] != "purged":
            add("edited", last, "an earlier version is erased, but the memory was never purged")

    def add(kind: str, r: tuple[Any, ...], detail: str) -> None:
        out.problems.append(Problem(kind, r[_SEQ], detail, r[_ID], r[_VERSION]))

    for r in _versions(select, rows, after):
        tally.step()
        out.versions += 1
        if prev is not None and prev[_ID] != r[_ID]:
            ended(prev)
        elif prev is not None and prev[_VERSION] + 1 == r[_VERSION] and prev[_END] != r[_SEQ]:
            add("edited", prev, f"it ends at commit {prev[_END]}; its next version is {r[_SEQ]}'s")
        if prev is None or prev[_ID] != r[_ID]:
            erased_in = None
        try:
            digest = digest_of(r)
        except (TypeError, ValueError) as exc:  # a value of a type no field holds
            digest = ""
            add("edited", r, f"it cannot be read back ({exc})")
        else:
            if digest != r[_DIGEST]:
                add("edited", r, "its fields do not match its digest")
        if r[_SALT] is None:
            erased_in = r[_ID]
            if tuple(r[i] for i in _BODY) != _EMPTY_BODY:
                add("edited", r, "it is erased (no salt) but holds content, tags or metadata")
        found[(r[_ID], r[_VERSION])] = (r[_SEQ], digest)
        prev = r
    if prev is not None:
        ended(prev)
    return found


def seal_history(
    rows: Rows, select: Select, write_all: WriteAll, progress: Progress | None = None
) -> int:
    """Hash every commit and version of a store written before the chain; the newest seq hashed.

    Run once, in the transaction of the migration that added the chain's columns.
    Records `seals.CHAIN_STATE` with ``sealed_upto``: the hashes of those commits
    vouch for the history as it stood at this migration, not as it was written.
    """
    p = rows.dialect.mark
    tally = _Tally(progress, _counted(select, 0, p) if progress else 0)
    digests: dict[tuple[str, int], str] = {}
    seal = f"UPDATE versions SET salt = {p}, digest = {p} WHERE id = {p} AND version = {p}"
    sealed: list[tuple[str, str, str, int]] = []
    for r in _versions(select, rows, 0):  # a page at a time, each sealed before the next
        tally.step()
        (salt,) = seals.salts(1)
        digest = rows.digest_of((*r[:_SALT], salt, *r[_SALT + 1 :]))
        digests[(r[_ID], r[_VERSION])] = digest
        sealed.append((salt, digest, r[_ID], r[_VERSION]))
        if len(sealed) == PAGE:
            write_all(seal, sealed)
            sealed = []
    write_all(seal, sealed)
    parent_hash = None
    upto = 0
    hashes: list[tuple[str, int]] = []
    for row in _commits(select, 0, p):
        tally.step()
        wrote = seals.wrote(json.loads(row[-1]))
        parent_hash = seals.commit_hash(
            header_of(parent_hash, row), [digests[k] for k in wrote if k in digests]
        )
        hashes.append((parent_hash, row[0]))
        upto = row[0]
    write_all(f"UPDATE commits SET hash = {p} WHERE seq = {p}", hashes)
    record = json.dumps({"format": seals.FORMAT, "sealed_upto": upto})
    write_all(
        f"INSERT INTO state (namespace, name, value) VALUES ({p}, {p}, {p})",
        [(*seals.CHAIN_STATE, record)],
    )
    tally.end()
    return upto

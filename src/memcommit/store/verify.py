"""`Store.verify` and `Store.witness`: is the stored log the log that was written?

A `Witness` is the newest commit's (seq, id, hash): a line of text a user keeps
outside the store (another machine, a ticket, a printout). `verify` walks the
hash chain (`memcommit.store.backends.chain.walk`) and, given a witness, refuses
a store that is behind it (rolled back, cut at the tail) or whose commit at the
witness's seq has another hash (forked: history rewritten from there on).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.store.backends.base import Backend
from memcommit.store.backends.problems import Problem
from memcommit.store.backends.seals import CHAIN_STATE, FORMAT

_TEXT = re.compile(r"memcommit-witness/(\d+) seq=(\d+) id=([0-9a-f]{32}|-) hash=([0-9a-f]{64}|-)\Z")


@dataclass(frozen=True)
class Witness:
    """The head of a store's chain, to keep outside it: ``str(w)`` is one line of text.

    ``seq`` 0 (with ``id`` and ``hash`` None) is the empty store.
    """

    seq: int
    id: str | None
    hash: str | None

    def __str__(self) -> str:
        return (
            f"memcommit-witness/{FORMAT} seq={self.seq} id={self.id or '-'} hash={self.hash or '-'}"
        )

    @classmethod
    def parse(cls, text: Any, *, field: str = "witness") -> Witness:
        """The witness ``str(w)`` wrote (a Witness is returned as it is)."""
        if isinstance(text, Witness):
            return text
        found = _TEXT.match(text.strip()) if isinstance(text, str) else None
        if found is None or int(found.group(1)) != FORMAT:
            raise InvalidInput(
                field,
                text,
                f"must be a witness line: memcommit-witness/{FORMAT} seq=N id=<32 hex>"
                " hash=<64 hex>",
            )
        seq = int(found.group(2))
        commit_id = None if found.group(3) == "-" else found.group(3)
        digest = None if found.group(4) == "-" else found.group(4)
        if (seq == 0) != (commit_id is None) or (commit_id is None) != (digest is None):
            raise InvalidInput(field, text, "seq 0 (the empty store) has no id and no hash")
        return cls(seq, commit_id, digest)


@dataclass(frozen=True)
class VerifyReport:
    """What `Store.verify` found: ``ok`` when nothing; ``problems[0]`` is the first.

    ``after`` is the commit the walk started after (0: the whole chain);
    ``commits`` and ``versions`` count the rows it checked; ``head`` is the witness
    of the store as verified; ``sealed_upto`` the newest commit whose hash was
    computed by the migration to the chain rather than when it was written.
    """

    problems: tuple[Problem, ...]
    after: int
    commits: int
    versions: int
    head: Witness
    sealed_upto: int

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first(self) -> Problem | None:
        """The first problem in chain order (None when ok)."""
        return self.problems[0] if self.problems else None


def witness(backend: Backend) -> Witness:
    """The witness of the newest commit."""
    tip = backend.tip()
    if tip is None:
        return Witness(0, None, None)
    return Witness(tip[0], tip[1], dict(backend.hashes([tip[0]])).get(tip[0]))


def since_seq(backend: Backend, since: Any) -> tuple[int, list[Problem]]:
    """The seq a walk starts after (``since``: a seq or a witness), and the anchor's problems."""
    if since is None:
        return 0, []
    if isinstance(since, bool) or not isinstance(since, int | str | Witness):
        raise InvalidInput("since", since, "must be a commit seq or a witness")
    if isinstance(since, int):
        if since < 0:
            raise InvalidInput("since", since, "must be a commit seq >= 0")
        return since, []
    w = Witness.parse(since, field="since")
    return w.seq, against(backend, w)


def against(backend: Backend, w: Witness) -> list[Problem]:
    """How the store fails the witness ``w``: behind it, or forked from it (empty: neither)."""
    tip = backend.tip()
    newest = tip[0] if tip else 0
    if newest < w.seq:
        return [
            Problem(
                "behind",
                newest,
                f"the newest commit is {newest}, but the witness saw commit {w.seq}"
                " (the store was rolled back or cut)",
            )
        ]
    if w.seq == 0:
        return []
    stored = dict(backend.hashes([w.seq])).get(w.seq)
    if stored != w.hash:
        return [
            Problem(
                "forked",
                w.seq,
                f"its hash is {stored}, the witness's {w.hash} (history was rewritten from here)",
            )
        ]
    return []


def verify(
    backend: Backend,
    *,
    since: Any = None,
    expect: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    """`Store.verify` over ``backend``, in one read snapshot (writers go on meanwhile)."""
    expected = None if expect is None else Witness.parse(expect, field="expect")
    if progress is not None and not callable(progress):
        raise InvalidInput("progress", progress, "must be callable as progress(done, total)")
    backend.begin_read()
    try:
        after, problems = since_seq(backend, since)
        walked = backend.chain(after=after, progress=progress)
        problems += walked.problems
        if expected is not None:
            problems += against(backend, expected)
        head = witness(backend)
        state = backend.state_get(*CHAIN_STATE)
    finally:
        backend.rollback()
    problems.sort(key=lambda p: p.seq if p.seq is not None else 0)
    sealed_upto = int(json.loads(state).get("sealed_upto", 0)) if state else 0
    return VerifyReport(
        problems=tuple(problems),
        after=after,
        commits=walked.commits,
        versions=walked.versions,
        head=head,
        sealed_upto=sealed_upto,
    )

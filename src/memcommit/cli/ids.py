"""Short ids, as git shortens hashes, and the ids people type back.

A short id is the shortest string that still tells the shown ids apart, at
least ``MIN_ID`` digits. memcommit ids begin with their creation time (memories
made in the same millisecond share 31 of their 32 digits; commit ids begin with
their seq), so the distinguishing digits are at the end: a short id is the
shortest unique *suffix*, shown after "…". Every command taking a memory or a
commit accepts it back, as well as the full id or a prefix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memcommit.cli.moments import parse_as_of
from memcommit.errors import InvalidInput, NotFound
from memcommit.store import CommitRef, ViewLike

MIN_ID = 7
ELLIPSIS = "…"
#: Fewest digits a typed short id may have.
MIN_TYPED = 4
_HEX = re.compile(r"[0-9a-f]+")


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id -> its shortest unique suffix (at least MIN_ID digits, not all decimal) after "…".

    Sorted by their reversed text, ids sharing a suffix are neighbours: one
    digit more than the longest suffix shared with a neighbour is unique.
    """
    backwards = sorted({id[::-1] for id in ids})
    shown: dict[str, str] = {}
    for i, rev in enumerate(backwards):
        shared = max(
            (_common_prefix(rev, backwards[j]) for j in (i - 1, i + 1) if 0 <= j < len(backwards)),
            default=0,
        )
        n = max(MIN_ID, shared + 1)
        while n < len(rev) and rev[:n].isdigit():  # a plain number would read as a commit seq
            n += 1
        id = rev[::-1]
        shown[id] = id if n >= len(id) else ELLIPSIS + id[-n:]
    return shown


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _digits(text: str) -> str:
    return text.strip().removeprefix(ELLIPSIS).removeprefix("...")


def _one(field: str, text: str, what: str, candidates: Iterable[str]) -> str:
    part = _digits(text)
    if len(part) < MIN_TYPED:
        raise InvalidInput(
            field, text, f"give the full id or at least {MIN_TYPED} of its last digits"
        )
    matches = [c for c in candidates if c.endswith(part) or c.startswith(part)]
    if not matches:
        raise NotFound(field, text)
    if len(matches) > 1:
        raise InvalidInput(field, text, f"matches {len(matches)} {what}; give more digits")
    return matches[0]


def resolve_memory(view: ViewLike, text: str, *, field: str = "id") -> str:
    """A memory id from a full id or a short one ("…4be01f3", "4be01f3" or a prefix).

    A full id is returned as it is (the library says if it does not exist); a
    short one must match exactly one of the view's memories, which are read to
    find it.
    """
    if len(text.strip()) == 32:
        return text.strip()
    return _one(field, text, "memories", (m.id for m in view.find(live=False)))


def is_short_id(text: str, *, numbers_are_seqs: bool = True) -> bool:
    """Whether ``text`` reads as a short id ("…" and digits, or 7 to 31 hex digits).

    A plain number is a commit seq where one may be given (``numbers_are_seqs``).
    """
    part = _digits(text)
    if text.strip().startswith((ELLIPSIS, "...")):
        return bool(_HEX.fullmatch(part))
    number = numbers_are_seqs and part.isdigit()
    return bool(_HEX.fullmatch(part)) and MIN_ID <= len(part) < 32 and not number


def resolve_as_of(view: ViewLike, text: str | None, *, field: str = "as-of") -> CommitRef | None:
    """``--as-of`` and commit arguments: a seq, a full or short commit id, or a time.

    A number that is also the end of a commit id is that commit when it is no
    seq of the store, and refused as ambiguous when it is one: never silently
    the wrong commit.
    """
    if text is not None and text.strip().isdigit() and len(text.strip()) >= MIN_TYPED:
        return _seq_or_commit(view, text, field)
    if text is None or not is_short_id(text):
        return parse_as_of(text, field=field)
    return _one(field, text, "commits", (c.id for c in view.log()))


def _seq_or_commit(view: ViewLike, text: str, field: str) -> int | str:
    number = text.strip()
    ends = [c.id for c in view.log() if c.id.endswith(number)]
    if not ends:
        return int(number)
    if 1 <= int(number) <= view.head_seq:
        raise InvalidInput(
            field, text, f"is both commit seq {int(number)} and commit {ends[0]}; "
            f"give {ELLIPSIS}{number} for the commit id or the seq's full id",
        )  # fmt: skip
    return _one(field, text, "commits", ends)

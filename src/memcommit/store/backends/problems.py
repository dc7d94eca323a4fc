"""What a walk of the hash chain finds: `Problem`, one per commit or version in doubt.

Its own module so the backend protocol (`base`) can name a walk's result
without importing the walk, which is built on the SQL base.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: How each kind of problem reads; `Problem.kind` is one of these keys.
KINDS = {
    "edited": "its stored fields do not match its digest or hash",
    "missing": "a row the chain names is not stored",
    "reordered": "a row is stored out of its place in the chain",
    "inserted": "a row is stored that no commit of the chain wrote",
    "behind": "the store is older than the witness",
    "forked": "the store's history differs from the witness's",
}


@dataclass(frozen=True)
class Problem:
    """One thing the chain does not vouch for: which commit or version, and how.

    ``kind`` is a key of `KINDS`; ``seq`` the commit it concerns (the first one a
    reader would be misled from); ``memory_id`` and ``version`` name a version.
    """

    kind: str
    seq: int | None
    detail: str
    memory_id: str | None = None
    version: int | None = None

    def __str__(self) -> str:
        what = f"commit {self.seq}" if self.seq is not None else "the store"
        if self.memory_id is not None:
            what += f", memory {self.memory_id} version {self.version}"
        return f"{what}: {self.kind}: {self.detail}"


@dataclass
class Walk:
    """What one walk saw: the problems, and how many commits and versions it checked."""

    problems: list[Problem] = field(default_factory=list)
    commits: int = 0
    versions: int = 0

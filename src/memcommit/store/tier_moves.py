"""Moving memories between tiers inside a commit: one at a time, or many read at once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memcommit.errors import InvalidInput, Purged
from memcommit.model import Memory
from memcommit.store import validate as v
from memcommit.store.pending import Buffer, Versions


class TierMoves(Buffer):
    """`move`, `archive`, `restore`, `page_in` and their bulk forms, each a new version."""

    def move(self, id: str, tier: str) -> Memory:
        """Move to another tier (a new version); moving to the current tier changes nothing."""
        return self._to_tier(id, v.tier(tier), "move")

    def archive(self, id: str) -> Memory:
        """Move to the archive tier."""
        return self._to_tier(id, "archive", "archive")

    def restore(self, id: str, tier: str = "short") -> Memory:
        """Bring an archived memory back to ``tier`` (nothing happens if it is not archived)."""
        v.tier(tier)
        if tier == "archive":
            raise InvalidInput("tier", tier, "restore to short, mid or long")
        cur = self._current(id, writable=True)
        return cur if cur.tier != "archive" else self._to_tier(id, tier, "restore")

    def page_in(self, id: str) -> Memory:
        """Bring an archived memory back to the short tier, recorded as a page-in."""
        cur = self._current(id, writable=True)
        return cur if cur.tier != "archive" else self._to_tier(id, "short", "page_in")

    def move_many(self, items: Iterable[str | Memory], tier: str) -> Sequence[Memory]:
        """`move` each of ``items`` (ids, or memories as read: see `read`), read in one query."""
        return self._many_to_tier(self._load(items), v.tier(tier), "move")

    def archive_many(self, items: Iterable[str | Memory]) -> Sequence[Memory]:
        """`archive` each of ``items`` (ids, or memories as read: see `read`), read in one query."""
        return self._many_to_tier(self._load(items), "archive", "archive")

    def _many_to_tier(self, ids: list[str], tier: str, op: str) -> Sequence[Memory]:
        """`_to_tier` for many ids already in the buffer, without a Memory per step between."""
        self._check_open()
        p = self.pending
        latest = self._latest
        out = []
        for id in ids:
            cur = latest[id]
            if cur["status"] == "purged":
                raise Purged(id)
            if cur["tier"] != tier:
                version = cur["version"] + 1
                detail = {"from": cur["tier"], "to": tier}
                cur = {
                    **cur, "tier": tier, "version": version, "updated_at": p.time,
                    "updated_commit": p.seq, "metadata": cur["metadata"] or None,
                }  # fmt: skip
                latest[id] = cur
                self._versions.append(cur)
                self._changes.append((op, id, version, detail))
                self._tenants.append(cur["tenant"])
            out.append(cur)
        return Versions(out)

    def _to_tier(self, id: str, tier: str, op: str) -> Memory:
        cur = self._current(id, writable=True)
        if cur.tier == tier:
            return cur
        return self._next(cur, op, {"from": cur.tier, "to": tier}, {"tier": tier})

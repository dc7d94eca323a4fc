"""A tenant index at one moment: the columns a recall reads, and the arrays a file holds.

`Snapshot` is what one recall filters and packs from: the columns as they
were when it began, whatever commits land meanwhile. `Exported` is the compact
image `memcommit.recall.index.persist` writes, its arrays named in `SECTIONS`
(the column table's, the postings', the vocabulary's and a few more).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memcommit.recall.index import postings, table, vocabulary
from memcommit.recall.index.blobs import DocIds
from memcommit.recall.index.columns import Codes, Column
from memcommit.recall.index.order import birth_order, birth_rank
from memcommit.recall.index.sections import Section

#: Every array a snapshot file holds: restoring one that lacks any is refused.
SECTIONS = (
    *table.SECTIONS,
    *postings.SECTIONS,
    *("norms", "ids", "id_starts", "id_order", "links_before", "links_after"),
    *vocabulary.SECTIONS,
)


@dataclass(frozen=True)
class Exported:
    """A tenant index in compact form: current documents only, used terms and codes only.

    What `TenantIndex.export` writes and `TenantIndex.restore` reads back (the
    persisted snapshot): named numpy arrays, strings included (as UTF-8 blobs
    with offsets, see `memcommit.recall.index.blobs`). Nothing of a retired (updated
    or purged) document survives an export.
    """

    arrays: dict[str, np.ndarray]


class Snapshot:
    """One tenant index's documents and filter columns at one moment (read-only).

    Each column of the table (`memcommit.recall.index.table.COLUMNS`) is an
    attribute (``snap.kind``: a numpy array indexed by document), and so is each
    code table (``snap.kinds``). Appends and merges never touch the arrays a
    snapshot holds; those written in place are copied. Code tables only grow,
    so codes seen here keep their meaning. A column still in its snapshot
    file's section is checked when first read (a recall reads a few of them).
    """

    def __init__(
        self,
        *,
        tenant: str,
        generation: int,
        ids: DocIds,
        size: int,
        tables: Mapping[str, Codes],
        columns: Mapping[str, np.ndarray | Section],
    ) -> None:
        self.tenant, self.generation, self.ids, self.size = tenant, generation, ids, size
        vars(self).update(tables)
        self._sections: dict[str, Section] = {}
        for name, values in columns.items():
            if isinstance(values, Section):
                self._sections[name] = values
            else:
                setattr(self, name, values)

    @classmethod
    def taken(
        cls,
        tenant: str,
        generation: int,
        ids: DocIds,
        tables: Mapping[str, Codes],
        columns: Mapping[str, Column],
    ) -> Snapshot:
        """The snapshot of an index's ``columns`` as they are (state ``generation``).

        Columns written in place (`IndexColumn.mutable`) are copied; the others
        are views (or their sections, not checked yet).
        """
        return cls(
            tenant=tenant,
            generation=generation,
            ids=ids,
            size=columns["alive"].size,
            tables=tables,
            columns={
                column.name: columns[column.name].view().copy()
                if column.mutable
                else columns[column.name].view_or_section()
                for column in table.COLUMNS
            },
        )

    def __getattr__(self, name: str) -> Any:
        """A column still in its section: checked now, then kept as an attribute."""
        section = self.__dict__.get("_sections", {}).get(name)
        if section is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        values: np.ndarray = section.whole()[: self.size]
        setattr(self, name, values)
        return values

    def nbytes(self) -> int:
        """What this snapshot holds beside its index: copied columns and what it derived."""
        held = [value for value in vars(self).values() if isinstance(value, np.ndarray)]
        winners = self.__dict__.get("_winners")
        if winners is not None:
            held.append(winners[1])
        return sum(int(array.nbytes) for array in held if array.base is None)

    def holds(self, now_us: int, docs: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Where ``docs`` still hold at ``now_us``: active, begun and not yet ended."""
        begun = self.valid_from[docs] <= now_us
        holding: np.ndarray = self.status_ok[docs] & begun & (now_us < self.valid_to[docs])
        return holding

    def key_winners(self, now_us: int) -> np.ndarray:
        """Per document: False when a newer version of its key still holds at ``now_us``.

        The newest version of a key that still holds wins; versions older than it
        are superseded, and versions newer than it (ended or invalidated) are left
        to the validity filter. A key none of whose versions holds keeps its
        newest (the index's ``latest``). Kept for the last ``now_us`` asked: one
        recall asks many times at one moment.
        """
        memo: tuple[int, np.ndarray] | None = self.__dict__.get("_winners")
        if memo is not None and memo[0] == now_us:
            return memo[1]
        out: np.ndarray = self.latest
        keyed = self.keyed_latest
        stale = keyed[~self.holds(now_us, keyed)] if len(keyed) else keyed
        if len(stale):
            out = out.copy()
            members = np.flatnonzero(np.isin(self.key, self.key[stale]) & self.alive)
            created, commit, ids = self.created, self.commit, self.ids
            groups: dict[int, list[int]] = {}
            for doc in members.tolist():
                groups.setdefault(int(self.key[doc]), []).append(doc)
            for docs in groups.values():
                docs.sort(key=lambda d: (int(created[d]), int(commit[d]), ids[d]), reverse=True)
                holding = self.holds(now_us, np.array(docs))
                if not holding.any():
                    continue
                first = int(np.argmax(holding))  # the newest that holds
                out[docs[: first + 1]] = True
                out[docs[first + 1 :]] = False
        self.__dict__["_winners"] = (now_us, out)
        return out

    @functools.cached_property
    def keyed_latest(self) -> np.ndarray:
        """The current documents that are the newest of their key, ascending (few, or none)."""
        return np.flatnonzero(self.latest & self.alive & (self.key >= 0))

    @functools.cached_property
    def always_docs(self) -> np.ndarray:
        """The current documents with always scope, ascending."""
        return np.flatnonzero(self.alive & self.always)

    @functools.cached_property
    def birth_rank(self) -> np.ndarray:
        """Each document's position in (creation time, id) order, the tie-break of every ranking."""
        return birth_rank(self.created, self.ids)

    def births_of(self, docs: np.ndarray) -> np.ndarray:
        """``docs``' (distinct) order among themselves by `birth_rank`, without ranking all."""
        if "birth_rank" in self.__dict__:  # already ranked: its order restricted to docs
            return birth_order(self.birth_rank, self.ids, docs)
        return birth_order(self.created, self.ids, docs)


assert not table.NAMES & {*vars(Snapshot), "tenant", "generation", "ids", "size"}, (
    "a column or code table shadows an attribute of Snapshot"
)

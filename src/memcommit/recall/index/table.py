"""The index's column table: one row per filter column, and everything derived from it.

`COLUMNS` is the one place an index column is written. From it come the
tenant index's in-memory arrays (one growable `Column` each, reached as
``index.kind``), the code tables of coded columns (``index.kinds``: a column
whose value is text stores codes, numbered in its table), the snapshot's
sections (`SECTIONS`: each column, each code table as a blob and its offsets),
what a read-only `memcommit.recall.index.snapshot.Snapshot` copies, and the row
builder (`rows`): compiled from the rows' expressions into one plain function,
as fast as a hand-written tuple, the way the store's row encoders are
(`memcommit.store.backends.sql`). A new column is one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memcommit.model import Memory
from memcommit.recall.index.blobs import Strings, encode
from memcommit.recall.index.columns import NO_END, NO_START, Codes, Column, to_micros
from memcommit.recall.index.sections import Section
from memcommit.recall.index.text import speaker_of


@dataclass(frozen=True)
class IndexColumn:
    """One filter column: its name, its numpy type, and its value for a new document.

    ``value`` is a Python expression of the memory ``m`` and its text ``text``
    (``m.content or ""``). ``codes`` names the code table of a coded column:
    ``value`` is then the text (or None: code -1) that the table numbers.
    ``mutable``: a later change writes the column in place, so a `Snapshot` copies it.
    """

    name: str
    dtype: type
    value: str
    codes: str | None = None
    mutable: bool = False


#: Every filter column of the index, in row order.
COLUMNS: tuple[IndexColumn, ...] = (
    IndexColumn("alive", np.bool_, "True", mutable=True),  # False once retired
    IndexColumn("kind", np.int16, "m.kind", codes="kinds"),
    IndexColumn("scope", np.int32, "m.scope", codes="scopes"),
    IndexColumn("session", np.int32, "m.session", codes="sessions"),
    IndexColumn("key", np.int32, "m.key", codes="keys"),
    IndexColumn("tier", np.int16, "m.tier", codes="tiers"),
    IndexColumn("created", np.int64, "to_micros(m.created_at, NO_START)"),
    IndexColumn("commit", np.int64, "m.created_commit or 0"),
    IndexColumn("version", np.int64, "m.version"),  # which stored vector is this document's
    IndexColumn("valid_from", np.int64, "to_micros(m.valid_from, NO_START)"),
    IndexColumn("valid_to", np.int64, "to_micros(m.valid_to, NO_END)"),
    IndexColumn("status_ok", np.bool_, 'm.status == "active" and m.superseded_by is None'),
    IndexColumn("always", np.bool_, "bool(m.always)"),
    IndexColumn("latest", np.bool_, "True", mutable=True),  # the newest of its key
    IndexColumn("words", np.int32, "len(text.split())"),
    IndexColumn("chars", np.int32, "len(text)"),
    IndexColumn("token_count", np.int32, "m.token_count or 0"),
    # quality hook: who said each memory (recall/scoring/speakers.py)
    IndexColumn("speaker", np.int32, "speaker_of(m)", codes="speakers"),
)

CODED = tuple(column for column in COLUMNS if column.codes is not None)
#: The code tables, in column order (the row builder takes them in this order).
CODE_TABLES = tuple(str(column.codes) for column in CODED)
#: What the columns and code tables are called as attributes (``index.kind``, ``snap.kinds``).
NAMES = frozenset((*(column.name for column in COLUMNS), *CODE_TABLES))
#: The sections of a snapshot the columns and code tables fill.
SECTIONS = (
    *(column.name for column in COLUMNS),
    *(name for table in CODE_TABLES for name in (table, table + "_starts")),
)


def _compile() -> Callable[..., list[tuple[Any, ...]]]:
    """The row builder ``rows(memories, *code tables)``: a tuple per memory, in `COLUMNS` order."""

    def value(column: IndexColumn) -> str:
        """The column's expression; a coded one looked up in its table's dict, inline
        (`Codes.code` only for a value not coded yet: None is never a key, so -1)."""
        if not column.codes:
            return column.value
        held, table = f"v_{column.name}", column.codes
        found = f"{table}_codes[{held}]"
        return f"({found} if ({held} := {column.value}) in {table}_codes else {table}.code({held}))"

    namespace: dict[str, Any] = {
        "to_micros": to_micros,
        "NO_START": NO_START,
        "NO_END": NO_END,
        "speaker_of": speaker_of,
    }
    assert not namespace.keys() & {*CODE_TABLES, "m", "text", "out", "memories"}, "a shadowed name"
    source = (
        f"def rows(memories, {', '.join(CODE_TABLES)}):\n"
        + "".join(f"    {table}_codes = {table}.codes\n" for table in CODE_TABLES)
        + "    out = []\n"
        "    for m in memories:\n"
        '        text = m.content or ""\n'
        f"        out.append(({', '.join(value(column) for column in COLUMNS)},))\n"
        "    return out\n"
    )
    exec(compile(source, "<memcommit index rows>", "exec"), namespace)
    built: Callable[..., list[tuple[Any, ...]]] = namespace["rows"]
    return built


_ROWS = _compile()


def rows(memories: Sequence[Memory], tables: Mapping[str, Codes]) -> list[tuple[Any, ...]]:
    """Each memory's value in each of `COLUMNS` (a new document: alive and latest).

    Text is coded in ``tables`` (a code table by name), assigning new codes on first sight.
    """
    return _ROWS(memories, *(tables[name] for name in CODE_TABLES))


def new_columns() -> dict[str, Column]:
    """An empty array for each of `COLUMNS`, by name."""
    return {column.name: Column(column.dtype) for column in COLUMNS}


def new_tables() -> dict[str, Codes]:
    """An empty code table for each coded column, by table name."""
    return {name: Codes() for name in CODE_TABLES}


def _recode(column: np.ndarray, values: list[Hashable]) -> tuple[np.ndarray, list[str]]:
    """``column``'s codes renumbered densely over the codes it uses (-1 stays -1).

    Every code table holds text, so the values it keeps come back as strings.
    """
    used = np.unique(column[column >= 0])
    table = np.full(len(values) + 1, -1, dtype=np.int64)  # the last slot maps -1 to -1
    table[used] = np.arange(len(used))
    return table[column].astype(column.dtype), [str(values[code]) for code in used.tolist()]


def export(
    columns: Mapping[str, Column], tables: Mapping[str, Codes], keep: np.ndarray
) -> dict[str, np.ndarray]:
    """The rows ``keep`` of every column, codes renumbered over the values those rows use.

    Codes no kept row uses are left out of the tables, so a purged memory's
    session or key leaves no trace in a snapshot.
    """
    arrays = {column.name: columns[column.name].view()[keep] for column in COLUMNS}
    for column in CODED:
        table = str(column.codes)
        arrays[column.name], values = _recode(arrays[column.name], tables[table].values)
        arrays[table], arrays[table + "_starts"] = encode(values)
    return arrays


def restore(columns: Mapping[str, Column], sections: Mapping[str, Section]) -> dict[str, Codes]:
    """Adopt a snapshot's column sections (checked when first read); its code tables.

    The tables decode their strings when first used.
    """
    for column in COLUMNS:
        columns[column.name].adopt(sections[column.name])
    return {
        name: Codes.later(Strings(sections[name], sections[name + "_starts"]).decoded)
        for name in CODE_TABLES
    }

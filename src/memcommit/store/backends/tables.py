"""The SQL tables as columns, and the dialect: what every statement, encoder and decoder comes from.

Both backends store the same columns, with tags, metadata and a commit's
changes as the same JSON text. Each table is written once below (`MEMORY`,
`COMMIT`, `TRACE`, `USAGE`, `STATE`); every column list, placeholder list, row
encoder (`rows`) and statement (`writes`, `queries`) is derived from it. A
`Dialect` names the few things that differ between two SQL databases: the
placeholder, the boolean literals, how a list of values is passed, and whether
times and flags travel as Python values (psycopg) or as text and integers
(sqlite3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from memcommit.model import Memory
from memcommit.store.backends.base import TraceRow


@dataclass(frozen=True)
class Column:
    """One stored column: its SQL name, the model field it holds, and how it is stored.

    ``codec``: "plain" (as it is), "time" (a datetime), "flag" (a bool), "list"
    (a tuple as JSON text) or "map" (a dict as JSON text).
    """

    name: str
    field: str
    codec: str = "plain"


def _same_names(*names: str, codecs: dict[str, str] | None = None) -> tuple[Column, ...]:
    """Columns named like the fields they hold."""
    return tuple(Column(n, n, (codecs or {}).get(n, "plain")) for n in names)


#: The ``versions`` table: one row per memory version, in `Memory` field order.
MEMORY: tuple[Column, ...] = (
    Column("id", "id"),
    Column("content", "content"),
    Column("kind", "kind"),
    Column("scope", "scope"),
    Column("tenant", "tenant"),
    Column("session", "session"),
    Column("mkey", "key"),
    Column("importance", "importance"),
    Column("tags", "tags", "list"),
    Column("project", "project"),
    Column("always", "always", "flag"),
    Column("token_count", "token_count"),
    Column("trace_id", "trace_id"),
    Column("step", "step"),
    Column("metadata", "metadata", "map"),
    Column("valid_from", "valid_from", "time"),
    Column("valid_to", "valid_to", "time"),
    Column("superseded_by", "superseded_by"),
    Column("status", "status"),
    Column("tier", "tier"),
    Column("version", "version"),
    Column("created_at", "created_at", "time"),
    Column("created_commit", "created_commit"),
    Column("updated_at", "updated_at", "time"),
    Column("seq", "updated_commit"),
)
#: The version row's one column that is not a memory field: the commit that replaced it.
END_SEQ = Column("end_seq", "end_seq")
#: The version row's seal (`seals`): its salt and digest, and the body hash purge keeps.
SALT = Column("salt", "salt")
DIGEST = Column("digest", "digest")
ERASED = Column("erased", "erased")
#: Every column of a version row, as inserted: `MEMORY`, `END_SEQ`, then the seal.
VERSION_ROW = (*MEMORY, END_SEQ, SALT, DIGEST, ERASED)
#: The ``commits`` table: a commit with its chain hash and its changes as JSON text
#: (changes last: a read without them selects ``COMMIT[:-1]``).
COMMIT = _same_names(
    "seq", "id", "parent", "time", "author", "message", "hash", "changes",
    codecs={"time": "time"},
)  # fmt: skip
#: The ``traces`` table, in `TraceRow` field order.
TRACE = _same_names(
    *(f.name for f in fields(TraceRow)), codecs={"started_at": "time", "ended_at": "time"}
)
#: The ``usage`` table: one use count per memory id.
USAGE = _same_names("id", "count", "first_tick", "last_tick")
#: The ``state`` table: small JSON text values by (namespace, name).
STATE = _same_names("namespace", "name", "value")

assert [c.field for c in MEMORY] == [f.name for f in fields(Memory)], "MEMORY order"


def names(columns: Iterable[Column], prefix: str = "") -> str:
    """The comma-separated SQL names of ``columns`` (each after ``prefix``)."""
    return ", ".join(prefix + c.name for c in columns)


def codec_fields(columns: Iterable[Column], codec: str) -> tuple[str, ...]:
    """The fields of ``columns`` stored with ``codec``."""
    return tuple(c.field for c in columns if c.codec == codec)


MEMORY_SELECT = names(MEMORY)
TRACE_SELECT = names(TRACE, "t.")
USE_TICK = ("memcommit", "use_tick")


def same(value: Any) -> Any:
    """A value as it is: the codec of a driver that takes and gives it unchanged."""
    return value


@dataclass(frozen=True)
class Dialect:
    """The differences between the SQL of two backends that otherwise run the same queries."""

    #: The parameter placeholder: ``?`` or ``%s``.
    mark: str
    true: str
    false: str
    #: The condition "{column} is one of the values in one parameter", and that parameter.
    in_many: str
    pack: Callable[[list[Any]], Any]
    #: The condition "version r's metadata has the key {mark}".
    has_key: str
    #: The tenant column when ids are also given, or a page after an id (SQLite:
    #: ``+tenant``, off its index: the id's index finds the rows in order).
    tenant_by_id: str = "tenant"
    #: Order of one trace's steps (the root's step may be NULL: first either way).
    step_order: str = "step"
    #: A datetime (or None) as the driver takes it, and a stored time as a datetime.
    time_out: Callable[[datetime | None], Any] = same
    time_in: Callable[[Any], Any] = same
    #: A stored ``always`` as a bool.
    flag_in: Callable[[Any], bool] = same

    def in_(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        """``column = <mark>`` for one value, else ``in_many`` with one parameter for all."""
        if len(values) == 1:
            params.append(values[0])
            return f"{column} = {self.mark}"
        params.append(self.pack(list(values)))
        return self.in_many.format(column=column)

    def marks(self, n: int) -> str:
        """``n`` placeholders, comma-separated."""
        return ", ".join([self.mark] * n)

    def insert(self, table: str, columns: Sequence[Column]) -> str:
        """The INSERT of one row of ``columns`` into ``table``."""
        return f"INSERT INTO {table} ({names(columns)}) VALUES ({self.marks(len(columns))})"

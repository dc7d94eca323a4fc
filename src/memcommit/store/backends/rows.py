"""Rows <-> model values: the row encoders and decoders, compiled from the column tables.

A version row is made and sealed in one call (`Rows.version`: its digest from
`seals`) and read back by column name (`Rows.memory`); commits and traces
have their own encoders and decoders, derived from the same tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from memcommit.model import Commit, Memory
from memcommit.store.backends import seals
from memcommit.store.backends.base import Batch, TraceRow
from memcommit.store.backends.tables import (
    COMMIT,
    MEMORY,
    TRACE,
    Column,
    Dialect,
    codec_fields,
    same,
)
from memcommit.store.records import change, memory, to_text
from memcommit.store.records import commit as make_commit

_compact_json = json.JSONEncoder(separators=(",", ":")).encode

Row = Sequence[Any]
#: ``(memory, end_seq, salt, erased)`` -> the row of `VERSION_ROW`, its digest computed.
VersionEncoder = Callable[[Memory, "int | None", "str | None", "str | None"], tuple[Any, ...]]
#: The `MEMORY` columns a new memory's first version has before its commit is ordered:
#: all but the commit's own (`seals.COMMIT_FIELDS`), in `MEMORY` order.
TEMPLATE_COLUMNS = tuple(c for c in MEMORY if c.field not in seals.COMMIT_FIELDS)


#: Each codec's value as stored, from the model's ``{v}`` (``m.field``), and back from the
#: stored ``{v}``: the text a row encoder and decoder are compiled from.
_TO_ROW = {
    "plain": "{v}",
    "time": "time_out({v})",
    "flag": "{v}",
    "list": '(dumps(list({v})) if {v} else "[]")',
    "map": '(dumps({v}, sort_keys=True) if {v} else "{{}}")',
}
_FROM_ROW = {
    "plain": "{v}",
    "time": "time_in({v})",
    "flag": "flag_in({v})",
    "list": '(() if {v} == "[]" else tuple(loads({v})))',
    "map": '({{}} if {v} == "{{}}" else loads({v}))',
}


class Rows:
    """The row encoders and decoders of one dialect, built once from the column tables.

    The memory encoder and decoder run once per version written or read (a bulk
    commit writes 100,000), so they are compiled from `MEMORY` into one plain
    function each, as fast as a hand-written tuple, yet every value is taken by
    its column's name: ``(id, content, ...) = row`` and ``(m.id, m.content, ...)``.
    """

    def __init__(self, d: Dialect) -> None:
        self.dialect = d
        converts = d.time_in is not same
        self._trace_times = codec_fields(TRACE, "time") if converts else ()
        self._trace_fields = tuple(c.field for c in TRACE)
        namespace = {
            "memory": memory,
            "dumps": json.dumps,
            "loads": json.loads,
            "time_out": d.time_out,
            "time_in": d.time_in,
            "flag_in": d.flag_in,
        }
        plain = {"time"} if not converts else set()
        plain |= {"flag"} if d.flag_in is same else set()

        def read(c: Column) -> str:
            codec = "plain" if c.codec in plain else c.codec
            return _FROM_ROW[codec].format(v=c.field)

        def write(c: Column) -> str:
            codec = "plain" if c.codec in plain else c.codec
            return _TO_ROW[codec].format(v="m." + c.field)

        self.seals = e = seals.Encoders(MEMORY, times_are_text=d.time_out is to_text)
        namespace.update(e.namespace)
        fields_ = ", ".join(c.field for c in MEMORY)
        template_fields = ", ".join(c.field for c in TEMPLATE_COLUMNS)
        # the body's hash, then the digest (`seals`), inline: one call per version saved
        digest = (
            "    body = erased if salt is None else sha({body}.encode()).hexdigest()\n"
            "    digest = sha({head}.encode()).hexdigest()\n"
        )
        source = (
            f"def memory_of(row):\n    ({fields_},) = row\n    return memory({{"
            + ", ".join(f"{c.field!r}: {read(c)}" for c in MEMORY)
            + "})\n"
            "def version_row(m, end_seq, salt, erased):\n"
            + "".join(f"    {c.field} = {write(c)}\n" for c in MEMORY)
            + digest.format(body=e.body, head=e.typed_head)
            + f"    return ({fields_}, end_seq, salt, digest, erased)\n"
            "def version_template(m, salt):\n"
            + "".join(f"    {c.field} = {write(c)}\n" for c in TEMPLATE_COLUMNS)
            + f"    body = sha({e.body}.encode()).hexdigest()\n"
            + f"    return ({template_fields}, salt, {e.template_head})\n"
            f"def digest_of(row):\n    ({fields_}, end_seq, salt, stored, erased) = row\n"
            + digest.format(body=e.body, head=e.head)
            + "    return digest\n"
        )
        assert not namespace.keys() & {c.field for c in MEMORY}, "a field shadows a helper"
        exec(compile(source, f"<memcommit rows {d.mark}>", "exec"), namespace)
        #: A Memory from a row of `MEMORY_SELECT`.
        self.memory: Callable[[Row], Memory] = namespace["memory_of"]  # type: ignore[assignment]
        #: The digest a stored row of `VERSION_ROW` should carry, computed from its fields.
        self.digest_of: Callable[[Row], str] = namespace["digest_of"]  # type: ignore[assignment]
        #: The row of one memory version (`VERSION_ROW`), its digest computed.
        self.version: VersionEncoder = namespace["version_row"]  # type: ignore[assignment]
        #: ``(memory, salt)`` -> a new memory's first version before its commit is ordered:
        #: its `MEMORY` values but the commit's own (`seals.COMMIT_FIELDS`), the salt, and
        #: its digest's text with those marked (`seals.SEQ_MARK`, `seals.TIME_MARK`).
        self.version_template: Callable[[Memory, str], tuple[Any, ...]] = namespace[
            "version_template"
        ]  # type: ignore[assignment]

    def commit(self, row: Row) -> tuple[Commit, list[str | None]]:
        """A Commit, and the tenant of each change, from a row of `COMMIT`."""
        f = dict(zip((c.field for c in COMMIT), row, strict=True))
        changes = []
        tenants = []
        for item in json.loads(f["changes"]) if f["changes"] != "[]" else ():
            op, memory_id, version, tenant, *detail = item
            changes.append(change(op, memory_id, version, detail[0] if detail else {}))
            tenants.append(tenant)
        made = make_commit(
            seq=f["seq"],
            id=f["id"],
            parent=f["parent"],
            time=self.dialect.time_in(f["time"]),
            author=f["author"],
            message=f["message"],
            changes=tuple(changes),
        )
        return made, tenants

    def commit_row(self, batch: Batch, changes: str, hash: str | None) -> tuple[Any, ...]:
        """The row of a batch's commit, in `COMMIT` order (``hash`` None: sealed after)."""
        c = batch.commit
        values = {**c.__dict__, "time": self.dialect.time_out(c.time)}
        values["changes"] = changes
        values["hash"] = hash
        return tuple(values[col.field] for col in COMMIT)

    def trace(self, row: Row) -> TraceRow:
        """A TraceRow from a row of `TRACE`, by column name."""
        f = dict(zip(self._trace_fields, row, strict=True))
        for name in self._trace_times:
            f[name] = self.dialect.time_in(f[name])
        return TraceRow(**f)

    def trace_row(self, t: TraceRow) -> tuple[Any, ...]:
        """The row of one trace, in `TRACE` order."""
        time_out = self.dialect.time_out
        values = {c.field: getattr(t, c.field) for c in TRACE}
        for name in codec_fields(TRACE, "time"):
            values[name] = time_out(values[name])
        return tuple(values[c.field] for c in TRACE)


def changes_text(batch: Batch) -> str:
    """A commit's changes as the compact JSON text both backends store."""
    return _compact_json(
        [
            [ch.op, ch.memory_id, ch.version, tenant, ch.detail]
            if ch.detail
            else [ch.op, ch.memory_id, ch.version, tenant]
            for ch, tenant in zip(batch.commit.changes, batch.tenants, strict=False)
        ]
    )

"""Tables that read well at 80 columns and in a wide terminal.

Ids are shortened (see `memcommit.cli.ids`) unless ``--wide``; times are
``YYYY-MM-DD HH:MM`` in UTC. Long text wraps at word boundaries; a word too
long for its column ends in "…".
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone

from rich import box
from rich.table import Column, Table

from memcommit.cli.ids import ELLIPSIS, short_ids
from memcommit.model import Change, Commit, Memory

#: Content shown in a narrow table: longer text is cut at a word boundary.
PREVIEW = 90
#: Rules under the header only: no side borders, so text keeps the columns.
BOX = box.SIMPLE_HEAD


def table(*columns: Column | str, expand: bool = True) -> Table:
    """A table in the style every command shares; as wide as the terminal unless told."""
    return Table(
        *columns, box=BOX, expand=expand, pad_edge=False, collapse_padding=True, show_edge=False
    )


def when(moment: datetime | None) -> str:
    """``YYYY-MM-DD HH:MM`` in UTC; empty for None."""
    if moment is None:
        return ""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M")


def preview(text: str, limit: int = PREVIEW) -> str:
    """One line of ``text``, cut at a word boundary with "…" past ``limit`` characters."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0] or line[: limit - 1]
    return cut + ELLIPSIS


def _id_column(wide: bool, header: str = "id") -> Column:
    if wide:
        return Column(header, no_wrap=True, min_width=32)
    return Column(header, no_wrap=True, overflow="ellipsis")


def _text_column(header: str, ratio: int = 1) -> Column:
    """A column that wraps at words and takes the room left (a long word ends in "…")."""
    return Column(header, ratio=ratio, overflow="ellipsis", min_width=12)


def _small(header: str) -> Column:
    return Column(header, no_wrap=True, overflow="ellipsis")


#: Fields a version carries that say nothing of what changed (every version moves them).
_BOOKKEEPING = ("version", "updated_at", "updated_commit")


def changed_fields(before: Memory | None, after: Memory) -> str:
    """What ``after`` changed since ``before`` ("added" for a first version): field names."""
    if before is None:
        return "added"
    names = [
        f.name
        for f in dataclasses.fields(after)
        if f.name not in _BOOKKEEPING and getattr(before, f.name) != getattr(after, f.name)
    ]
    return ", ".join(names) or "nothing"


def memory_table(
    memories: Sequence[Memory], *, wide: bool = False, versions: bool = False
) -> Table:
    """Memories one per row: id (or version and what it changed), kind, scope, tier, status,
    content."""
    short = short_ids(m.id for m in memories)
    first = _small("version") if versions else _id_column(wide)
    columns = [first, _small("kind"), _small("scope"), _small("tier"), _small("status")]
    if versions:
        columns.insert(1, _text_column("changed"))
    if wide:
        columns += [_small("key"), _small("created")]
    out = table(*columns, _text_column("content"))
    previous = None
    for m in memories:
        ident = str(m.version) if versions else (m.id if wide else short[m.id])
        cells = [ident, m.kind, m.scope, m.tier, m.status]
        if versions:
            cells.insert(1, changed_fields(previous, m))
            previous = m
        if wide:
            cells += [m.key or "", when(m.created_at)]
        out.add_row(*cells, m.content if wide else preview(m.content))
    return out


def change_summary(changes: Sequence[Change]) -> str:
    """``2 add, 1 invalidate``: how many changes of each operation, in the order they came."""
    ops = Counter(c.op for c in changes)
    return ", ".join(f"{n} {op}" for op, n in ops.items())


def commit_table(commits: Sequence[Commit], *, wide: bool = False) -> Table:
    """Commits one per row: seq, id, time, author, message, its changes per operation."""
    short = short_ids(c.id for c in commits)
    out = table(
        Column("seq", justify="right", no_wrap=True),
        _id_column(wide),
        Column("time (UTC)", no_wrap=True, min_width=16),
        _small("author"),
        _text_column("message"),
        Column("changes", max_width=14),  # wraps per operation: the message keeps its room
    )
    for c in commits:
        out.add_row(
            str(c.seq), c.id if wide else short[c.id], when(c.time), c.author,
            c.message if wide else preview(c.message), change_summary(c.changes),
        )  # fmt: skip
    return out


def changes_table(changes: Sequence[Change], *, wide: bool = False) -> Table:
    """Changes one per row: operation, memory, version, detail."""
    short = short_ids(c.memory_id for c in changes if c.memory_id)
    out = table(
        _small("op"), _id_column(wide, "memory"), Column("version", justify="right"),
        _text_column("detail"),
    )  # fmt: skip
    for c in changes:
        detail = ", ".join(f"{k}={v}" for k, v in c.detail.items())
        memory = "" if not c.memory_id else c.memory_id if wide else short[c.memory_id]
        out.add_row(c.op, memory, "" if c.version is None else str(c.version), detail)
    return out


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 memory``, ``2 memories``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def commit_line(c: Commit) -> str:
    """One commit as a heading line."""
    return f"commit {c.seq} {c.id}  {when(c.time)}  {c.author}: {c.message}"

"""Numbered schema migrations: ``migrations/<backend>/NNNN_name.sql``, applied in order."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memcommit.errors import SchemaTooNew

_ROOT = Path(__file__).parent


def migrations(backend: str) -> list[tuple[int, str, str]]:
    """(number, name, sql) of every migration for ``backend``, in order."""
    out = []
    for path in sorted((_ROOT / backend).glob("*.sql")):
        number, _, name = path.stem.partition("_")
        out.append((int(number), name, path.read_text(encoding="utf-8")))
    return out


def refuse_newer(backend: str, applied: Iterable[int], store: str) -> None:
    """Raise `SchemaTooNew` when ``applied`` holds a migration this code does not know.

    Old code must not write into a store a newer memcommit has reshaped: it
    would not know the new columns' rules.
    """
    newest = max(applied, default=0)
    supported = max((number for number, _, _ in migrations(backend)), default=0)
    if newest > supported:
        raise SchemaTooNew(store, newest, supported)

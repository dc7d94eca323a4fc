"""Numbered schema migrations: ``migrations/<backend>/NNNN_name.sql``, applied in order."""

from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).parent


def migrations(backend: str) -> list[tuple[int, str, str]]:
    """(number, name, sql) of every migration for ``backend``, in order."""
    out = []
    for path in sorted((_ROOT / backend).glob("*.sql")):
        number, _, name = path.stem.partition("_")
        out.append((int(number), name, path.read_text(encoding="utf-8")))
    return out

"""What the fault tests share: where a store keeps its bytes on disk."""

from __future__ import annotations

from pathlib import Path

from memcommit import Store


def sqlite_files(store: Store) -> list[Path]:
    """The SQLite file and its write-ahead log (when present) behind ``store``."""
    main = Path(store.backend.target)
    return [path for path in (main, Path(f"{main}-wal")) if path.exists()]


def postgres_files(store: Store, url: str, tables: tuple[str, ...]) -> list[Path]:
    """The files of ``tables`` (their partitions, and the TOAST tables of each) in
    ``store``'s schema, after a CHECKPOINT.

    The CHECKPOINT writes every dirty page out, so the files hold what the
    server holds; the test server runs on this machine and its data directory
    is readable here. A partitioned table has no file of its own: its partitions do.
    """
    import psycopg

    schema = store.backend.schema
    found = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        data = Path(conn.execute("SHOW data_directory").fetchone()[0])
        for table in tables:
            name = f'"{schema}"."{table}"'
            rows = conn.execute(
                "SELECT pg_relation_filepath(c.oid), pg_relation_filepath(c.reltoastrelid)"
                " FROM pg_class c WHERE (c.oid = %s::regclass AND c.relkind = 'r')"
                " OR c.oid IN (SELECT relid FROM pg_partition_tree(%s::regclass) WHERE isleaf)",
                (name, name),
            ).fetchall()
            assert rows, f"{name} has no table file"
            found += [data / path for row in rows for path in row if path is not None]
    return found


def holding(paths: list[Path], needle: str | bytes) -> list[str]:
    """The names of the files (and their extra 1 GB segments) whose bytes contain ``needle``."""
    wanted = needle.encode("utf-8") if isinstance(needle, str) else needle
    hits = []
    for path in paths:
        for part in [path, *sorted(path.parent.glob(path.name + ".*"))]:
            if part.exists() and wanted in part.read_bytes():
                hits.append(str(part))
    return hits


def files_of(store, url):
    """The files that hold ``store``'s rows (PostgreSQL: every partition's, after a CHECKPOINT)."""
    if url is None:
        return sqlite_files(store)
    return postgres_files(store, url, ("versions", "commits"))

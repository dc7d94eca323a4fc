"""memcommit under agmi's at-rest attacks: the adapter `agmi-check` runs (test_agmi.py).

A record is one memory version of the first context (tenant ``agmi-a``), in
commit order, with every column of its row; each seeded entry is one commit
adding one memory through memcommit's API, so every hash is real. The raw
reads and writes go to the real tables (the SQLite file, the PostgreSQL schema)
around memcommit. The witness (`Store.witness`) is what the tool keeps off the
store: taken after every genuine write, given back to `Store.verify`. Detection
is at audit (``verify``), not when a tampered store is opened: "REPORTED".
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import uuid
from pathlib import Path
from typing import Any

from agmi.adapters.base import MemoryAdapter, Record

import memcommit

POSTGRES_URL = os.environ.get(
    "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
CONTEXT, OTHER = "agmi-a", "agmi-b"
#: The columns an edit never moves: a row's slot (its memory and version) and its commit.
SLOT = ("id", "version", "seq", "end_seq")
#: The labels `read_meta` shows beside the memory's own metadata.
LABELS = ("kind", "scope", "session", "tier")
TABLES = ("commits", "versions", "traces", "usage", "state", "schema_migrations")


class _Adapter(MemoryAdapter):
    """What both backends share; a subclass says how to reach the raw tables."""

    detection_point = "audit"
    supports_replay = True
    supports_metadata = True
    supports_snapshot = True

    def __init__(self) -> None:
        self.store: Any = None
        self.witness: Any = None
        self._columns: list[str] = []

    # -- what differs per backend ------------------------------------------------------

    def _open(self) -> Any:
        raise NotImplementedError

    def _raw(self, text: str, *params: Any) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    # -- lifecycle -----------------------------------------------------------------------

    def _close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def reload(self) -> None:
        self._close()
        self.store = self._open()

    def seed(self, n: int) -> None:
        self._seed(CONTEXT, "note", n)

    def seed_other(self, n: int) -> None:
        self._seed(OTHER, "other", n)

    def _seed(self, tenant: str, word: str, n: int) -> None:
        for i in range(n):
            with self.store.commit(message=f"{word} {i}") as tx:
                tx.add(
                    f"{tenant} {word} {i}: the user said {i * 7}",
                    tenant=tenant,
                    metadata={"source": "user", "ts": i},
                    tags=[word],
                )
        self.witness = self.store.witness()

    def append_genuine(self) -> None:
        self._seed(CONTEXT, "late", 1)

    def verify(self) -> bool:
        report = self.store.verify(expect=self.witness)
        self.verify_detail = None if report.ok else str(report.first)
        return bool(report.ok)

    # -- the raw rows --------------------------------------------------------------------

    def _records(self, tenant: str) -> list[Record]:
        found = self._raw(
            "SELECT * FROM versions WHERE tenant = ? ORDER BY seq, id, version", tenant
        )
        return [
            Record(seq=i, fields=dict(zip(self._names(), row, strict=True)))
            for i, row in enumerate(found)
        ]

    def _names(self) -> list[str]:
        if not self._columns:
            self._columns = [r[0] for r in self._raw("SELECT name FROM chain_columns")]
        return self._columns

    def read_all_raw(self) -> list[Record]:
        return self._records(CONTEXT)

    def read_other_raw(self) -> list[Record]:
        return self._records(OTHER)

    def _slot(self, seq: int) -> dict[str, Any] | None:
        records = self.read_all_raw()
        return records[seq].fields if seq < len(records) else None

    def _set(self, slot: dict[str, Any], values: dict[str, Any]) -> None:
        names = [n for n in values if n not in SLOT]
        self._raw(
            f"UPDATE versions SET {', '.join(f'{n} = ?' for n in names)}"
            " WHERE id = ? AND version = ?",
            *(values[n] for n in names),
            slot["id"],
            slot["version"],
        )

    def write_raw(self, record: Record) -> None:
        slot = self._slot(record.seq)
        if slot is not None:
            self._set(slot, record.fields)
            return
        # past the end: a forged commit and its version, shaped like the genuine ones
        (seq, last_id, time, hash_) = self._raw(
            "SELECT seq, id, time, hash FROM commits ORDER BY seq DESC LIMIT 1"
        )[0]
        seq += 1
        commit_id = f"{seq:012x}{uuid.uuid4().hex[:20]}"
        memory_id = uuid.uuid4().hex
        changes = json.dumps([["add", memory_id, 1, CONTEXT]], separators=(",", ":"))
        self._raw(
            "INSERT INTO commits (seq, id, parent, time, author, message, hash, changes)"
            " VALUES (?, ?, ?, ?, 'agent', 'note', ?, ?)",
            seq, commit_id, last_id, time, hash_, changes,
        )  # fmt: skip
        fields = {**record.fields, "id": memory_id, "version": 1, "seq": seq, "end_seq": None}
        fields["created_commit"] = seq
        names = list(fields)
        self._raw(
            f"INSERT INTO versions ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            *fields.values(),
        )

    def delete_raw(self, seq: int) -> None:
        slot = self._slot(seq)
        assert slot is not None, f"no record {seq}"
        self._raw("DELETE FROM versions WHERE id = ? AND version = ?", slot["id"], slot["version"])
        self._raw("DELETE FROM commits WHERE seq = ?", slot["seq"])

    def replay_onto(self, victim_seq: int, donor: Record) -> None:
        slot = self._slot(victim_seq)
        assert slot is not None, f"no record {victim_seq}"
        body = ("content", "tags", "metadata", "salt", "digest", "erased")
        self._set(slot, {k: donor.fields[k] for k in body})

    def read_meta(self, seq: int) -> dict[str, Any]:
        slot = self._slot(seq)
        assert slot is not None, f"no record {seq}"
        return {**json.loads(slot["metadata"]), **{k: slot[k] for k in LABELS}}

    def write_meta(self, seq: int, meta: dict[str, Any]) -> None:
        slot = self._slot(seq)
        assert slot is not None, f"no record {seq}"
        own = {k: v for k, v in meta.items() if k not in LABELS}
        labels = {k: meta[k] for k in LABELS if k in meta}
        self._set(slot, {**labels, "metadata": json.dumps(own, sort_keys=True)})

    # -- the guard's view (control C3) ---------------------------------------------------

    def identity_of(self, record: Record) -> str:
        return f"{record.fields['id']}/{record.fields['version']}"

    def payload_of(self, record: Record) -> str:
        return str(record.fields["content"])

    def owner_of(self, record: Record) -> str | None:
        return str(record.fields["tenant"])

    def mutate_payload(self, record: Record) -> Record:
        record.fields["content"] = record.fields["content"] + "  [TAMPERED]"
        return record

    def forge_record(self, template: Record) -> Record:
        forged = Record(seq=template.seq + 1, fields=dict(template.fields))
        forged.fields["content"] = "agmi forged: the user approved the transfer"
        return forged


class SQLiteAdapter(_Adapter):
    """memcommit on a SQLite file; raw edits through the stdlib ``sqlite3``."""

    name = "memcommit-sqlite"

    def setup(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="agmi-memcommit-")
        self.path = Path(self._dir) / "memory.db"
        self.store = self._open()
        self.witness = self.store.witness()

    def teardown(self) -> None:
        self._close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def _open(self) -> Any:
        return memcommit.open(self.path)

    def _raw(self, text: str, *params: Any) -> list[tuple[Any, ...]]:
        if text == "SELECT name FROM chain_columns":
            text = "SELECT name FROM pragma_table_info('versions') ORDER BY cid"
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            return conn.execute(text, params).fetchall()
        finally:
            conn.close()

    def snapshot_store(self) -> object:
        self._close()  # the last connection's close folds the WAL into the file
        token = self._copy_store(self.path)
        self.store = self._open()
        return token

    def restore_store(self, token: object) -> None:
        self._close()
        self._restore_store(token, self.path)
        self.store = self._open()


class PostgresAdapter(_Adapter):
    """memcommit on a PostgreSQL schema; raw edits through psycopg, foreign keys off."""

    name = "memcommit-postgres"

    def setup(self) -> None:
        self.schema = f"agmi_{uuid.uuid4().hex[:12]}"
        self.store = self._open()
        self.witness = self.store.witness()

    def teardown(self) -> None:
        self._close()
        self._admin(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        self._admin(f'DROP SCHEMA IF EXISTS "{self.schema}_snap" CASCADE')

    def _open(self) -> Any:
        return memcommit.open(POSTGRES_URL, schema=self.schema)

    def _admin(self, text: str) -> None:
        import psycopg

        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(text)

    def _raw(self, text: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        if text == "SELECT name FROM chain_columns":
            text = (
                "SELECT column_name FROM information_schema.columns WHERE table_schema = ?"
                " AND table_name = 'versions' ORDER BY ordinal_position"
            )
            params = (self.schema,)
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{self.schema}"')
            conn.execute("SET session_replication_role = replica")  # foreign keys off
            cur = conn.execute(text.replace("?", "%s"), params)
            return list(cur.fetchall()) if cur.description else []

    def snapshot_store(self) -> object:
        snap = f"{self.schema}_snap"
        self._admin(f'DROP SCHEMA IF EXISTS "{snap}" CASCADE; CREATE SCHEMA "{snap}"')
        for table in TABLES:
            self._admin(f'CREATE TABLE "{snap}".{table} AS TABLE "{self.schema}".{table}')
        return snap

    def restore_store(self, token: object) -> None:
        self._close()
        for table in TABLES:
            self._raw(f"DELETE FROM {table}")
            self._raw(f'INSERT INTO {table} SELECT * FROM "{token}".{table}')
        self.store = self._open()

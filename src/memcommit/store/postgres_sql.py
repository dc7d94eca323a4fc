"""The SQL of the PostgreSQL backend: its dialect and the pipelined row updates.

Rows, conversions and read queries are shared with SQLite (`sql_common`);
psycopg passes times, flags and lists as Python values, so they go as they are.
"""

from __future__ import annotations

from typing import Any

import psycopg

from memcommit.store import sql_common as common
from memcommit.store.backend import Batch, Query

POSTGRES = common.Dialect(
    mark="%s",
    true="true",
    false="false",
    in_many="{column} = ANY(%s)",  # one array parameter
    pack=list,
    has_key="r.metadata::jsonb ? %s",
    step_order="step NULLS FIRST",
)
INSERT_VERSION = common.insert_version(POSTGRES)
INSERT_COMMIT = common.insert_commit(POSTGRES)
_UPSERT_TRACE = common.upsert_trace(POSTGRES)


def memories_sql(query: Query) -> tuple[str, list[Any]]:
    """The one SELECT that answers ``query``: every filter runs in the database."""
    return common.memories_sql(query, POSTGRES)


def queue_updates(cur: psycopg.Cursor, batch: Batch) -> None:
    """Queue a commit's row updates (closed versions, purges, trace states) in a pipeline."""
    seq = batch.commit.seq
    for mid, version in batch.closes:
        cur.execute(
            "UPDATE versions SET end_seq = %s WHERE id = %s AND version = %s", (seq, mid, version)
        )
    if batch.purges:
        cur.execute(
            "UPDATE versions SET content = '', tags = '[]', metadata = '{}' WHERE id = ANY(%s)",
            (list(batch.purges),),
        )
    for row in common.trace_rows(batch, POSTGRES):
        cur.execute(_UPSERT_TRACE, row)

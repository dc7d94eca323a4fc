"""The canonical encoding 1 (docs/verification.md), against a straightforward reference.

The store's encoders are compiled from the column table for speed; the reference
below is the specification written out with ``json.dumps``: both must agree on
every memory, on both dialects, and a stored chain must recompute from it.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime, timezone

from chain_helpers import rows
from hypothesis import given, settings
from hypothesis import strategies as st

from memcommit.model import KINDS, STATUSES, TIERS
from memcommit.store.backends.postgres import PostgresBackend
from memcommit.store.backends.seals import salts
from memcommit.store.backends.sqlite import SQLiteBackend
from memcommit.store.records import memory

UTC = timezone.utc


def compact(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def when(t):
    return None if t is None else t.astimezone(UTC).isoformat(timespec="microseconds")


def reference_digest(m, salt: str) -> str:
    """A version's digest, as the specification says, from its Memory value and salt."""
    tags = json.dumps(list(m.tags)) if m.tags else "[]"
    metadata = json.dumps(dict(m.metadata), sort_keys=True) if m.metadata else "{}"
    body = sha(compact([salt, m.content, tags, metadata]))
    head = [
        "memcommit-version/1", m.id, m.kind, m.scope, m.tenant, m.session, m.key, m.importance,
        m.project, m.always, m.token_count, m.trace_id, m.step, when(m.valid_from),
        when(m.valid_to), m.superseded_by, m.status, m.tier, m.version, when(m.created_at),
        m.created_commit, when(m.updated_at), m.updated_commit, body,
    ]  # fmt: skip
    return sha(compact(head))


text = st.text(min_size=1, max_size=40)
maybe_text = st.none() | text
times = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)
memories = st.builds(
    lambda *values: memory(dict(zip(FIELDS, values, strict=True))),
    text, text, st.sampled_from(KINDS), text, text, maybe_text, maybe_text,
    st.floats(0, 1), st.lists(text, max_size=3).map(tuple), maybe_text, st.booleans(),
    st.none() | st.integers(0, 10**9), maybe_text, st.none() | st.integers(0, 1000),
    st.dictionaries(text, st.integers() | text | st.lists(st.integers()), max_size=3),
    st.none() | times, st.none() | times, maybe_text, st.sampled_from(STATUSES),
    st.sampled_from(TIERS), st.integers(1, 100), times, st.integers(1, 10**6), times,
    st.integers(1, 10**6),
)  # fmt: skip
FIELDS = (
    "id", "content", "kind", "scope", "tenant", "session", "key", "importance", "tags",
    "project", "always", "token_count", "trace_id", "step", "metadata", "valid_from",
    "valid_to", "superseded_by", "status", "tier", "version", "created_at", "created_commit",
    "updated_at", "updated_commit",
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(memories)
def test_the_compiled_encoders_are_the_specification(m):
    (salt,) = salts(1)
    expected = reference_digest(m, salt)
    for backend in (SQLiteBackend, PostgresBackend):
        row = backend.rows.version(m, None, salt, None)
        assert row[-2] == expected
        assert backend.rows.digest_of(row) == expected


def test_an_erased_version_keeps_its_digest():
    m = memory(
        {f: None for f in FIELDS}
        | {"id": "m", "content": "secret", "kind": "fact", "scope": "s", "tenant": "t",
           "importance": 0.5, "tags": ("a",), "always": False, "metadata": {"k": 1},
           "status": "active", "tier": "short", "version": 1,
           "created_at": datetime(2026, 1, 1, tzinfo=UTC), "created_commit": 1,
           "updated_at": datetime(2026, 1, 1, tzinfo=UTC), "updated_commit": 1}
    )  # fmt: skip
    (salt,) = salts(1)
    rows_ = SQLiteBackend.rows
    kept = rows_.version(m, None, salt, None)
    body = rows_.seals.body_hash(salt, "secret", '["a"]', '{"k": 1}')
    erased = memory({**m.__dict__, "content": "", "tags": (), "metadata": {}})
    assert rows_.version(erased, None, None, body)[-2] == kept[-2]


def test_a_stored_chain_recomputes_from_the_specification(store):
    with store.commit(message="one") as tx:
        a = tx.add('é "quoted" \\ and \x1f', tags=["t"], metadata={"b": 2, "a": [1]})
        tx.add("second")
    with store.commit(message="two") as tx:
        tx.update(a.id, importance=0.25)
    digests = {
        (i, v): (s, d)
        for i, v, s, d in rows(store, "SELECT id, version, salt, digest FROM versions")
    }
    parent = None
    for commit in reversed(store.log()):
        (stored, changes) = rows(
            store, "SELECT hash, changes FROM commits WHERE seq = ?", commit.seq
        )[0]
        header = compact(
            ["memcommit-commit/1", parent, commit.seq, commit.id, commit.parent,
             when(commit.time), commit.author, commit.message, changes]
        )  # fmt: skip
        wrote = []
        for change in commit.changes:
            m = store.history(change.memory_id)[change.version - 1]
            salt, digest = digests[(change.memory_id, change.version)]
            assert reference_digest(m, salt) == digest
            wrote.append(digest)
        assert sha(header + "".join(wrote).encode()) == stored
        parent = stored
    assert parent == store.witness().hash


def test_a_commit_of_many_versions_hashes_every_digest_in_order(store):
    # 1,100 versions: streamed rows, and digests handed to the hash in batches (writes.py)
    with store.commit(message="bulk") as tx:
        added = [tx.add(f"memory {n}", importance=n / 1100) for n in range(1100)]
    (commit,) = store.log()
    ((stored, changes),) = rows(store, "SELECT hash, changes FROM commits WHERE seq = ?", 1)
    digests = dict(rows(store, "SELECT id, digest FROM versions"))
    header = compact(
        ["memcommit-commit/1", None, commit.seq, commit.id, commit.parent, when(commit.time),
         commit.author, commit.message, changes]
    )  # fmt: skip
    assert sha(header + "".join(digests[m.id] for m in added).encode()) == stored
    assert store.verify().ok


def test_a_negative_zero_importance_is_stored_and_hashed_as_zero(store):
    """-0.0 passes the range check; SQLite stores it as 0.0, so the digest taken from the
    model must see 0.0 too, or `verify` would find the stored fields changed."""
    with store.commit() as tx:
        added = tx.add("no weight", importance=-0.0)
    with store.commit() as tx:
        tx.update(added.id, importance=-0.0)
    assert math.copysign(1.0, added.importance) == 1.0
    assert store.get(added.id).importance == 0.0 and store.verify().ok

"""MemcommitStorage beside CrewAI's own LanceDBStorage, and what memcommit adds: both backends.

The upstream suite (test_upstream_crewai.py) is the judge; here one scenario of
every StorageBackend call runs against LanceDB and memcommit and every answer
must agree (scores to float32, LanceDB's precision), then history, explanations,
tenants and bad input. Runs in the ``crewai`` extra's venv (see upstream.require).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timedelta

import pytest
from upstream import require

from memcommit.errors import InvalidInput

cr = require("memcommit.integrations.crewai", apart="crewai")
from crewai.memory.storage.backend import EmbeddingDimensionMismatchError  # noqa: E402
from crewai.memory.storage.lancedb_storage import LanceDBStorage  # noqa: E402
from crewai.memory.types import MemoryRecord  # noqa: E402

T0 = datetime(2026, 3, 1, 9, 0)


def record(id, scope, vector, *, categories=("note",), metadata=None, minutes=0):
    return MemoryRecord(
        id=id,
        content=f"content of {id}",
        scope=scope,
        categories=list(categories),
        metadata=metadata or {},
        importance=0.5,
        created_at=T0 + timedelta(minutes=minutes),
        last_accessed=T0,
        embedding=vector,
    )


def seen(record_):
    return (record_.id, record_.content, record_.scope, record_.categories, record_.metadata)


def scenario(storage) -> list:
    """Every answer of one storage through saves, searches, listings, updates and deletes."""
    out: list = []

    def search(query, **criteria):
        found = storage.search(query, **criteria)
        out.append([(seen(r), pytest.approx(score, rel=1e-5)) for r, score in found])

    storage.save(
        [
            record("a1", "/crew/research/agent_1", [1.0, 0.0, 0.0], minutes=1),
            record("a2", "/crew/research/notes", [0.9, 0.1, 0.0], categories=["fact"], minutes=2),
            record("b1", "/crew/writing", [0.0, 1.0, 0.0], metadata={"lang": "en"}, minutes=3),
            record("b2", "/crew/writing/drafts", [0.0, 0.7, 0.7], minutes=4),
            record("r0", "/", [0.5, 0.5, 0.5], minutes=5),
        ]
    )
    search([1.0, 0.0, 0.0], limit=3)
    search([1.0, 0.0, 0.0], scope_prefix="/crew/research")
    search([0.0, 1.0, 0.0], categories=["note"], limit=10)
    search([0.0, 1.0, 0.0], metadata_filter={"lang": "en"})
    search([0.0, 1.0, 0.0], min_score=0.5)
    out.append([seen(r) for r in storage.list_records(limit=3)])
    out.append([seen(r) for r in storage.list_records("/crew/writing", limit=5, offset=1)])
    out.append(storage.list_scopes("/"))
    out.append(storage.list_scopes("/crew"))
    out.append(storage.list_categories())
    out.append(storage.count("/crew"))
    info = storage.get_scope_info("/crew/research")
    out.append((info.path, info.record_count, info.categories, info.child_scopes))
    storage.update(record("a1", "/crew/research/agent_1", [0.0, 0.0, 1.0], minutes=1))
    search([0.0, 0.0, 1.0], limit=2)
    out.append(seen(storage.get_record("a1")))
    out.append(storage.get_record("missing"))
    out.append(storage.delete(record_ids=["a2", "missing"]))
    out.append(storage.delete(categories=["note"], older_than=T0 + timedelta(minutes=4)))
    out.append(sorted(r.id for r in storage.list_records()))
    storage.reset("/crew")
    out.append(sorted(r.id for r in storage.list_records()))
    return out


@pytest.fixture
def memory(make_store):
    return make_store()


@pytest.fixture
def storage(memory, now):
    return cr.MemcommitStorage(memory, tenant="acme", clock=lambda: now)


def test_every_call_answers_as_crewai_own_storage(storage, tmp_path):
    reference = LanceDBStorage(path=tmp_path / "lance", vector_dim=3, compact_every=0)
    assert scenario(storage) == scenario(reference)


def test_updates_and_deletes_keep_history_and_search_explains(memory, storage):
    storage.save([record("k", "/notes", [1.0, 0.0], metadata={"v": 1})])
    storage.update(record("k", "/notes", [1.0, 0.0], metadata={"v": 2}))
    storage.touch_records(["k"])
    ctx = storage.recall([1.0, 0.0], scope_prefix="/notes", limit=1)
    (row,) = [row for row in ctx.rows if row.reason is None]
    assert row.score == 1.0 and row.memory.key == "k"
    assert storage.delete(scope_prefix="/notes") == 1
    versions = storage.view.history(row.memory.id)
    kept = [(v.metadata["crewai"]["metadata"], v.status) for v in versions]
    assert kept == [  # saved, updated, touched, deleted
        ({"v": 1}, "active"),
        ({"v": 2}, "active"),
        ({"v": 2}, "active"),
        ({"v": 2}, "invalidated"),
    ]
    touched = [v.metadata["crewai"]["last_accessed"] for v in versions]
    assert touched[2] != touched[1]
    assert storage.count() == 0


@pytest.fixture
def two_writers(make_store):
    """One tenant through two `Store` objects on one target, as two processes hold it."""
    ours, theirs = (cr.MemcommitStorage(make_store()) for _ in range(2))
    ours.save([record("k", "/notes", [1.0, 0.0], metadata={"v": 1})])
    return ours, theirs


def test_a_touch_keeps_an_update_landed_since_it_began(two_writers, before_commit):
    ours, theirs = two_writers
    newer = record("k", "/notes", [0.0, 1.0], metadata={"v": 2})
    before_commit(ours, lambda: theirs.update(newer))
    ours.touch_records(["k"])
    touched = theirs.get_record("k")
    assert (touched.metadata, touched.embedding) == ({"v": 2}, [0.0, 1.0])
    assert touched.last_accessed != T0


def test_a_delete_invalidates_the_records_as_its_commit_finds_them(two_writers, before_commit):
    ours, theirs = two_writers

    def meanwhile():  # the record is deleted and saved anew under the same id
        theirs.delete(record_ids=["k"])
        theirs.save([record("k", "/notes", [0.0, 1.0])])

    before_commit(ours, meanwhile)
    assert ours.delete(record_ids=["k"]) == 1
    assert theirs.get_record("k") is None
    first = min(ours.view.find(key="k", live=False), key=lambda m: m.created_commit)
    assert [v.status for v in ours.view.history(first.id)] == ["active", "invalidated"]


def foreign_marks() -> list:
    """Metadata named "crewai" that MemcommitStorage never wrote (as MCP's remember may)."""
    whole = record("k", "/notes", [1.0, 0.0]).model_dump(mode="json") | {"embedding": [1.0, 0.0]}
    return [
        "x",
        {"id": "k", "content": "a note"},  # a few fields: CrewAI's defaults would fill the rest
        whole | {"id": "other"},  # an id that is not the memory's key
        whole | {"scope": "/elsewhere"},  # a scope that is not the memory's
        whole | {"colour": "red"},  # a field CrewAI never dumps
        whole | {"created_at": "yesterday"},  # a time CrewAI refuses
    ]


def test_memories_the_storage_did_not_write_are_no_records(memory, storage, now):
    storage.save([record("k", "/notes", [1.0, 0.0], metadata={"v": 1})])
    with memory.tenant("acme").commit(message="remember, through MCP", now=now) as tx:
        for mark in foreign_marks():
            tx.add("content of k", kind="fact", scope="/notes", key="k", metadata={"crewai": mark})
        tx.add("an always-loaded note", kind="fact", scope="/notes", key="k", always=True)
        sized = record("big", "/big", [1.0, 0.0, 0.0]).model_dump(mode="json")  # another size
        tx.add("big", kind="fact", scope="/big", key="big",
               metadata={"crewai": sized | {"embedding": [1.0, 0.0, 0.0]}})  # fmt: skip
    assert [(r.id, s) for r, s in storage.search([1.0, 0.0], limit=1)] == [("k", 1.0)]
    assert storage.get_record("k").metadata == {"v": 1}
    assert [r.id for r in storage.list_records("/notes")] == ["k"]
    assert storage.count("/notes") == 1 and storage.get_scope_info("/notes").record_count == 1
    assert storage.list_scopes("/notes") == [] and storage.list_categories("/notes") == {"note": 1}
    storage.touch_records(["k"])
    storage.save([record("k", "/notes", [0.0, 1.0], metadata={"v": 2})])
    assert storage.delete(record_ids=["k"]) == 1
    storage.save([record("n", "/notes", [0.0, 1.0])])
    storage.reset("/notes")
    assert storage.count("/notes") == 0 and storage.search([1.0, 0.0], "/notes") == []
    held = memory.tenant("acme").find(scopes=["/notes"])
    assert len(held) == len(foreign_marks()) + 1 and all(m.version == 1 for m in held)


def test_scopes_match_whole_labels_and_literal_characters(storage):
    storage.save(
        [
            record("a", "/tenant-a", [1.0]),
            record("ab", "/tenant-ab", [1.0]),
            record("pct", "/metrics/100%", [1.0]),
            record("digits", "/metrics/1000", [1.0]),
            record("under", "/a_b/x", [1.0]),
            record("lookalike", "/axb/x", [1.0]),
            record("slash", "/share\\docs", [1.0]),
        ]
    )

    def ids(prefix):
        return {r.id for r, _ in storage.search([1.0], scope_prefix=prefix, limit=20)}

    assert ids("/tenant-a") == {"a"}
    assert ids("/metrics/100%") == {"pct"}
    assert ids("/a_b") == {"under"}
    assert ids("/share\\docs") == {"slash"}
    assert ids("/share\\") == set()  # a prefix is whole labels, not the start of one
    assert storage.count("/a_b/") == 1


def test_tenants_never_see_each_other(memory, storage):
    storage.save([record("secret", "/crew", [1.0, 0.0], metadata={"k": "v"})])
    other = cr.MemcommitStorage(memory, tenant="globex")
    assert other.search([1.0, 0.0]) == []
    assert other.get_record("secret") is None
    assert other.list_records() == [] and other.count() == 0 and other.list_scopes() == []
    assert other.delete(record_ids=["secret"]) == 0
    other.reset()
    other.save([record("secret", "/crew", [0.0, 1.0, 0.0])])  # its own size, its own id
    assert [r.id for r, _ in storage.search([1.0, 0.0])] == ["secret"]
    assert storage.get_record("secret").metadata == {"k": "v"}


def test_bad_input_is_a_typed_error_and_lands_nothing(memory, storage):
    storage.save([record("k", "/", [1.0, 0.0])])
    head = memory.head_seq
    bad_metadata = record("k", "/", [1.0, 0.0]).model_copy(update={"metadata": {"t": {1}}})
    for call, field in (
        (lambda: storage.save("not records"), "records"),
        (lambda: storage.save([record("x", "/", [1.0, 0.0]), "x"]), "records"),
        (
            lambda: storage.save([record("e", "/", [1.0, 0.0]).model_copy(update={"content": ""})]),
            "records",
        ),
        (lambda: storage.update(bad_metadata), "metadata"),
        (lambda: storage.search("text"), "query_embedding"),
        (lambda: storage.search([1.0, 0.0], limit=-1), "limit"),
        (lambda: storage.search([1.0, 0.0], scope_prefix=3), "scope_prefix"),
        (lambda: storage.search([1.0, 0.0], categories="note"), "categories"),
        (lambda: storage.delete(record_ids="k"), "record_ids"),
        (lambda: storage.delete(older_than="yesterday"), "older_than"),
        (lambda: storage.touch_records([""]), "record_ids"),
        (lambda: storage.get_scope_info(None), "scope"),
    ):
        with pytest.raises(InvalidInput) as raised:
            call()
        assert raised.value.field == field
    with pytest.raises(TypeError, match="not JSON serializable"):
        storage.update(bad_metadata)  # as CrewAI's own storage raises it
    with pytest.raises(EmbeddingDimensionMismatchError):
        storage.save([record("y", "/", [1.0, 0.0, 0.0])])
    assert memory.head_seq == head
    with pytest.raises(InvalidInput):
        cr.MemcommitStorage(memory, vector_dim=0)


@pytest.mark.parametrize("tenant", [" acme", "acme\u200b", "ac\nme"])
def test_a_tenant_that_prints_as_another_is_refused_before_anything_lands(memory, tenant):
    with pytest.raises(InvalidInput) as raised:
        cr.MemcommitStorage(memory, tenant=tenant, vector_dim=2)  # the size is state it writes
    assert (raised.value.field, raised.value.value) == ("tenant", tenant)
    storage = cr.MemcommitStorage(memory, tenant=tenant)
    with pytest.raises(InvalidInput) as raised:
        storage.save([record("k", "/", [1.0, 0.0])])
    assert (raised.value.field, raised.value.value) == ("tenant", tenant)
    assert storage.count() == 0 and storage.search([1.0, 0.0]) == []
    assert memory.head_seq == 0 and memory.tenant(tenant).state_items("crewai-dimension") == {}


def test_a_missing_crewai_is_a_typed_error_naming_the_extra():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["crewai"] = None  # as if crewai were not installed
        from memcommit.errors import MissingExtra
        try:
            import memcommit.integrations.crewai
        except MissingExtra as exc:
            print(exc.field, exc.value, isinstance(exc, ImportError), exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("extra crewai True ")
    assert "pip install 'memcommit[crewai]'" in done.stdout

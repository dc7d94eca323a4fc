"""MemcommitDocumentStore beyond Haystack's kit: recall, history, tenants, typed errors, extras."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from upstream import require

from memcommit.errors import InvalidInput

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
hs = require("memcommit.integrations.haystack")
from haystack import Document, Pipeline  # noqa: E402
from haystack.document_stores.types import DuplicatePolicy  # noqa: E402
from haystack.errors import FilterError  # noqa: E402

HANDBOOK = [
    Document(
        id="deploy", content="Deploys run on Tuesdays after the standup.", meta={"team": "ops"}
    ),
    Document(
        id="rollback", content="A failed deploy is rolled back at once.", meta={"team": "ops"}
    ),
    Document(
        id="plant", content="The office plant needs water on Mondays.", meta={"team": "office"}
    ),
]


@pytest.fixture
def memory(make_store):
    return make_store()


@pytest.fixture
def handbook(memory, now):
    store = hs.MemcommitDocumentStore(memory, tenant="acme", index="handbook", clock=lambda: now)
    store.write_documents(HANDBOOK)
    return store


def test_recall_scores_documents_and_explains_the_rest(handbook, now):
    documents, ctx = handbook.recall("when does a deploy run", top_k=2)
    assert [d.id for d in documents] == ["deploy", "rollback"]
    assert all(d.score is not None and d.score > 0 for d in documents)
    assert documents[0].meta == {"team": "ops"}
    reasons = {row.memory.key: row.outcome for row in ctx.explanation.page(0, 10)}
    assert reasons["deploy"] == "selected"
    assert reasons["plant"] != "selected"  # left out, with the reason recall gives


def test_recall_filters_narrow_what_is_ranked(handbook):
    office = {"field": "meta.team", "operator": "==", "value": "office"}
    documents, _ = handbook.recall("deploy plant water", filters=office)
    assert [d.id for d in documents] == ["plant"]


def test_the_retriever_runs_in_a_pipeline(handbook):
    pipeline = Pipeline()
    pipeline.add_component("recall", hs.MemcommitRetriever(handbook, top_k=1))
    out = pipeline.run({"recall": {"query": "rolled back deploy"}})["recall"]
    assert [d.id for d in out["documents"]] == ["rollback"]
    assert out["context"].selected[0].key == "rollback"


def test_overwrite_and_delete_keep_history(handbook):
    changed = Document(id="deploy", content="Deploys run on Wednesdays now.", meta={"team": "ops"})
    assert handbook.write_documents([changed], policy=DuplicatePolicy.OVERWRITE) == 1
    handbook.delete_documents(["deploy"])
    assert [d.id for d in handbook.filter_documents()] == ["rollback", "plant"]
    (memory,) = handbook.view.find(scopes=["handbook"], key="deploy", live=False)
    history = handbook.view.history(memory.id)
    assert [m.content for m in history][:2] == [
        "Deploys run on Tuesdays after the standup.",
        "Deploys run on Wednesdays now.",
    ]
    assert history[-1].status == "invalidated"


def test_tenants_and_indexes_never_see_each_other(memory, handbook):
    other = hs.MemcommitDocumentStore(memory, tenant="globex", index="handbook")
    assert other.count_documents() == 0
    assert other.filter_documents() == []
    assert other.recall("deploy")[0] == []
    assert other.delete_by_filter({"field": "meta.team", "operator": "==", "value": "ops"}) == 0
    other.delete_all_documents()
    other.write_documents([Document(id="deploy", content="globex deploys on Fridays")])
    assert handbook.filter_documents() == HANDBOOK
    assert hs.MemcommitDocumentStore(memory, tenant="acme", index="wiki").count_documents() == 0
    assert handbook.count_documents() == 3


def test_a_failing_write_lands_nothing(handbook, memory):
    head = memory.tenant("acme").head_seq
    fresh = Document(id="new", content="brand new")
    with pytest.raises(InvalidInput) as raised:
        handbook.write_documents([fresh, HANDBOOK[0]], policy=DuplicatePolicy.FAIL)
    assert raised.value.field == "documents" and raised.value.value == "deploy"
    assert memory.tenant("acme").head_seq == head
    assert handbook.count_documents() == 3


def test_bad_filters_are_typed_errors_naming_the_filter(handbook):
    bad = {"field": "meta.team", "operator": "~", "value": "ops"}
    with pytest.raises(InvalidInput) as raised:
        handbook.filter_documents(bad)
    assert isinstance(raised.value, FilterError) and raised.value.field == "filters"
    with pytest.raises(InvalidInput):
        handbook.delete_by_filter({})  # deleting everything takes delete_all_documents
    assert handbook.count_documents() == 3


OPS = {"field": "meta.team", "operator": "==", "value": "ops"}


@pytest.fixture
def two_writers(make_store):
    """The same index through two `Store` objects on one target, as two processes hold it."""
    ours, theirs = (
        hs.MemcommitDocumentStore(make_store(), tenant="acme", index="handbook") for _ in range(2)
    )
    ours.write_documents(HANDBOOK)
    return ours, theirs


def test_update_by_filter_keeps_a_write_landed_since_its_read(two_writers, before_commit):
    ours, theirs = two_writers
    rewritten = Document(id="deploy", content="Deploys run on Wednesdays.", meta={"team": "ops"})
    moved = Document(id="rollback", content=HANDBOOK[1].content, meta={"team": "office"})
    before_commit(
        ours, lambda: theirs.write_documents([rewritten, moved], DuplicatePolicy.OVERWRITE)
    )
    assert ours.update_by_filter(OPS, {"reviewed": True}) == 1  # rollback matches no more
    found = {d.id: (d.content, d.meta) for d in theirs.filter_documents()}
    assert found["deploy"] == ("Deploys run on Wednesdays.", {"team": "ops", "reviewed": True})
    assert found["rollback"] == (HANDBOOK[1].content, {"team": "office"})


@pytest.mark.parametrize(
    "delete",
    [
        lambda docs: docs.delete_documents(["deploy"]),
        lambda docs: docs.delete_by_filter({"field": "id", "operator": "==", "value": "deploy"}),
    ],
    ids=["delete_documents", "delete_by_filter"],
)
def test_a_delete_removes_the_document_as_its_commit_finds_it(two_writers, before_commit, delete):
    ours, theirs = two_writers

    def meanwhile():  # the document is deleted and written anew under the same id
        theirs.delete_documents(["deploy"])
        theirs.write_documents([Document(id="deploy", content="Deploys are paused.")])

    before_commit(ours, meanwhile)
    delete(ours)
    assert [d.id for d in theirs.filter_documents()] == ["rollback", "plant"]
    held = ours.view.find(scopes=["handbook"], key="deploy", live=False)
    first = min(held, key=lambda m: m.created_commit)  # never invalidated a second time
    assert [v.status for v in ours.view.history(first.id)] == ["active", "invalidated"]


def test_recall_refuses_scopes_the_index_binds(handbook):
    for scopes in (None, ["wiki"]):
        with pytest.raises(InvalidInput) as raised:
            handbook.recall("deploy", scopes=scopes)
        assert raised.value.field == "scopes"
        with pytest.raises(InvalidInput) as raised:
            hs.MemcommitRetriever(handbook, recall_options={"scopes": scopes})
        assert raised.value.field == "scopes"


@pytest.mark.parametrize("filters", [None, OPS], ids=["unfiltered", "filtered"])
def test_recall_refuses_another_tenant_with_or_without_filters(handbook, filters):
    with pytest.raises(InvalidInput) as raised:
        handbook.recall("deploy", filters=filters, tenant="globex")
    assert (raised.value.field, raised.value.value) == ("tenant", "globex")
    documents, ctx = handbook.recall("deploy", filters=filters, tenant="acme")
    assert documents[0].id == "deploy" and ctx.tenant == "acme"


#: Metadata named "haystack" that this store did not write (as MCP's remember or the API may).
FOREIGN = [
    "x",
    {"id": "deploy"},  # no meta
    {"id": "elsewhere", "meta": {"team": "ops"}},  # an id that is not the memory's key
    {"id": "deploy", "meta": {"team": "ops"}, "colour": "red"},  # a field Haystack never writes
    {"id": "deploy", "meta": {"team": "ops"}, "blob": {"data": 10**12}},
    {"id": "deploy", "meta": {"team": "ops"}, "sparse_embedding": {"indices": [1]}},
]


@pytest.fixture
def crowded(memory, handbook, now):
    """The handbook, and in its index memories of every foreign shape (key "deploy", team ops)."""
    with memory.tenant("acme").commit(message="remember, through MCP", now=now) as tx:
        for mark in FOREIGN:
            tx.add("deploy deploy: ops runs it", scope="handbook", key="deploy",
                   metadata={"haystack": mark})  # fmt: skip
        tx.add("deploy deploy: ops runs it", scope="handbook", key="deploy", metadata={})
    return handbook


def test_memories_the_store_did_not_write_are_no_documents(crowded, memory):
    assert crowded.count_documents() == 3 and crowded.filter_documents() == HANDBOOK
    assert crowded.count_documents_by_filter(OPS) == 2
    assert crowded.count_unique_metadata_by_filter(OPS, ["team"]) == {"team": 1}
    assert crowded.get_metadata_fields_info() == {"team": {"type": "keyword"}}
    assert crowded.get_metadata_field_unique_values("team") == (["office", "ops"], 2)
    for filters in (None, OPS):
        documents, _ = crowded.recall("deploy ops", filters=filters, top_k=2)
        assert [d.id for d in documents] == ["deploy", "rollback"]
    foreign = len(FOREIGN) + 1
    assert crowded.update_by_filter(OPS, {"reviewed": True}) == 2
    crowded.delete_documents(["deploy"])
    assert crowded.delete_by_filter(OPS) == 1
    crowded.delete_all_documents()
    held = memory.tenant("acme").find(scopes=["handbook"])
    assert len(held) == foreign and all(m.version == 1 for m in held)  # never touched


def test_the_retriever_returns_top_k_documents_past_memories_that_are_none(crowded):
    out = hs.MemcommitRetriever(crowded, top_k=1).run(query="deploy ops")
    assert [d.id for d in out["documents"]] == ["deploy"]
    assert len(out["context"].selected) == len(FOREIGN) + 2  # outranked by every foreign one


def test_serialized_store_opens_the_same_documents(tmp_path):
    path = str(tmp_path / "docs.db")
    first = hs.MemcommitDocumentStore(path, tenant="acme", index="handbook")
    first.write_documents(HANDBOOK)
    again = hs.MemcommitDocumentStore.from_dict(first.to_dict())
    assert again.filter_documents() == HANDBOOK


def test_a_store_passed_in_is_not_serialized(memory):
    with pytest.raises(InvalidInput) as raised:
        hs.MemcommitDocumentStore(memory).to_dict()
    assert raised.value.field == "store"


def test_a_missing_haystack_is_a_typed_error_naming_the_extra():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["haystack"] = None  # as if haystack-ai were not installed
        from memcommit.errors import MissingExtra
        try:
            import memcommit.integrations.haystack
        except MissingExtra as exc:
            print(exc.field, exc.value, isinstance(exc, ImportError), exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("extra haystack True ")
    assert "pip install 'memcommit[haystack]'" in done.stdout

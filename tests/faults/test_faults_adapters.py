"""Other data shapes never break ours: filters, batches, foreign metadata, big namespaces."""

from __future__ import annotations

import pytest

from memcommit.errors import InvalidInput
from memcommit.integrations import filters

lg = pytest.importorskip("memcommit.integrations.langgraph")
lc = pytest.importorskip("memcommit.integrations.langchain")
base = pytest.importorskip("langgraph.store.base")

NS = ("user_1", "memories")


@pytest.fixture
def memory(make_store):
    return make_store()


@pytest.fixture
def store(memory, now):
    return lg.MemcommitStore(memory, tenant="acme", clock=lambda: now)


@pytest.mark.parametrize(
    "bad",
    [
        {"user": {"level": {"$foo": 1}}},
        {"user": {"name": {"$foo": "x"}}},
        {"user": {"$eq": {"level": {"$foo": 1}}}},
        {"tags": [{"$foo": 1}]},
        {"user": {"deep": {"deeper": {"$gt": 1, "name": "x"}}}},
    ],
)
def test_an_unknown_operator_at_any_depth_is_refused(store, bad):
    with pytest.raises(InvalidInput, match="unknown operator") as refused:
        filters.check(bad)
    assert refused.value.field == "filter"
    store.put(NS, "a", {"user": {"level": 3, "name": "x"}, "tags": [1]})
    with pytest.raises(InvalidInput, match="unknown operator"):
        store.search(NS, filter=bad)


def test_known_nested_operators_still_match(store):
    store.put(NS, "a", {"user": {"level": 3, "name": "x"}})
    found = store.search(NS, filter={"user": {"level": {"$gte": 3}, "name": {"$ne": "y"}}})
    assert [item.key for item in found] == ["a"]


def test_a_batch_with_a_bad_search_writes_nothing(store, memory):
    put = base.PutOp(NS, "food", {"text": "likes ramen"})
    search = base.SearchOp(NS, filter={"user": {"level": {"$foo": 1}}})
    with pytest.raises(InvalidInput, match="unknown operator"):
        store.batch([put, search])
    assert memory.head is None
    assert store.get(NS, "food") is None


def test_a_batch_whose_query_embedding_fails_writes_nothing(memory, now):
    def embed(texts):
        if "boom" in texts:
            raise RuntimeError("the embedding service is down")
        return [[1.0, float(len(t))] for t in texts]

    store = lg.MemcommitStore(memory, tenant="acme", clock=lambda: now,
                              index={"embed": embed, "dims": 2})  # fmt: skip
    put = base.PutOp(NS, "food", {"text": "likes ramen"})
    with pytest.raises(RuntimeError, match="embedding service"):
        store.batch([put, base.SearchOp(NS, query="boom")])
    assert memory.head is None


FOREIGN = [
    {"langgraph": {"source": "my notes about langgraph"}},
    {"langgraph": {"key": "food", "value": "not an object", "indexed": True}},
    {"langgraph": {"key": "food", "value": {}, "indexed": True}, "mine": 1},
    {"langgraph": {"key": "other", "value": {}, "indexed": True}},
    {"langchain": {"id": "d1"}},
    {"langchain": {"id": "d1", "metadata": {}, "vector": "x"}},
]


@pytest.mark.parametrize("metadata", FOREIGN)
def test_a_plain_memory_with_an_adapters_metadata_key_is_not_its_item(store, memory, metadata, now):
    store.put(NS, "food", {"text": "likes ramen"})
    docs = lc.MemcommitVectorStore(memory, tenant="acme", clock=lambda: now)
    docs.add_texts(["ramen is a noodle soup"], ids=["d1"])
    with memory.commit(
        message="through the API", now=now
    ) as tx:  # as MCP, the CLI or the API write
        for scope in ("shared", "user_1.memories", "documents"):
            tx.add("ramen ramen ramen", tenant="acme", scope=scope, key="food", metadata=metadata)
            tx.add("ramen again", tenant="acme", scope=scope, key="d1", metadata=metadata)
    assert [i.key for i in store.search(NS, query="ramen")] == ["food"]
    assert [i.key for i in store.search(("user_1",))] == ["food"]
    assert store.get(NS, "food").value == {"text": "likes ramen"}
    assert store.list_namespaces() == [NS]
    assert [i.value for i in store.history(NS, "food")] == [{"text": "likes ramen"}]
    found = docs.similarity_search("ramen", k=5)
    assert [d.id for d in found] == ["d1"]
    assert [d.id for d in docs.get_by_ids(["d1"])] == ["d1"]
    store.purge(NS, "food")  # erases the item, not the plain memory sharing its key
    assert [m.content for m in memory.find(scopes=["user_1.memories"])] == [
        "ramen ramen ramen",
        "ramen again",
    ]


def test_a_search_with_a_query_reads_only_what_it_shows(store, monkeypatch):
    notes = [base.PutOp(NS, f"note-{n}", {"text": f"filler note number {n}"}) for n in range(300)]
    store.batch(notes)
    store.put(NS, "food", {"text": "likes ramen"})
    store.put(NS, "lunch", {"text": "ramen for lunch on Fridays"})
    store.put(("other",), "food", {"text": "ramen elsewhere"})
    decoded = []
    of = lg.Stored.of
    monkeypatch.setattr(lg.Stored, "of", lambda memory: decoded.append(memory.id) or of(memory))
    found = store.search(NS, query="ramen", limit=2)
    assert sorted(item.key for item in found) == ["food", "lunch"]
    assert all(item.score is not None for item in found)
    assert len(decoded) < 10, len(decoded)
    decoded.clear()
    more = store.search(NS, query="ramen", limit=3)  # one unscored item follows, from a listing
    assert [item.key for item in more][2:] == ["note-0"] and more[2].score is None
    assert len(decoded) < 150, len(decoded)

"""MemcommitStore beyond LangGraph's suites: history, as_of, log, purge, TTL, errors, tenants."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from upstream import require

from memcommit.errors import InvalidInput

lg = require("memcommit.integrations.langgraph")
base = require("langgraph.store.base")
lg_items = require("memcommit.integrations.langgraph_items")


class Clock:
    """Injected time for commits and expiry: moves only when a test moves it."""

    def __init__(self, start):
        self.now = start

    def __call__(self):
        return self.now


@pytest.fixture
def clock(now):
    return Clock(now)


@pytest.fixture
def memory(make_store):
    return make_store()


@pytest.fixture
def store(memory, clock):
    return lg.MemcommitStore(memory, tenant="acme", clock=clock)


NS = ("user_1", "memories")


def test_an_overwrite_is_a_new_version_and_a_delete_keeps_history(store, clock):
    store.put(NS, "food", {"text": "likes ramen"})
    clock.now += timedelta(minutes=1)
    store.put(NS, "food", {"text": "likes udon"})
    clock.now += timedelta(minutes=1)
    store.delete(NS, "food")

    assert store.get(NS, "food") is None
    assert [item.value["text"] for item in store.history(NS, "food")] == [
        "likes ramen",
        "likes udon",
        "likes udon",
    ]
    versions = store.versions(NS, "food")
    assert len({v.id for v in versions}) == 1  # one memory, three versions
    assert [v.status for v in versions] == ["active", "active", "invalidated"]


def test_a_put_after_a_delete_is_a_new_memory_and_history_spans_both(store, clock):
    store.put(NS, "food", {"text": "likes ramen"})
    store.delete(NS, "food")
    clock.now += timedelta(minutes=1)
    store.put(NS, "food", {"text": "likes soba"})

    assert store.get(NS, "food").value == {"text": "likes soba"}
    assert len({v.id for v in store.versions(NS, "food")}) == 2
    assert store.history(NS, "food")[-1].value == {"text": "likes soba"}


def test_as_of_reads_the_items_as_they_stood(store, clock):
    store.put(NS, "food", {"text": "likes ramen"})
    first = store.memcommit.head
    clock.now += timedelta(minutes=1)
    store.put(NS, "food", {"text": "likes udon"})
    store.put(NS, "drink", {"text": "likes tea"})

    past = store.as_of(first)
    assert past.get(NS, "food").value == {"text": "likes ramen"}
    assert past.get(NS, "drink") is None
    assert [i.key for i in past.search(("user_1",))] == ["food"]
    assert [i.key for i in past.search(("user_1",), query="ramen")] == ["food"]
    assert past.list_namespaces() == [NS]
    assert store.as_of(clock.now).get(NS, "food").value == {"text": "likes udon"}


def test_a_store_as_of_a_commit_refuses_writes(store):
    store.put(NS, "food", {"text": "likes ramen"})
    past = store.as_of(store.memcommit.head)
    with pytest.raises(InvalidInput) as err:
        past.put(NS, "food", {"text": "rewrite history"})
    assert err.value.field == "as_of"
    assert store.get(NS, "food").value == {"text": "likes ramen"}


def test_the_log_of_a_namespace_lists_only_its_commits_and_changes(store):
    store.put(NS, "food", {"text": "likes ramen"})
    store.put(("user_2", "memories"), "food", {"text": "likes pho"})
    store.batch(
        [
            base.PutOp(NS, "drink", {"text": "likes tea"}),
            base.PutOp(("user_2", "memories"), "drink", {"text": "likes coffee"}),
        ]
    )
    store.delete(NS, "food")

    log = store.log(("user_1",))
    assert [len(c.changes) for c in log] == [1, 1, 1]
    assert [c.changes[0].op for c in log] == ["invalidate", "add", "add"]
    assert all(c.author == "langgraph" for c in log)
    assert len(store.log(("user_2",))) == 2
    assert len(store.log()) == 4
    assert len(store.log(limit=1)) == 1


def test_purge_erases_every_version(store, memory):
    store.put(NS, "secret", {"text": "the door code is 4711"})
    store.put(NS, "secret", {"text": "the door code is 1234"})
    store.purge(NS, "secret")

    assert store.get(NS, "secret") is None
    assert store.history(NS, "secret") == []
    versions = memory.tenant("acme").find(live=False, scopes=["user_1.memories"])
    assert [m.status for m in versions] == ["purged"]
    for m in memory.tenant("acme").history(versions[0].id):
        assert "4711" not in m.content and "1234" not in m.content
    assert store.log(NS)[0].changes[0].op == "purge"


def test_purge_erases_what_its_commit_finds_put_since_its_call(make_store, before_commit):
    """Another process deletes the item and puts it anew (a second memory), and puts another
    key, just before the purge's commit opens: both memories of the item are erased."""
    ours, theirs = (lg.MemcommitStore(make_store(), tenant="acme") for _ in range(2))
    ours.put(NS, "secret", {"text": "the door code is 4711"})

    def meanwhile():
        theirs.delete(NS, "secret")
        theirs.put(NS, "secret", {"text": "the door code is 1234"})
        theirs.put(NS, "other", {"text": "kept"})

    before_commit(ours._items, meanwhile)
    ours.purge(NS, "secret")
    assert theirs.get(NS, "secret") is None and theirs.history(NS, "secret") == []
    held = theirs.memcommit.find(live=False, scopes=["user_1.memories"], key="secret")
    assert [m.status for m in held] == ["purged", "purged"]
    assert theirs.get(NS, "other").value == {"text": "kept"}


def test_a_purge_of_nothing_lands_no_commit(store, memory):
    head = memory.head_seq
    store.purge(NS, "never-put")
    assert memory.head_seq == head


def test_ttl_expires_items_on_the_injected_clock(store, clock):
    store.put(NS, "note", {"text": "call back"}, ttl=10)  # minutes
    store.put(NS, "keep", {"text": "no expiry"})
    clock.now += timedelta(minutes=9)
    assert store.get(NS, "note", refresh_ttl=False) is not None
    clock.now += timedelta(minutes=1)
    assert store.get(NS, "note") is None
    assert [i.key for i in store.search(NS)] == ["keep"]
    assert store.history(NS, "note")[0].value == {"text": "call back"}  # expired, not lost


def test_a_read_refreshes_ttl_and_refresh_ttl_false_does_not(store, clock):
    store.put(NS, "a", {"text": "alpha"}, ttl=10)
    store.put(NS, "b", {"text": "beta"}, ttl=10)
    clock.now += timedelta(minutes=8)
    store.get(NS, "a")  # refreshes: expires 10 minutes from now
    store.get(NS, "b", refresh_ttl=False)
    clock.now += timedelta(minutes=8)
    assert store.get(NS, "a", refresh_ttl=False) is not None
    assert store.get(NS, "b") is None


def test_default_ttl_from_the_ttl_config(memory, clock):
    store = lg.MemcommitStore(memory, clock=clock, ttl={"default_ttl": 5})
    store.put(NS, "a", {"text": "alpha"})
    clock.now += timedelta(minutes=5)
    assert store.get(NS, "a") is None


@pytest.mark.parametrize(
    "key",
    [
        "access') = 'public' OR '1'='1",
        "a b",
        "x;DROP TABLE memories",
        'value"',
        "a..b",
        "",
        "$.a",
    ],
)
def test_injection_shaped_filter_keys_are_refused(store, key):
    store.put(NS, "doc", {"access": "public"})
    before = store.memcommit.head
    with pytest.raises(InvalidInput) as err:
        store.batch(
            [
                base.PutOp(NS, "other", {"access": "private"}),
                base.SearchOp(NS, filter={key: "public"}),
            ]
        )
    assert err.value.field == "filter"
    assert err.value.value == key
    assert store.memcommit.head == before  # the put in the same batch did not land
    assert store.get(NS, "other") is None


def test_unknown_filter_operators_are_refused(store):
    with pytest.raises(InvalidInput, match=r"\$regex"):
        store.search(NS, filter={"access": {"$regex": ".*"}})


def test_filters_are_exact(store):
    store.put(NS, "a", {"tag": "x", "n": 3, "user": {"role": "admin"}, "tags": ["p", "q"]})
    store.put(NS, "b", {"tag": "xx", "n": "3", "user": {"role": "user"}, "tags": ["p"]})

    def keys(f):
        return [i.key for i in store.search(NS, filter=f)]

    assert keys({"tag": "x"}) == ["a"]
    assert keys({"n": 3}) == ["a"]
    assert keys({"n": {"$gte": 3}}) == ["a"]  # "3" is text, not a number
    assert keys({"user.role": "user"}) == ["b"]
    assert keys({"tags": ["p"]}) == ["b"]
    assert keys({"tag": {"$ne": "x"}}) == ["b"]
    assert keys({"missing": None}) == []


def test_bad_values_are_refused_and_change_nothing(store):
    store.put(NS, "a", {"text": "alpha"})
    before = store.memcommit.head
    for op, field in [
        (base.PutOp(NS, "b", ["not", "a", "mapping"]), "value"),
        (base.PutOp(NS, "b", {"text": "x"}, ttl=-1), "ttl"),
        (base.PutOp(NS, "b", {"bad": float("nan")}), "metadata"),
    ]:
        with pytest.raises(InvalidInput) as err:
            store.batch([base.PutOp(NS, "a", {"text": "changed"}), op])
        assert err.value.field == field
    assert store.memcommit.head == before
    assert store.get(NS, "a").value == {"text": "alpha"}


def test_query_search_reports_the_recall_score(store, now):
    store.put(NS, "food", {"text": "likes spicy ramen"})
    store.put(NS, "pet", {"text": "has a cat named Miso"})
    hits = store.search(("user_1",), query="spicy ramen")
    assert [h.key for h in hits] == ["food", "pet"]
    assert hits[1].score is None  # not selected by recall: listed after, unscored
    ctx = store.memcommit.recall("spicy ramen", scopes=["user_1.memories"], tiers=None, now=now)
    (row,) = [r for r in ctx.rows if r.outcome == "selected"]
    assert hits[0].score == row.score > 0


def test_tenants_never_see_each_other(memory, clock):
    acme = lg.MemcommitStore(memory, tenant="acme", clock=clock)
    globex = lg.MemcommitStore(memory, tenant="globex", clock=clock)
    acme.put(NS, "plan", {"text": "acme launch plan"})
    globex.put(("other",), "plan", {"text": "globex launch plan"})

    assert globex.get(NS, "plan") is None
    assert [i.value["text"] for i in globex.search((), query="launch plan")] == [
        "globex launch plan"
    ]
    assert globex.list_namespaces() == [("other",)]
    assert globex.history(NS, "plan") == []
    assert globex.log(NS) == []
    globex.delete(NS, "plan")
    globex.purge(NS, "plan")
    assert acme.get(NS, "plan").value == {"text": "acme launch plan"}


def test_items_are_memories_recall_can_find(store, now):
    store.put(NS, "food", {"text": "likes spicy ramen", "source": "chat"})
    (memory,) = store.memcommit.find(scopes=["user_1.memories"])
    assert memory.key == "food" and memory.kind == "fact"
    assert "likes spicy ramen" in memory.content
    assert store.memcommit.recall("ramen", now=now).selected == [memory]


async def test_async_store_batches_concurrent_puts_into_one_commit(memory):
    import asyncio

    store = lg.AsyncMemcommitStore(memory, tenant="acme")
    await asyncio.gather(*(store.aput(NS, f"k{n}", {"n": n}) for n in range(20)))
    assert len(await store.asearch(NS, limit=100)) == 20
    assert len(store.log(NS)) < 20  # puts queued together landed together
    with pytest.raises(asyncio.InvalidStateError):
        store.get(NS, "k1")  # a sync call on the loop's thread would block it


@pytest.mark.parametrize(
    ("read", "field"),
    [
        (
            base.ListNamespacesOp(match_conditions=(base.MatchCondition("middle", ("a",)),)),
            "match_type",
        ),
        (base.SearchOp(NS, query=5), "query"),
        (base.SearchOp(NS, limit="10"), "limit"),
        (base.SearchOp(NS, offset=-1), "offset"),
        (base.GetOp(NS, None), "key"),
    ],
)
def test_a_bad_read_in_a_batch_writes_nothing(store, read, field):
    before = store.memcommit.head
    with pytest.raises(InvalidInput) as err:
        store.batch([base.PutOp(NS, "a", {"text": "alpha"}), read])
    assert err.value.field == field
    assert store.memcommit.head == before
    assert store.get(NS, "a") is None


@pytest.mark.parametrize(
    ("op", "field"),
    [
        (base.PutOp(NS, "b", {"text": "x"}, ttl=float("inf")), "ttl"),
        (base.PutOp(NS, "b", {"text": "x"}, ttl=float("nan")), "ttl"),
        (base.PutOp(NS, "b", {"text": "x"}, ttl=1e300), "ttl"),
        (base.PutOp(NS, "b", {"text": "x"}, ttl=1e12), "ttl"),  # past year 9999
        (base.PutOp(NS, "b", {"when": datetime(2026, 1, 1)}), "value"),
    ],
)
def test_puts_beyond_json_or_time_are_typed_errors(store, op, field):
    before = store.memcommit.head
    with pytest.raises(InvalidInput) as err:
        store.batch([base.PutOp(NS, "a", {"text": "alpha"}), op])
    assert err.value.field == field
    assert store.memcommit.head == before


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.log(NS, limit="x"), "limit"),
        (lambda s: s.search(NS, limit=-1), "limit"),
        (lambda s: s.list_namespaces(max_depth=-1), "max_depth"),
        (lambda s: s.list_namespaces(max_depth=0), "max_depth"),
        (lambda s: s.history(NS, None), "key"),
        (lambda s: s.versions(NS, ""), "key"),
    ],
)
def test_bad_read_arguments_are_typed_errors(store, call, field):
    store.put(NS, "a", {"text": "alpha"})
    with pytest.raises(InvalidInput) as err:
        call(store)
    assert err.value.field == field


def test_a_key_put_under_another_namespace_keeps_the_older_items_score(store, clock):
    store.put(("user_1",), "food", {"text": "likes spicy ramen"})
    clock.now += timedelta(minutes=1)
    store.put(("user_2",), "food", {"text": "likes green tea"})
    (hit,) = store.search(("user_1",), query="spicy ramen")
    assert hit.value == {"text": "likes spicy ramen"}
    assert hit.score is not None and hit.score > 0


def test_a_refresh_past_the_last_datetime_keeps_the_batch_and_its_put(store, clock):
    last = datetime.max.replace(tzinfo=timezone.utc)
    minutes = (last - clock.now).total_seconds() / 60 - 1
    store.put(NS, "long", {"text": "kept for ages"}, ttl=minutes)
    clock.now += timedelta(minutes=2)
    put, got = store.batch(
        [base.PutOp(NS, "b", {"text": "beta"}), base.GetOp(NS, "long", refresh_ttl=True)]
    )
    assert put is None and got.value == {"text": "kept for ages"}
    assert store.get(NS, "b").value == {"text": "beta"}
    (memory,) = store.memcommit.find(scopes=["user_1.memories"], key="long")
    assert memory.valid_to == last


def test_a_refresh_of_an_item_deleted_since_the_read_leaves_it_deleted(store, memory, clock):
    store.put(NS, "a", {"text": "alpha"}, ttl=5)
    (stale,) = store._items.live(clock.now, key="a")
    store.delete(NS, "a")
    seq = memory.head_seq
    store._items.refresh([stale])
    assert memory.head_seq == seq  # not even an empty commit
    assert store.get(NS, "a") is None


async def test_a_bad_read_of_another_caller_never_fails_a_put_that_landed(memory):
    import asyncio

    store = lg.AsyncMemcommitStore(memory, tenant="acme")
    put, bad = await asyncio.gather(
        store.aput(NS, "a", {"text": "alpha"}),
        store.asearch(NS, query=5),
        return_exceptions=True,
    )
    assert isinstance(bad, InvalidInput) and bad.field == "query"
    landed = await store.aget(NS, "a")
    assert (put is None) == (landed is not None)


def _hashed(texts):
    """A LangGraph ``embed`` callable: memcommit's hashed words and trigrams, 64 dims."""
    from memcommit.embedding import resolve

    return resolve("hash:64").embed(list(texts)).tolist()


INDEX = {"dims": 64, "embed": _hashed}


@pytest.fixture
def indexed(memory, clock):
    return lg.MemcommitStore(memory, tenant="acme", clock=clock, index=INDEX)


def _stored_ids(store):
    name = lg_items.embedder_name(INDEX)
    return set(store.memcommit.vectors(name).ids)


def test_index_puts_store_vectors_and_index_false_items_have_none(indexed):
    indexed.put(NS, "food", {"text": "likes spicy ramen"})
    indexed.put(NS, "secret", {"text": "likes spicy ramen too"}, index=False)
    ids = {m.key: m.id for m in indexed.memcommit.find(scopes=["user_1.memories"])}
    assert _stored_ids(indexed) == {ids["food"]}
    hits = indexed.search(NS, query="spicy ramen")
    assert [h.key for h in hits] == ["food", "secret"]
    assert hits[1].score is None  # unindexed: listed after, unscored


def test_index_search_scores_are_cosines_best_first_and_follow_updates(indexed):
    import numpy as np

    texts = {"food": "likes spicy ramen", "pet": "has a cat named Miso", "car": "drives a Civic"}
    for key, text in texts.items():
        indexed.put(NS, key, {"text": text})
    query = "spicy ramen with a cat"
    hits = indexed.search(NS, query=query)
    want = np.asarray(_hashed([query]))[0]
    for hit in hits:
        if hit.score is not None:
            (text,) = lg_items.Embedder(INDEX).texts(hit.value, None)
            assert hit.score == pytest.approx(float(np.dot(want, _hashed([text])[0])), abs=0.02)
    scores = [h.score for h in hits if h.score is not None]
    assert scores == sorted(scores, reverse=True) and len(scores) >= 2
    before = next(h.score for h in hits if h.key == "food")
    indexed.put(NS, "food", {"text": "owns a bicycle"})
    after = next((h.score for h in indexed.search(NS, query=query) if h.key == "food"), 0.0)
    assert (after or 0.0) < before
    (food,) = [m for m in indexed.memcommit.find(scopes=["user_1.memories"]) if m.key == "food"]
    assert food.id in _stored_ids(indexed)  # the new content has its vector


def test_embed_ids_of_a_view_never_embeds_another_tenants_memory(memory):
    with memory.tenant("globex").commit("x") as tx:
        theirs = tx.add("globex launch plan").id
    assert memory.tenant("acme").embed_ids("hash", [theirs]) == 0
    assert memory.vectors("hash", tenant="globex").ids == ()
    assert memory.tenant("globex").embed_ids("hash", [theirs]) == 1
    assert memory.vectors("hash", tenant="globex").ids == (theirs,)


def test_a_failing_embedding_lands_nothing(memory, clock):
    def broken(texts):
        raise RuntimeError("the model is down")

    store = lg.MemcommitStore(
        memory, tenant="acme", clock=clock, index={"dims": 8, "embed": broken}
    )
    with pytest.raises(RuntimeError, match="the model is down"):
        store.put(NS, "food", {"text": "likes spicy ramen"})
    assert store.memcommit.find() == [] and store.memcommit.log() == []


@pytest.mark.parametrize(("answer", "field"), [("nan", "values"), ("short", "dims")])
def test_a_bad_query_embedding_fails_the_batch_before_its_put(memory, clock, answer, field):
    import math

    from langchain_core.embeddings import Embeddings as LangChainEmbeddings

    from memcommit.errors import EmbedderError

    class Embeddings(LangChainEmbeddings):
        def embed_documents(self, texts):
            return _hashed(texts)

        def embed_query(self, text):
            return [math.nan] * 64 if answer == "nan" else _hashed([text])[0][:32]

    store = lg.MemcommitStore(
        memory, tenant="acme", clock=clock, index={"dims": 64, "embed": Embeddings()}
    )
    head = store.memcommit.head
    with pytest.raises(EmbedderError) as caught:
        store.batch([base.PutOp(NS, "food", {"text": "likes ramen"}),
                     base.SearchOp(("user_1",), query="ramen")])  # fmt: skip
    assert caught.value.field == field
    assert store.memcommit.head == head and store.memcommit.find() == []

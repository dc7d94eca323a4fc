"""MemcommitRetriever and MemcommitVectorStore beyond langchain-tests: explanations, budgets,
history, typed errors and tenants."""

from __future__ import annotations

import pytest
from upstream import require

from memcommit import Words
from memcommit.errors import InvalidInput
from memcommit.recall import RecallOptions
from poolsplit import Pool

lc = require("memcommit.integrations.langchain")


@pytest.fixture
def memory(make_store):
    return make_store()


@pytest.fixture
def acme(memory):
    view = memory.tenant("acme")
    with view.commit(message="seed") as tx:
        tx.add("Deploys run on Tuesdays after the standup.", kind="fact")
        tx.add("The deploy of 3 March failed on a missing migration.", kind="event")
        tx.add("Never deploy on a Friday.", kind="correction", always=True)
        tx.add("The office plant needs water on Mondays.", kind="fact")
    return view


def test_documents_carry_recall_explanation(acme, now):
    retriever = lc.MemcommitRetriever(memory=acme, k=3, clock=lambda: now)
    docs = retriever.invoke("when do deploys run")
    ctx = acme.recall("when do deploys run", max_records=3, now=now)
    assert [d.page_content for d in docs] == [m.content for m in ctx.selected]
    assert docs[0].page_content == "Never deploy on a Friday."  # corrections load first
    rows = {r.memory.id: r for r in ctx.rows}
    for doc in docs:
        explained = doc.metadata["memcommit"]
        assert explained["score"] == rows[doc.id].score
        assert explained["pool"] == rows[doc.id].pool
    assert docs[0].metadata["excluded"] == dict(ctx.explanation.counts().reasons)
    assert "no_lexical_match" in docs[0].metadata["excluded"]


def test_budget_pools_and_filters_are_parameters(acme, now):
    pools = [Pool("corrections", 0, 0, ("correction",)), Pool("events", 20, 1, ("event",))]
    retriever = lc.MemcommitRetriever(
        memory=acme, k=5, budget=Words(20), pools=pools, clock=lambda: now
    )
    docs = retriever.invoke("deploy failed migration")
    assert [d.metadata["memcommit"]["pool"] for d in docs] == ["corrections", "events"]
    only_facts = lc.MemcommitRetriever(memory=acme, kinds=["fact"], clock=lambda: now)
    assert {d.metadata["memcommit"]["kind"] for d in only_facts.invoke("deploys")} == {"fact"}


def test_bad_recall_arguments_are_typed_errors(acme):
    with pytest.raises(InvalidInput) as err:
        lc.MemcommitRetriever(memory=acme, budget=20).invoke("deploys")
    assert err.value.field == "budget"
    with pytest.raises(InvalidInput) as err:
        lc.MemcommitRetriever(memory=acme).invoke("deploys", depth=3)
    assert err.value.field == "depth"


def test_recall_options_may_set_what_the_retriever_also_names(acme, now):
    """Issue 24 item 12: recall_options max_records raised TypeError (a duplicate keyword)."""

    def recalled(n):
        return [m.content for m in acme.recall("deploy", max_records=n, now=now).selected]

    def contents(retriever, **kw):
        return [d.page_content for d in retriever.invoke("deploy", **kw)]

    assert len(recalled(1)) < len(recalled(2))  # the cap shows
    capped = lc.MemcommitRetriever(
        memory=acme, recall_options={"max_records": 1}, clock=lambda: now
    )
    assert contents(capped) == recalled(1)
    assert contents(capped, k=2) == recalled(2)  # the call's own k wins
    given_k = lc.MemcommitRetriever(
        memory=acme, k=2, recall_options={"max_records": 1}, clock=lambda: now
    )
    assert contents(given_k) == recalled(2)  # a field given to the retriever wins
    as_value = lc.MemcommitRetriever(
        memory=acme,
        recall_options=RecallOptions(max_records=1, kinds="semantic"),
        clock=lambda: now,
    )
    assert [d.metadata["memcommit"]["kind"] for d in as_value.invoke("deploy")] == ["fact"]
    assert as_value.options() == RecallOptions(max_records=1, kinds="semantic", now=now)
    assert lc.MemcommitRetriever(memory=acme).options().max_records == 4  # k's default


def test_bad_recall_options_are_typed_errors(acme):
    with pytest.raises(InvalidInput) as err:
        lc.MemcommitRetriever(memory=acme, recall_options={"max_records": -1}).invoke("deploys")
    assert err.value.field == "max_records"
    with pytest.raises(InvalidInput) as err:
        lc.MemcommitRetriever(memory=acme, recall_options={"depth": 3}).invoke("deploys")
    assert (err.value.field, err.value.value) == ("recall_options", "depth")


def test_the_retriever_sees_one_tenant(memory, acme, now):
    other = memory.tenant("globex")
    with other.commit(message="seed") as tx:
        tx.add("Globex deploys run on Thursdays.")
    docs = lc.MemcommitRetriever(memory=other, k=10, clock=lambda: now).invoke("deploys run")
    assert [d.page_content for d in docs] == ["Globex deploys run on Thursdays."]


def test_vector_store_overwrites_are_versions_and_deletes_keep_history(memory):
    docs = lc.MemcommitVectorStore(memory, tenant="acme")
    docs.add_texts(["deploys run on Tuesdays"], ids=["deploy-day"])
    docs.add_texts(["deploys run on Wednesdays"], ids=["deploy-day"])
    docs.delete(["deploy-day"])
    assert docs.get_by_ids(["deploy-day"]) == []
    (memory_id,) = {m.id for m in docs.view.find(live=False, scopes=["documents"])}
    versions = docs.view.history(memory_id)
    assert [v.content for v in versions] == [
        "deploys run on Tuesdays",
        "deploys run on Wednesdays",
        "deploys run on Wednesdays",
    ]
    assert versions[-1].status == "invalidated"


def test_get_by_ids_returns_each_document_once(memory):
    """LangChain's contract: fewer documents than ids for duplicated ones; ids are text here."""
    docs = lc.MemcommitVectorStore(memory)
    docs.add_texts(["an int id", "a text id"], ids=[5, "x"])
    found = docs.get_by_ids(["5", "x", 5, "missing", "x"])
    assert [(d.id, d.page_content) for d in found] == [("5", "an int id"), ("x", "a text id")]


def test_delete_removes_the_documents_as_its_commit_finds_them(make_store, before_commit):
    ours, theirs = (lc.MemcommitVectorStore(make_store()) for _ in range(2))
    ours.add_texts(["deploys run on Tuesdays"], ids=["deploy"])

    def meanwhile():  # the document is deleted and added anew under the same id
        theirs.delete(["deploy"])
        theirs.add_texts(["deploys are paused"], ids=["deploy"])

    before_commit(ours, meanwhile)
    ours.delete(["deploy"])
    assert theirs.get_by_ids(["deploy"]) == []
    held = ours.view.find(scopes=["documents"], key="deploy", live=False)
    first = min(held, key=lambda m: m.created_commit)  # never invalidated a second time
    assert [v.status for v in ours.view.history(first.id)] == ["active", "invalidated"]


def test_vector_store_similarity_is_recall_score_without_embedding(memory, now):
    docs = lc.MemcommitVectorStore(memory, tenant="acme", clock=lambda: now)
    docs.add_texts(["deploys run on Tuesdays", "the plant needs water"], ids=["a", "b"])
    (top, score), (rest, zero) = docs.similarity_search_with_score("when do deploys run", k=2)
    ctx = docs.view.recall("when do deploys run", scopes=["documents"], tiers=None, now=now)
    assert (top.id, score) == ("a", ctx.rows[0].score)
    assert (rest.id, zero) == ("b", 0.0)


def test_vector_store_filters_refuse_injection_shaped_keys(memory):
    docs = lc.MemcommitVectorStore(memory)
    docs.add_texts(["alpha"], metadatas=[{"access": "public"}], ids=["a"])
    assert [d.id for d in docs.similarity_search("alpha", filter={"access": "public"})] == ["a"]
    assert docs.similarity_search("alpha", filter={"access": "private"}) == []
    with pytest.raises(InvalidInput) as err:
        docs.similarity_search("alpha", filter={"access' OR '1'='1": "x"})
    assert err.value.field == "filter"


def test_vector_store_tenants_are_apart(memory):
    acme = lc.MemcommitVectorStore(memory, tenant="acme")
    globex = lc.MemcommitVectorStore(memory, tenant="globex")
    acme.add_texts(["acme secret plan"], ids=["plan"])
    assert globex.get_by_ids(["plan"]) == []
    assert globex.similarity_search("secret plan") == []
    globex.delete(["plan"])
    assert [d.page_content for d in acme.get_by_ids(["plan"])] == ["acme secret plan"]


def test_documents_sharing_an_id_in_other_scopes_keep_their_score(memory, now):
    deploys = lc.MemcommitVectorStore(memory, scope="deploys", clock=lambda: now)
    garden = lc.MemcommitVectorStore(memory, scope="garden", clock=lambda: now)
    deploys.add_texts(["deploys run on Tuesdays"], ids=["note"])
    garden.add_texts(["the plant needs water"], ids=["note"])  # newer, same id
    ((doc, score),) = deploys.similarity_search_with_score("when do deploys run", k=1)
    assert doc.page_content == "deploys run on Tuesdays"
    assert score > 0


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda docs: docs.add_texts(["a"], metadatas=["m"]), "metadatas"),
        (lambda docs: docs.add_texts(["a"], metadatas=[{}], ids="a"), "ids"),
        (lambda docs: docs.add_texts("ab"), "texts"),
        (lambda docs: docs.add_texts([5]), "texts"),
        (lambda docs: docs.similarity_search(None), "query"),
        (lambda docs: docs.similarity_search(5), "query"),
    ],
)
def test_vector_store_bad_arguments_are_typed_errors_and_change_nothing(memory, call, field):
    docs = lc.MemcommitVectorStore(memory)
    docs.add_texts(["alpha"], ids=["a"])
    head = docs.view.head
    with pytest.raises(InvalidInput) as err:
        call(docs)
    assert err.value.field == field
    assert docs.view.head == head


def test_a_langchain_embedding_is_a_memcommit_embedder(make_store, now):
    """A store opened with a LangChain embedding keeps its vectors and fuses recall with them."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    embedder = lc.LangChainEmbedder(DeterministicFakeEmbedding(size=16), name="fake-v1", dims=16)
    store = make_store(embedder=embedder)
    with store.commit(now=now) as tx:
        tx.add("Deploys run on Tuesdays.", tenant="acme")
        tx.add("The cafeteria opens at nine.", tenant="acme")
    stored = store.vectors(tenant="acme")
    assert stored.embedder == "fake-v1" and stored.matrix.shape == (2, 16)
    ctx = store.recall("Deploys run on Tuesdays.", tenant="acme", now=now, explain=True)
    assert ctx.scorer == "hybrid"
    assert ctx.rows[0].components["dense_rank"] == 1  # the fake embeds equal texts equally
    with pytest.raises(InvalidInput) as bad:
        lc.LangChainEmbedder(DeterministicFakeEmbedding(size=16), name="fake-v1", dims=0)
    assert bad.value.field == "dims"


class _Hashed:
    """A LangChain ``Embeddings``: memcommit's hashed words and trigrams (64 dims), plain lists."""

    def embed_documents(self, texts):
        from memcommit.embedding import resolve

        return resolve("hash:64").embed(list(texts)).tolist()

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def test_vector_store_with_embedding_uses_the_store_vectors_and_cosine_scores(memory):
    import numpy as np

    docs = lc.MemcommitVectorStore(memory, tenant="acme", embedding=_Hashed())
    texts = ["spicy ramen for lunch", "a cat named Miso", "drives a red Civic"]
    ids = docs.add_texts(texts)
    stored = memory.vectors(docs.embedding_name, tenant="acme")
    by_key = {m.id: m.key for m in memory.tenant("acme").find(scopes=["documents"])}
    assert sorted(by_key[i] for i in stored.ids) == sorted(ids)
    query = "ramen with a cat"
    hits = docs.similarity_search_with_score(query, k=3)
    want = np.asarray(_Hashed().embed_query(query))
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and sum(1 for s in scores if s) >= 2
    for doc, score in hits:
        if score:
            cosine = float(np.dot(want, _Hashed().embed_query(doc.page_content)))
            assert score == pytest.approx(cosine, abs=0.02)
    assert memory.vectors(docs.embedding_name, tenant="other").ids == ()


class _Answers:
    """A LangChain ``Embeddings`` that answers 4-value rows, or wrongly in one chosen way."""

    def __init__(self, how: str = "ok") -> None:
        self.how = how

    def embed_documents(self, texts):
        rows = [[1.0, 0.0, 0.0, 0.0] for _ in texts]
        if self.how == "ragged":
            rows[-1] = rows[-1][:3]
        elif self.how == "text":
            rows = [["a", "b", "c", "d"] for _ in texts]
        elif self.how == "one-long-row":  # one row of 8 for two texts: was reshaped to 2 x 4
            rows = [[0.5] * 8]
        elif self.how == "huge":
            rows[0][0] = 10**400
        elif self.how == "none":
            rows[0][0] = None
        return rows

    def embed_query(self, text):
        return self.embed_documents([text])[0]


@pytest.mark.parametrize(
    ("how", "field"),
    [
        ("ragged", "values"),
        ("text", "values"),
        ("one-long-row", "dims"),
        ("huge", "values"),
        ("none", "values"),
    ],
)
def test_a_langchain_embedding_answering_wrongly_is_an_embedder_error(memory, how, field):
    from memcommit.embedding.vectors import embedded
    from memcommit.errors import EmbedderError

    embedder = lc.LangChainEmbedder(_Answers(how), name="answers/4", dims=4)
    with pytest.raises(EmbedderError) as caught:
        embedded(embedder, ["one", "two"], "passage")
    assert caught.value.field == field and caught.value.embedder == "answers/4"
    answers = _Answers()
    docs = lc.MemcommitVectorStore(
        memory, tenant="acme", embedding=answers, embedding_name="answers/4"
    )
    docs.add_texts(["seed"])  # the name's size is 4 from here on
    answers.how = how
    head = docs.view.head
    with pytest.raises(EmbedderError):
        docs.add_texts(["one", "two"])
    assert docs.view.head == head and [m.content for m in docs.view.find()] == ["seed"]


def test_tenants_embeddings_of_two_sizes_never_meet(memory):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    a = lc.MemcommitVectorStore(memory, tenant="a", embedding=DeterministicFakeEmbedding(size=16))
    a.add_texts(["tenant a's secret roadmap"])
    b = lc.MemcommitVectorStore(memory, tenant="b", embedding=DeterministicFakeEmbedding(size=32))
    b.add_texts(["tenant b's note"])  # was refused: a's 16 dims under one shared name
    assert a.embedding_name.endswith("DeterministicFakeEmbedding/16")
    assert b.embedding_name.endswith("DeterministicFakeEmbedding/32")
    assert memory.vectors(b.embedding_name, tenant="b").matrix.shape == (1, 32)
    assert memory.tenant("b").vectors(a.embedding_name).dims == 0  # nor learns a's size
    (hit,) = b.similarity_search_with_score("tenant b's note", k=1)
    assert hit[1] == pytest.approx(1.0, abs=0.02)  # by its own vectors
    again = lc.MemcommitVectorStore(
        memory, tenant="a", embedding=DeterministicFakeEmbedding(size=16)
    )
    assert again.embedding_name == a.embedding_name  # a new process finds a's vectors again


def test_vector_store_with_a_failing_embedding_adds_nothing(memory):
    class Broken(_Hashed):
        def embed_documents(self, texts):
            raise RuntimeError("the model is down")

    docs = lc.MemcommitVectorStore(memory, tenant="acme", embedding=Broken())
    head = docs.view.head
    with pytest.raises(RuntimeError, match="the model is down"):
        docs.add_texts(["spicy ramen"])
    assert docs.view.head == head and docs.view.find() == []

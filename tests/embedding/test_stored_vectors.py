"""Vectors kept with the memories, on both backends: written, moved, replaced, erased, filled."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.embedding.hashed import HashEmbedder
from memcommit.errors import EmbedderError, HookError, InvalidInput

HASH = HashEmbedder()


class Renamed:
    """A HashEmbedder under a name of the test's choosing (a model whose size changed)."""

    def __init__(self, name: str, dims: int) -> None:
        self.name, self.dims = name, dims
        self.inner = HashEmbedder(dims=dims)
        self.calls = 0

    def embed(self, texts, *, kind="passage"):
        self.calls += 1
        return self.inner.embed(texts, kind=kind)


class Failing(Renamed):
    """Embeds ``good`` calls, then raises as a model or a server would."""

    def __init__(self, good: int) -> None:
        super().__init__(HASH.name, HASH.dims)
        self.good = good

    def embed(self, texts, *, kind="passage"):
        if self.calls >= self.good:
            raise EmbedderError(self.name, "status", 503, "the server is away")
        return super().embed(texts, kind=kind)


def expected(*texts: str) -> np.ndarray:
    return HASH.embed(list(texts))


def test_a_commit_stores_the_vectors_of_what_it_adds(make_store):
    store = make_store(embedder="hash")
    with store.commit("two") as tx:
        a = tx.add("her new Civic is red")
        b = tx.add("the weather is nice")
    got = store.vectors()
    assert got.embedder == HASH.name and got.dims == 64
    assert got.ids == tuple(sorted([a.id, b.id])) and got.versions == (1, 1)
    order = [a.content if i == a.id else b.content for i in got.ids]
    assert got.matrix.dtype == np.float32 and np.array_equal(got.matrix, expected(*order))


def test_a_new_version_keeps_its_vector_unless_the_content_changed(make_store):
    store = make_store(embedder="hash")
    with store.commit() as tx:
        m = tx.add("a red car")
    with store.commit() as tx:
        tx.archive(m.id)
        tx.update(m.id, importance=0.9)
    got = store.vectors(ids=[m.id])
    assert got.versions == (3,) and np.array_equal(got.matrix, expected("a red car"))
    with store.commit() as tx:
        tx.update(m.id, content="a blue bicycle")
    got = store.vectors(ids=[m.id])
    assert got.versions == (4,) and np.array_equal(got.matrix, expected("a blue bicycle"))


def test_purge_deletes_every_vector_of_the_memory(make_store):
    store = make_store(embedder="hash")
    with store.commit() as tx:
        gone = tx.add("my passport number")
        kept = tx.add("kept")
    store.embed(Renamed("other/8", 8))  # a second embedder's vectors too
    with store.commit() as tx:
        tx.purge(gone.id)
    assert store.vectors().ids == (kept.id,)
    assert store.vectors("other/8").ids == (kept.id,)
    assert {row[1] for row in store.backend.vector_rows(after=None, limit=10)} == {kept.id}
    assert {name for name, _, _ in store.backend.embedders()} == {HASH.name, "other/8"}


def test_a_tenant_sees_only_its_own_vectors(make_store):
    store = make_store(embedder="hash")
    with store.commit() as tx:
        mine = tx.add("mine", tenant="alice")
        theirs = tx.add("theirs", tenant="bob")
    alice = store.tenant("alice")
    assert alice.vectors().ids == (mine.id,)
    assert alice.vectors(ids=[theirs.id]).ids == ()
    assert store.vectors(tenant="bob").ids == (theirs.id,)
    assert store.vectors().ids == ()  # the default tenant has none
    with pytest.raises(InvalidInput) as caught:
        alice.vectors(tenant="bob")
    assert caught.value.field == "tenant"
    with pytest.raises(InvalidInput):
        alice.embed("hash", tenant="bob")


def test_embed_fills_what_has_no_vector_and_is_resumable(make_store):
    store = make_store()
    with store.commit() as tx:
        ids = [tx.add(f"memory {i}").id for i in range(7)]
    seen: list[tuple[int, int]] = []
    first = store.embed("hash", batch_size=2, limit=3, progress=lambda d, t: seen.append((d, t)))
    assert (first.embedded, first.skipped, first.remaining) == (3, 0, 4)
    assert seen == [(0, 3), (2, 3), (3, 3)]
    assert store.vectors("hash-ngram-v1/64").ids == tuple(sorted(ids)[:3])
    broken = Failing(good=1)
    with pytest.raises(EmbedderError):
        store.embed(broken, batch_size=2)  # one batch lands, the next fails
    assert len(store.vectors(HASH).ids) == 5
    last = store.embed("hash")
    assert (last.embedded, last.remaining) == (2, 0)
    assert store.embed("hash").embedded == 0  # nothing left: nothing embedded again
    assert np.array_equal(
        store.vectors(HASH).matrix, expected(*[f"memory {ids.index(i)}" for i in sorted(ids)])
    )


def test_embedding_runs_outside_the_write_lock_and_drops_what_changed_meanwhile(
    make_store, store_backend
):
    store = make_store("shared.db")
    with store.commit() as tx:
        moving = tx.add("first words")
        still = tx.add("still words")
    other = make_store("shared.db")

    class Meddling(Renamed):
        def embed(self, texts, *, kind="passage"):
            if self.calls == 0:  # another writer commits while the model runs
                with other.commit("meanwhile") as tx:
                    tx.update(moving.id, content="second words")
            return super().embed(texts, kind=kind)

    report = store.embed(Meddling(HASH.name, HASH.dims))
    assert (report.embedded, report.skipped) == (1, 1)
    assert store.vectors(HASH).ids == (still.id,)
    store.embed(HASH)
    got = store.vectors(HASH, ids=[moving.id])
    assert np.array_equal(got.matrix, expected("second words"))


def test_a_failing_embedder_after_a_commit_raises_hook_error_and_the_commit_stays(tmp_path):
    store = memcommit.open(tmp_path / "s.db", embedder=Failing(good=0))
    with pytest.raises(HookError) as caught, store.commit() as tx:
        m = tx.add("landed anyway")
    assert caught.value.commit is not None
    assert isinstance(caught.value.errors[0], EmbedderError)
    assert store.get(m.id).content == "landed anyway"
    assert store.vectors(HASH).ids == ()
    assert store.embed(HASH).embedded == 1
    store.close()


def test_an_embedder_of_another_size_under_a_stored_name_is_refused(make_store, tmp_path):
    store = make_store("sized.db", embedder=Renamed("model/v1", 8))
    with store.commit() as tx:
        tx.add("eight values")
    before = store.backend.vector_rows(after=None, limit=10)
    with pytest.raises(InvalidInput) as caught:
        make_store("sized.db", embedder=Renamed("model/v1", 16))
    assert caught.value.field == "embedder" and caught.value.value == "model/v1"
    assert "8-dim" in str(caught.value)
    with pytest.raises(InvalidInput):
        store.embed(Renamed("model/v1", 16))
    assert store.backend.vector_rows(after=None, limit=10) == before


def test_an_unknown_embedder_name_opens_nothing(tmp_path):
    with pytest.raises(InvalidInput) as caught:
        memcommit.open(tmp_path / "never.db", embedder="bogus")
    assert caught.value.field == "embedder" and caught.value.value == "bogus"
    assert not (tmp_path / "never.db").exists()


def test_bad_arguments_are_refused_naming_them(make_store):
    store = make_store()
    with pytest.raises(InvalidInput) as caught:
        store.embed()
    assert caught.value.field == "embedder"  # opened without one, none given
    for kw, field in [({"batch_size": 0}, "batch_size"), ({"limit": -1}, "limit")]:
        with pytest.raises(InvalidInput) as caught:
            store.embed("hash", **kw)
        assert caught.value.field == field
    with pytest.raises(InvalidInput) as caught:
        store.vectors("hash", limit="x")
    assert caught.value.field == "limit"
    with pytest.raises(InvalidInput) as caught:
        store.embed("hash", progress=5)
    assert caught.value.field == "progress"


@pytest.mark.parametrize("ids", [None, 7, "the id itself", {"a set"}])
def test_embed_ids_takes_a_list_of_ids_only(make_store, ids):
    store = make_store()
    with store.commit() as tx:
        m = tx.add("some text", tenant="a")
    if isinstance(ids, str):
        ids = m.id  # one id, which was read as its characters
    with pytest.raises(InvalidInput) as caught:
        store.tenant("a").embed_ids("hash", ids)
    assert (caught.value.field, caught.value.value) == ("ids", ids)
    assert store.backend.vector_rows(after=None, limit=10) == []
    assert store.tenant("a").embed_ids("hash", (m.id,)) == 1


def test_a_tenant_never_learns_the_size_of_another_tenants_vectors(make_store):
    store = make_store()
    with store.commit() as tx:
        theirs = tx.add("tenant a only", tenant="a").id
    secret = Renamed("openai:secret-model", 48)
    store.tenant("a").embed_ids(secret, [theirs])
    for got in (store.tenant("b").vectors(secret.name), store.vectors(secret, tenant="b")):
        assert (got.ids, got.dims, got.matrix.shape) == ((), 0, (0, 0))
    mine = store.tenant("a").vectors(secret.name, ids=["no-such-id"])
    assert (mine.ids, mine.dims, mine.matrix.shape) == ((), 48, (0, 48))  # the tenant's own
    with pytest.raises(InvalidInput):  # one size per name across the store, as open() keeps it
        store.tenant("b").embed(Renamed(secret.name, 16))


def test_an_embedders_own_name_means_itself_even_when_it_reads_as_a_spec(make_store, now):
    custom = Renamed("hash:8", 8)  # a custom embedder named like HashEmbedder(8)'s spec
    store = make_store(embedder=custom)
    with store.commit(now=now) as tx:
        m = tx.add("a red car", tenant="a")
    assert store.vectors(tenant="a").embedder == "hash:8"
    assert store.vectors("hash:8", tenant="a").ids == (m.id,)
    ctx = store.tenant("a").recall("a red car", explain=True, now=now)
    assert ctx.rows[0].components["dense"] == pytest.approx(1.0, abs=0.02)  # its vectors read
    store.embed("hash:8", tenant="a")  # the spec, given to embed: HashEmbedder(8)
    assert store.vectors("hash:8", tenant="a").embedder == "hash:8"
    assert store.vectors("hash", tenant="a").embedder == "hash-ngram-v1/64"  # names still resolve
    other = make_store("other.db")  # not the store's embedder: the tenant's stored name
    with other.commit(now=now) as tx:
        n = tx.add("a red car", tenant="a")
    other.tenant("a").embed_ids(custom, [n.id])
    assert other.vectors("hash:8", tenant="a").embedder == "hash:8"
    assert other.vectors("hash:8", tenant="b").embedder == "hash-ngram-v1/8"


def test_a_scorer_s_embedder_named_like_a_spec_never_reads_the_spec_s_vectors(make_store, now):
    """An embedder handed to recall (``fused_scorer``), not the store's, named "hash:8": recall
    reads its vectors by the embedder itself, never those of HashEmbedder(8) the name spells."""
    from memcommit.recall.scoring.fusion import fused_scorer
    from memcommit.recall.scoring.memory import MemoryScorer

    store = make_store(embedder="hash:8")  # HashEmbedder(8): vectors under hash-ngram-v1/8
    with store.commit(now=now) as tx:
        tx.add("a red car", tenant="a")
    custom = Renamed("hash:8", 8)  # the same vectors, under its own name: none stored yet
    ctx = store.tenant("a").recall(
        "a red car", scorer=fused_scorer(custom, MemoryScorer()), explain=True, now=now
    )
    assert ctx.rows[0].components["vector"] == 0.0  # no vector of its own: found by words


OPS = st.lists(
    st.tuples(st.sampled_from(["add", "update", "move", "purge"]), st.integers(0, 5)),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_every_stored_vector_embeds_the_current_content(tmp_path_factory, ops):
    path = tmp_path_factory.mktemp("prop") / "s.db"
    with memcommit.open(path, embedder="hash") as store:
        ids: list[str] = []
        for n, (op, pick) in enumerate(ops):
            with store.commit() as tx:
                if op == "add" or not ids:
                    ids.append(tx.add(f"text {n}").id)
                    continue
                target = ids[pick % len(ids)]
                if store.get(target).status == "purged":
                    continue
                if op == "update":
                    tx.update(target, content=f"changed {n}")
                elif op == "move":
                    tx.move(target, "long" if store.get(target).tier != "long" else "mid")
                else:
                    tx.purge(target)
        got = store.vectors()
        live = {m.id: m for m in store.find(live=False) if m.status != "purged"}
        assert set(got.ids) == set(live)
        for mid, version, row in zip(got.ids, got.versions, got.matrix, strict=True):
            assert version == live[mid].version
            assert np.array_equal(row, expected(live[mid].content)[0])


class WrongSize(Renamed):
    """Claims 64 dims and answers 63."""

    def embed(self, texts, *, kind="passage"):
        return super().embed(texts, kind=kind)[:, :-1]


def test_a_provider_answering_the_wrong_size_stores_nothing(make_store):
    store = make_store()
    with store.commit() as tx:
        tx.add("some text")
    with pytest.raises(EmbedderError) as caught:
        store.embed(WrongSize("wrong/64", 64))
    assert (caught.value.field, caught.value.value) == ("dims", (1, 63))
    assert store.backend.vector_rows(after=None, limit=10) == []


def test_a_store_from_before_the_vectors_gets_them_when_opened(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    with memcommit.open(path) as store, store.commit() as tx:
        kept = tx.add("written before vectors existed")
    with sqlite3.connect(path) as conn:  # the store as memcommit before migration 4 left it
        conn.execute("DROP TABLE vectors")
        conn.execute("DELETE FROM schema_migrations WHERE version = 4")
    with memcommit.open(path) as store:
        assert 4 in store.backend.applied_migrations()
        assert store.embed("hash").embedded == 1
        assert store.vectors("hash").ids == (kept.id,)

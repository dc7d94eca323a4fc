"""The tenant index cache: a byte budget that holds, answers exact whatever it let go, tenants
apart; small tenants keep no file; a writer that never recalls keeps big tenants' snapshots
current, so a fresh store object opens them instead of building."""

from __future__ import annotations

import gc
import random
import tracemalloc
import uuid
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
from memcommit import upkeep
from memcommit.errors import InvalidInput
from memcommit.recall import recall
from memcommit.recall.index import live, persist
from memcommit.recall.index.cache import TenantCache
from memcommit.recall.index.live import index_dir, snapshot_name, store_index
from memcommit.recall.index.prepare import prepare
from memcommit.recall.index.sections import Section
from memcommit.recall.index.tenant import TenantIndex

WORDS = ["alpha", "beta", "gamma", "deploy", "deploys", "cache", "the", "pool", "logs", "shared"]
QUERIES = ["alpha deploy", "cache the pool", "shared logs", "gamma beta", "zeta"]


def fill(store, now, tenants, count=12, start=0):
    """``count`` memories in each of ``tenants``, some words shared by every tenant."""
    with store.commit(message="fill", now=now) as tx:
        for t, tenant in enumerate(tenants):
            for i in range(start, start + count):
                words = [WORDS[(i * 7 + j * 3 + t) % len(WORDS)] for j in range(2 + i % 4)]
                tx.add(" ".join(words), id=f"{tenant}-{i}", tenant=tenant, session=f"s{i % 3}")


def ranked(store, tenant, query, now):
    ctx = recall(store, query, tenant=tenant, now=now, max_records=5)
    return [(r.memory.id, r.score, r.outcome) for r in ctx.rows]


def test_a_process_over_its_budget_lets_the_least_recent_tenants_go(make_store, now):
    tenants = [f"t{i}" for i in range(8)]
    fill(make_store("budget.db"), now, tenants)
    store = make_store("budget.db", recall_cache_bytes=1)
    store.recall("alpha", tenant="t0", now=now)
    one = store_index(store).tenants.charged("t0")
    budget = 3 * one + one // 2  # about three tenants
    store = make_store("budget.db", recall_cache_bytes=budget)
    for tenant in tenants:
        store.recall("alpha deploy", tenant=tenant, now=now)
    cache = store_index(store).tenants
    assert cache.total <= budget
    assert list(cache) == tenants[-len(cache) :] and 2 <= len(cache) < len(tenants)
    assert cache.evicted == len(tenants) - len(cache)
    store.recall("alpha", tenant="t0", now=now)  # let go before: opened again, the newest now
    assert list(cache)[-1] == "t0" and "t0" in store_index(store).opened


def test_hybrid_recalls_keep_what_the_process_holds_within_its_budget(make_store, now):
    """A hybrid recall puts the tenant's vector rows into its index after the cache charged
    it: the recall charges it again, so the indexes held stay within the budget (each
    tenant recalled once; before, they held 7x the budget at 384 dims)."""
    tenants = [f"t{i}" for i in range(12)]
    fill(make_store("hybrid.db"), now, tenants, count=40)
    probe = make_store("hybrid.db", embedder="hash:384", recall_cache_bytes=2**40)
    probe.recall("alpha deploy", tenant="t0", now=now)
    one = store_index(probe).tenants.charged("t0")
    assert store_index(probe).index("t0").dense  # its rows are held and charged
    budget = 4 * one
    store = make_store("hybrid.db", embedder="hash:384", recall_cache_bytes=budget)
    for tenant in tenants:
        store.recall("alpha deploy", tenant=tenant, now=now)
    cache = store_index(store).tenants
    held = [cache[tenant] for tenant in cache]
    assert 2 <= len(held) < len(tenants)
    assert sum(index.nbytes() for index in held) <= budget


def test_a_writer_holds_nothing_for_the_tenants_it_has_not_open(make_store, now, monkeypatch):
    """A process that recalled in one tenant and then writes to others keeps none of their
    versions (they counted towards the catch-up limit, then dropped every index)."""
    monkeypatch.setattr(live, "CATCH_UP_LIMIT", 50)
    store = make_store()
    fill(store, now, ["a"])
    store.recall("alpha", tenant="a", now=now)
    for k in range(6):
        fill(store, now + timedelta(minutes=k + 1), [f"b{k}"], count=12)
    live_index = store_index(store)
    assert live_index.ready == [] and "a" in live_index.tenants
    fill(store, now + timedelta(hours=1), ["a"], count=2, start=500)
    assert [m.tenant for m in live_index.ready] == ["a", "a"]
    assert ranked(store, "a", "alpha", now) == ranked(make_store(), "a", "alpha", now)


def test_the_budget_of_a_running_store_can_be_changed(make_store, now):
    """``store.recall_cache_bytes`` set after recalls: the next recall lets tenants go to fit;
    a bad value is refused there, naming the field, and changes nothing."""
    tenants = [f"t{i}" for i in range(6)]
    store = make_store()
    fill(store, now, tenants)
    for tenant in tenants:
        store.recall("alpha", tenant=tenant, now=now)
    cache = store_index(store).tenants
    assert len(cache) == len(tenants)
    for bad in (0, -1, "lots", 1.5, True):
        with pytest.raises(InvalidInput) as raised:
            store.recall_cache_bytes = bad
        assert raised.value.field == "recall_cache_bytes"
    store.recall_cache_bytes = 1
    store.recall("alpha", tenant="t0", now=now)
    assert list(cache) == ["t0"] and cache.budget == 1


def test_a_tenant_bigger_than_the_budget_is_still_served_alone(make_store, now):
    store = make_store(recall_cache_bytes=1)
    fill(store, now, ["a", "b"])
    for tenant in ("a", "b", "a"):
        assert ranked(store, tenant, "alpha deploy", now)
        assert list(store_index(store).tenants) == [tenant]


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(QUERIES), st.booleans()),
        min_size=1,
        max_size=12,
    )
)
def test_answers_are_the_same_under_any_budget(make_store, now, steps, tmp_path, monkeypatch):
    """Recalls and commits interleaved: a one-byte budget answers as an unbounded cache does,
    and both (small tenants, held compacted) as indexes built and kept in their dicts."""
    name = f"exact-{uuid.uuid4().hex}.db"  # a fresh file for every example
    writer = make_store(name)
    fill(writer, now, ["a", "b", "c"])
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(tmp_path / f"built-{id(steps)}"))
    built = make_store(name, recall_cache_bytes=2**40)
    for tenant in ("a", "b", "c"):  # built and saved (SNAPSHOT_MIN is 1): held as built
        ranked(built, tenant, "alpha", now)
    monkeypatch.setattr(live, "SNAPSHOT_MIN", 256)
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(tmp_path / f"compact-{id(steps)}"))
    tight = make_store(name, recall_cache_bytes=1)
    roomy = make_store(name, recall_cache_bytes=2**40)
    for k, (tenant, query, write) in enumerate(steps):
        if write:  # another store object's commit: caught up by all, opened or not
            fill(writer, now + timedelta(minutes=k + 1), [tenant], count=2, start=100 + 2 * k)
        expected = ranked(built, tenant, query, now)
        assert ranked(tight, tenant, query, now) == expected
        assert ranked(roomy, tenant, query, now) == expected
    assert len(store_index(tight).tenants) == 1
    assert store_index(roomy).opened[steps[0][0]] == "built: snapshot missing"


def test_a_tenant_opened_again_sees_only_its_own_memories(make_store, now):
    store = make_store(recall_cache_bytes=1)  # every switch of tenant lets the other go
    fill(store, now, ["a", "b"])
    for _ in range(3):
        for tenant, other in (("a", "b"), ("b", "a")):
            ctx = recall(store, "shared alpha deploy logs", tenant=tenant, now=now)
            assert ctx.rows and all(r.memory.tenant == tenant for r in ctx.rows)
            assert not any(r.memory.id.startswith(other + "-") for r in ctx.rows)


@pytest.mark.parametrize("count", [40, 400])
def test_what_an_index_is_charged_is_near_what_it_holds(make_store, now, count):
    """The charge is an estimate: within a factor of two of what tracemalloc sees.

    Built in bulk and then written to one memory at a time (delta postings), on
    texts of many distinct words (the vocabulary's dicts are most of a small tenant).
    """
    rng = random.Random(count)
    letters = "bcdfghklmnprstvz"
    words = [
        "".join(rng.choice(letters) + rng.choice("aeiou") for _ in range(3)) for _ in range(4000)
    ]
    store = make_store()
    with store.commit(message="words", now=now) as tx:
        for i in range(count):
            tx.add(" ".join(rng.choice(words) for _ in range(25)), tenant="a", id=f"m{i}")
    memories = store.find(tenant="a", live=False)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = TenantIndex("a")
    with index.bulk():
        index.put_many(memories[: count // 2])
    for memory in memories[count // 2 :]:
        index.put(memory)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert held / 2 <= index.nbytes() <= held * 2


def test_a_small_tenant_held_compacted_is_charged_what_it_holds(make_store, now, monkeypatch):
    """The form a serving process holds its many small tenants in (`live._built_from`): charged
    within a third of what tracemalloc sees, and under 40 KB beyond its arrays' own bytes (its
    sections, columns and tables: 32 KB at 40 memories; 56 KB when each section kept views)."""
    rng = random.Random(7)
    words = ["".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3))
             for _ in range(400)]  # fmt: skip
    store = make_store()
    with store.commit(message="words", now=now) as tx:
        for i in range(40):
            tx.add(" ".join(rng.choice(words) for _ in range(25)), tenant="a", id=f"m{i}")
    memories = store.find(tenant="a", live=False)
    monkeypatch.setattr(live, "SNAPSHOT_MIN", 256)  # (this module's tests keep every snapshot)
    live._built_from("a", memories)  # the stems of its words cached (process-wide, not its own)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = live._built_from("a", memories)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    sections = _sections(index)
    assert len(sections) > 20  # compacted: its export's arrays, no dicts of terms
    arrays = sum(section.array.nbytes for section in sections)
    assert held / 1.33 <= index.nbytes() <= held * 1.33
    assert held - arrays < 40_000


def _sections(index):
    """Every `Section` an index holds, found through the objects it refers to."""
    seen, found, todo = set(), [], [index]
    while todo:
        item = todo.pop()
        if id(item) in seen or isinstance(item, (str, bytes, int, float, np.ndarray, type)):
            continue
        seen.add(id(item))
        if isinstance(item, Section):
            found.append(item)
        todo += gc.get_referents(item)
    return found


def test_the_cache_keeps_the_tenant_in_use_and_counts_what_it_lets_go():
    class Sized:
        def __init__(self, size):
            self.size = size

        def nbytes(self):
            return self.size

    gone = []
    cache = TenantCache(100, gone.append)
    cache["a"], cache["b"] = Sized(40), Sized(40)
    cache.touch("a")
    cache["c"] = Sized(40)  # over: "b", the least recently used, goes
    assert list(cache) == ["a", "c"] and gone == ["b"] and cache.total == 80
    cache["a"].size = 500
    cache.charge("a")  # grown past the budget: everything else goes, "a" stays
    assert list(cache) == ["a"] and gone == ["b", "c"] and cache.evicted == 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, "64MB", True])
def test_a_bad_budget_names_its_field(tmp_path, bad):
    with pytest.raises(InvalidInput) as raised:
        memcommit.open(tmp_path / "s.db", recall_cache_bytes=bad)
    assert raised.value.field == "recall_cache_bytes"
    assert "must be an integer from 1 to" in str(raised.value)  # one message, whatever was wrong
    assert not (tmp_path / "s.db").exists() or memcommit.open(tmp_path / "s.db").head_seq == 0


def test_a_small_tenant_keeps_no_snapshot_file(make_store, now, monkeypatch):
    monkeypatch.setattr(live, "SNAPSHOT_MIN", 256)
    store = make_store()
    fill(store, now, ["small"], count=30)
    assert ranked(store, "small", "alpha", now)
    assert store_index(store).opened["small"] == "built: snapshot missing"
    assert not (index_dir(store) / snapshot_name("small")).exists()


# -- the writer keeps snapshots current ------------------------------------------------------


@pytest.fixture
def keep_after(monkeypatch):
    """Snapshots brought current after 50 memories (1,000 outside tests)."""
    monkeypatch.setattr(upkeep, "KEEP_AFTER", 50)
    return 50


def test_a_bulk_commit_of_a_writer_that_never_recalled_leaves_a_current_snapshot(
    make_store, now, keep_after
):
    writer = make_store("kept.db")
    fill(writer, now, ["big", "other"], count=keep_after)  # the writer never recalls
    fill(writer, now + timedelta(minutes=1), ["big"], count=3, start=keep_after)  # after it
    reader = make_store("kept.db")
    fresh = ranked(reader, "big", "alpha deploy", now)
    assert store_index(reader).opened == {"big": "loaded, caught up 3 memories"}
    built = make_store("kept.db")
    store_index(built).rebuild("big")
    assert fresh == ranked(built, "big", "alpha deploy", now)


def test_a_big_tenants_snapshot_is_written_again_after_a_share_of_it(
    make_store, now, keep_after, monkeypatch
):
    """Writing a snapshot costs as much as the tenant is big, so a writer writes a big
    tenant's again only once it added a `KEEP_SHARE`-th of it (here 400 / 4 = 100)."""
    monkeypatch.setattr(upkeep, "KEEP_SHARE", 4)
    writer = make_store("kept.db")
    fill(writer, now, ["big"], count=8 * keep_after)  # kept: the tenant holds 400
    for i in range(400, 460):  # 60 single-memory commits: past KEEP_AFTER, short of 100
        fill(writer, now, ["big"], count=1, start=i)
    reader = make_store("kept.db")
    ranked(reader, "big", "alpha", now)
    assert store_index(reader).opened == {"big": "loaded, caught up 60 memories"}
    for i in range(460, 500):  # the 100th since the last: written again
        fill(writer, now, ["big"], count=1, start=i)
    later = make_store("kept.db")
    ranked(later, "big", "alpha", now)
    assert store_index(later).opened == {"big": "loaded, caught up 0 memories"}


def test_a_new_writer_on_a_big_tenant_waits_for_a_share_of_it_before_its_first_keep(
    make_store, now, keep_after, monkeypatch
):
    """A writer that has not kept the tenant counts it when its writes there reach
    KEEP_AFTER (50; the tenant then holds 450): 60 memories write nothing, the
    112th (450 / 4) writes the snapshot."""
    monkeypatch.setattr(upkeep, "KEEP_SHARE", 4)
    fill(make_store("kept.db"), now, ["big"], count=8 * keep_after)  # kept: it holds 400
    writer = make_store("kept.db")  # a new writer: it never kept "big"
    for i in range(400, 460):
        fill(writer, now, ["big"], count=1, start=i)
    reader = make_store("kept.db")
    ranked(reader, "big", "alpha", now)
    assert store_index(reader).opened == {"big": "loaded, caught up 60 memories"}
    for i in range(460, 512):
        fill(writer, now, ["big"], count=1, start=i)
    later = make_store("kept.db")
    ranked(later, "big", "alpha", now)
    assert store_index(later).opened == {"big": "loaded, caught up 0 memories"}


def test_a_writer_opened_without_keeping_snapshots_leaves_them_to_prepare(
    make_store, now, keep_after
):
    """``keep_snapshots=False``: no commit pays for a snapshot; `prepare` (``memcommit
    index``) writes it later, then finds it current and leaves it."""
    writer = make_store("kept.db", keep_snapshots=False)
    fill(writer, now, ["big", "small"], count=8 * keep_after)
    assert not index_dir(writer).exists() or not list(index_dir(writer).glob("*.idx"))
    indexer = make_store("kept.db")
    kept = prepare(indexer, tenants=["big", "small", "nobody"])
    assert [(k.tenant, k.memories, k.written, k.current) for k in kept] == [
        ("big", 400, True, True),
        ("small", 400, True, True),
    ]
    assert kept[0].opened == "built: snapshot missing"
    live_index = store_index(indexer)
    assert "big" not in live_index.tenants  # let go after (memory: one tenant), with what
    assert live_index.opened == {} and live_index.saved == {}  # was kept beside it
    assert [(k.tenant, k.written) for k in prepare(make_store("kept.db"))] == [
        ("big", False),
        ("small", False),
    ]
    reader = make_store("kept.db")
    ranked(reader, "big", "alpha", now)
    assert store_index(reader).opened == {"big": "loaded, caught up 0 memories"}


def test_a_writer_to_very_many_tenants_counts_a_bounded_number(
    make_store, now, keep_after, monkeypatch
):
    """Past `MAX_TALLIED` tenants the half with the fewest writes is forgotten; a tenant
    close to its keep stays counted, and is kept when it gets there."""
    monkeypatch.setattr(upkeep, "MAX_TALLIED", 10)
    writer = make_store("many.db")
    fill(writer, now, ["big"], count=keep_after - 5)
    for k in range(30):
        fill(writer, now + timedelta(minutes=k + 1), [f"small{k}"], count=1)
    tally = upkeep._tallies[writer]
    assert len(tally.written) <= 10 and tally.written["big"] == keep_after - 5
    fill(writer, now + timedelta(hours=1), ["big"], count=5, start=1000)
    assert (index_dir(writer) / snapshot_name("big")).exists() and "big" not in tally.written


def test_keep_snapshots_must_be_a_bool(tmp_path):
    with pytest.raises(InvalidInput) as raised:
        memcommit.open(tmp_path / "s.db", keep_snapshots="no")
    assert (raised.value.field, raised.value.value) == ("keep_snapshots", "no")
    assert not (tmp_path / "s.db").exists()


def snapshot_arrays(store, tenant):
    """The arrays of ``tenant``'s snapshot file."""
    path = index_dir(store) / snapshot_name(tenant)
    opened = persist.read(path, tenant, store.commit_id(1))
    return {name: section.whole() for name, section in opened.sections.items()}


def built_arrays(store, tenant):
    """The arrays a build from the store exports (what a fresh process would write)."""
    index = TenantIndex(tenant)
    with index.bulk():
        index.put_many(m for m in store.find(tenant=tenant, live=False) if live.indexable(m))
    return index.export().arrays


def export_of(store, tenant):
    """The arrays of ``tenant``'s index as ``store`` opens it (from its snapshot, caught up)."""
    return store_index(store).index(tenant).export().arrays


def assert_same_arrays(found, expected):
    assert found.keys() == expected.keys()
    for name, array in expected.items():
        assert found[name].dtype == array.dtype, name
        assert np.array_equal(found[name], array), name


def mixed_commit(store, now, tenant, start, count, purge=True):
    """``count`` memories added, some updated, forgotten, keyed (and one purged) in one commit."""
    with store.commit(message="mixed", now=now) as tx:
        for i in range(start, start + count):
            words = [WORDS[(i * 5 + j) % len(WORDS)] for j in range(1 + i % 5)]
            if i % 11 == 0:
                words.append("Ωμέγα ΣΊΣΥΦΟΣ İstanbul naïve_word")
            key = f"k{i % 7}" if i % 3 == 0 else None
            tx.add(" ".join(words), id=f"{tenant}-{i}", tenant=tenant, session=f"s{i % 4}", key=key)
        for i in range(start, start + count, 9):
            tx.update(f"{tenant}-{i}", content=f"changed {WORDS[i % len(WORDS)]} alpha")
        tx.invalidate(f"{tenant}-{start + 1}", at=now)
        if purge:
            tx.purge(f"{tenant}-{start + 2}")


def test_a_writer_indexes_its_bulk_commit_from_the_versions_at_hand(make_store, now, keep_after):
    """A new tenant's first commit is indexed without reading it back, into the snapshot a
    build from the store writes; the next commit (the tenant open) answers as a build does."""
    writer = make_store("handed.db")
    mixed_commit(writer, now, "t", 0, 3 * keep_after)
    opened = "built: snapshot missing; indexed from the commit that wrote it"
    assert store_index(writer).opened == {"t": opened}
    assert_same_arrays(snapshot_arrays(writer, "t"), built_arrays(writer, "t"))
    mixed_commit(writer, now, "u", 0, 2 * keep_after)  # a new tenant in a store not new
    assert store_index(writer).opened["u"] == opened
    assert_same_arrays(snapshot_arrays(writer, "u"), built_arrays(writer, "u"))
    mixed_commit(writer, now + timedelta(minutes=1), "t", 3 * keep_after, 2 * keep_after)
    built = make_store("handed.db")
    store_index(built).rebuild("t")
    reader = make_store("handed.db")
    for query in [*QUERIES, "changed alpha", "ωμέγα σίσυφος", "istanbul"]:
        expected = ranked(built, "t", query, now)
        assert ranked(writer, "t", query, now) == expected
        assert ranked(reader, "t", query, now) == expected
    assert store_index(reader).opened["t"] == "loaded, caught up 0 memories"


def test_a_fresh_writer_catches_its_snapshot_up_with_its_commit(make_store, now, keep_after):
    """A process that opens the store later finds the snapshot one commit behind its own
    (a purge would delete it: caught up without one)."""
    mixed_commit(make_store("later.db"), now, "t", 0, 2 * keep_after)
    writer = make_store("later.db")
    mixed_commit(writer, now + timedelta(minutes=1), "t", 2 * keep_after, 2 * keep_after, False)
    assert store_index(writer).opened["t"] == f"loaded, caught up {2 * keep_after} memories"
    read_back = make_store("later.db")  # caught up from the same snapshot, reading the store
    assert_same_arrays(export_of(read_back, "t"), store_index(writer).tenants["t"].export().arrays)
    built = make_store("later.db")
    store_index(built).rebuild("t")
    for query in [*QUERIES, "changed alpha", "ωμέγα"]:
        assert ranked(writer, "t", query, now) == ranked(built, "t", query, now)


def test_a_tenant_with_older_memories_is_built_from_the_store(make_store, now, keep_after):
    """Memories before the commit and no snapshot: the commit's versions are not the tenant."""
    writer = make_store("older.db")
    fill(writer, now, ["t"], count=10)  # below KEEP_AFTER: no snapshot
    mixed_commit(writer, now + timedelta(minutes=1), "t", 10, 2 * keep_after)
    assert store_index(writer).opened == {"t": "built: snapshot missing"}
    assert_same_arrays(snapshot_arrays(writer, "t"), built_arrays(writer, "t"))
    built = make_store("older.db")
    store_index(built).rebuild("t")
    for query in QUERIES:
        assert ranked(writer, "t", query, now) == ranked(built, "t", query, now)


def test_small_commits_add_up_to_a_kept_snapshot(make_store, now, keep_after):
    writer = make_store("steps.db")
    for step in range(6):  # 6 x 10 memories: the fifth commit reaches 50
        fill(writer, now + timedelta(minutes=step), ["t"], count=10, start=10 * step)
        if step == 3:
            assert not (index_dir(writer) / snapshot_name("t")).exists()
    assert (index_dir(writer) / snapshot_name("t")).exists()
    reader = make_store("steps.db")
    ranked(reader, "t", "alpha", now)
    assert store_index(reader).opened["t"] == "loaded, caught up 10 memories"


def test_an_imported_store_opens_its_snapshots_at_once(tmp_path, now):
    """Rows written below the Store (import) are indexed once at the end of the command."""
    from click.testing import CliRunner

    from memcommit.cli import main

    with memcommit.open(tmp_path / "source.db") as source:
        fill(source, now, ["a", "b"])
    runner = CliRunner()
    backup = tmp_path / "backup.jsonl"
    for args in (["export", str(backup)], ["import", str(backup)]):
        target = "source.db" if args[0] == "export" else "restored.db"
        done = runner.invoke(main, [*args, "--store", str(tmp_path / target)])
        assert done.exit_code == 0, done.output
    with memcommit.open(tmp_path / "restored.db") as restored:
        for tenant in ("a", "b"):
            assert (index_dir(restored) / snapshot_name(tenant)).exists()
            assert ranked(restored, tenant, "alpha deploy", now)
        assert store_index(restored).opened == {
            "a": "loaded, caught up 0 memories",
            "b": "loaded, caught up 0 memories",
        }


@pytest.mark.postgres
def test_a_migrated_store_opens_its_snapshots_at_once(tmp_path, now, postgres_server):
    from click.testing import CliRunner

    from memcommit.cli import main

    schema = f"test_{uuid.uuid4().hex[:16]}"
    url = f"{postgres_server}?schema={schema}"
    with memcommit.open(tmp_path / "source.db") as source:
        fill(source, now, ["a"])
    try:
        done = CliRunner().invoke(main, ["migrate", str(tmp_path / "source.db"), url])
        assert done.exit_code == 0, done.output
        with memcommit.open(postgres_server, schema=schema) as copied:
            assert ranked(copied, "a", "alpha deploy", now)
            assert store_index(copied).opened == {"a": "loaded, caught up 0 memories"}
    finally:
        import psycopg

        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_a_store_in_memory_keeps_nothing_current(now, keep_after):
    store = memcommit.open(":memory:")
    fill(store, now, ["t"], count=keep_after)
    assert not store_index(store).tenants  # nothing built for a snapshot it could not keep
    assert ranked(store, "t", "alpha", now)

"""The recall index on disk: a fresh store object opens its snapshot, catches up, and answers
exactly as an index built from scratch; a missing, stale, foreign or damaged snapshot is
caught up or rebuilt; a purge leaves no trace of its words in any snapshot file."""

from __future__ import annotations

import itertools
import json
import shutil
import struct
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcommit.errors import IndexDamaged
from memcommit.recall import recall
from memcommit.recall.index import live, persist
from memcommit.recall.index.live import index_dir, reporting, snapshot_name, store_index
from memcommit.recall.index.snapshot import Exported
from memcommit.recall.pipeline import run
from memcommit.recall.pipeline.sources import Source, store_loader

WORDS = ["alpha", "beta", "gamma", "deploy", "deploys", "deployed", "cache", "the", "pool", "logs"]
QUERIES = ["alpha deploy", "cache the pool", "deploying logs", "gamma", "zeta", "what did nate do"]


def outcome(ctx):
    return (
        [m.id for m in ctx.selected],
        [(r.memory.id, r.stage, r.cosine, r.score, r.outcome, r.reason) for r in ctx.rows],
    )


def answers(store, tenant, now):
    return [
        outcome(recall(store, q, tenant=tenant, now=now, scorer=scorer, max_records=3))
        for q in QUERIES
        for scorer in ("tfidf", "memory")
    ]


def fill(store, now, tenant="t", count=40, prefix="m"):
    with store.commit(message="fill", now=now) as tx:
        for i in range(count):
            words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(1 + i % 5)]
            speaker = ["", "Nate: ", "Ana: "][i % 3]  # the speakers' table goes along
            tx.add(
                speaker + " ".join(words),
                id=f"{prefix}{i}",
                tenant=tenant,
                session=f"s{i % 4}" if i % 4 else "two\nlines",  # a list stored as JSON
                key=f"k{i % 6}" if i % 3 == 0 else None,
            )


def snapshot_file(store, tenant="t"):
    return index_dir(store) / snapshot_name(tenant)


def test_a_fresh_store_object_opens_the_snapshot_and_answers_alike(make_store, now):
    first = make_store("s.db")
    fill(first, now)
    expected = answers(first, "t", now)
    assert store_index(first).opened["t"] == "built: snapshot missing"
    assert snapshot_file(first).exists()
    again = make_store("s.db")
    assert answers(again, "t", now) == expected
    assert store_index(again).opened["t"] == "loaded, caught up 0 memories"


histories = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "add", "update", "invalidate", "purge"]),
            st.integers(0, 30),
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
            st.sampled_from(["t", "u"]),
        ),
        min_size=1,
        max_size=6,
    ),
    min_size=2,
    max_size=6,
)
_names = itertools.count()


def apply(store, commit, now, made):
    with store.commit(message="step", now=now) as tx:
        for op, pick, text, tenant in commit:
            alive = [i for i in made if made[i]]
            if op == "add" or not alive:
                memory_id = f"m{len(made)}"
                key = f"k{pick % 3}" if pick % 2 else None  # later ones retire the latest
                tx.add(text, id=memory_id, tenant=tenant, session=f"s{pick % 3}", key=key)
                made[memory_id] = True
                continue
            target = alive[pick % len(alive)]
            if op == "update":
                tx.update(target, content=text)
            elif op == "invalidate":
                tx.invalidate(target)
            else:
                tx.purge(target)
                made[target] = False


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(histories, st.integers(0, 5))
def test_snapshot_caught_up_equals_an_index_built_from_scratch(make_store, now, history, cut):
    name = f"h{next(_names)}.db"
    writer = make_store(name)
    made: dict[str, bool] = {}
    cut = 1 + cut % (len(history) - 1)
    for step, commit in enumerate(history):
        apply(writer, commit, now + timedelta(minutes=step), made)
        if step + 1 == cut:
            with make_store(name) as early:  # snapshots written here, behind later commits
                for tenant in ("t", "u"):
                    recall(early, "alpha", tenant=tenant, now=now)
    later = now + timedelta(hours=1)
    with writer, make_store(name) as loaded, make_store(name) as fresh:  # few connections
        for tenant in ("t", "u"):
            store_index(fresh).rebuild(tenant)
            assert answers(loaded, tenant, later) == answers(fresh, tenant, later)
            assert answers(writer, tenant, later) == answers(fresh, tenant, later)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(histories, st.sets(st.integers(0, 5)))
def test_a_live_index_fed_its_own_commits_equals_one_built_from_scratch(
    make_store, now, history, recall_after
):
    """A Store's own commits hand their versions to its live index, which reads nothing back."""
    name = f"live{next(_names)}.db"
    writer = make_store(name)
    made: dict[str, bool] = {}
    for tenant in ("t", "u"):
        recall(writer, "alpha", tenant=tenant, now=now)  # the index is live from the start
    for step, commit in enumerate(history):
        apply(writer, commit, now + timedelta(minutes=step), made)
        if step in recall_after:
            recall(writer, "beta", tenant="t", now=now + timedelta(minutes=step))
    later = now + timedelta(hours=1)
    with writer, make_store(name) as fresh:
        for tenant in ("t", "u"):
            store_index(fresh).rebuild(tenant)
            assert answers(writer, tenant, later) == answers(fresh, tenant, later)


def test_writes_after_a_build_or_a_load_keep_the_latest_fact_per_key(make_store, now):
    """A built or loaded index makes its key maps from its columns at its first write."""
    store = make_store("s.db")
    fill(store, now)
    recall(store, "alpha", tenant="t", now=now)  # built here, in bulk
    with store.commit(message="newer facts", now=now) as tx:
        tx.add("alpha newest", id="n1", tenant="t", key="k0")
        tx.update("m3", content="gamma again")  # m3 holds key k3
    loaded = make_store("s.db")
    fresh = make_store("s.db")
    store_index(fresh).rebuild("t")
    expected = answers(fresh, "t", now)
    assert answers(store, "t", now) == expected
    assert answers(loaded, "t", now) == expected
    with store.commit(message="newest", now=now) as tx:
        tx.add("alpha even newer", id="n2", tenant="t", key="k0")
    store_index(fresh).rebuild("t")
    assert answers(store, "t", now) == answers(loaded, "t", now) == answers(fresh, "t", now)


def test_deleting_the_snapshot_loses_nothing_and_the_build_reports_progress(make_store, now):
    store = make_store("s.db")
    fill(store, now, count=25)
    expected = answers(store, "t", now)
    snapshot_file(store).unlink()
    reports = []
    again = make_store("s.db")
    store_index(again).progress = lambda done, total: reports.append((done, total))
    assert answers(again, "t", now) == expected
    assert store_index(again).opened["t"] == "built: snapshot missing"
    assert reports == [(25, 25)]
    assert snapshot_file(again).exists()


def test_a_build_reads_its_memories_a_page_at_a_time(make_store, now, monkeypatch):
    store = make_store("s.db")
    fill(store, now, count=25)
    expected = answers(store, "t", now)
    monkeypatch.setattr(live, "BUILD_STEP", 10)
    reports = []
    again = make_store("s.db")
    store_index(again).progress = lambda done, total: reports.append((done, total))
    store_index(again).rebuild("t")
    assert reports == [(10, None), (20, None), (25, 25)]
    assert answers(again, "t", now) == expected


@pytest.mark.parametrize(
    ("added", "opened"),
    [
        (15, "loaded, caught up 15 memories"),  # past the limit, fewer than the snapshot holds
        (25, "built: snapshot 25 memories behind, it holds 20"),  # more than it holds
    ],
)
def test_a_snapshot_far_behind_is_caught_up_unless_behind_by_more_than_it_holds(
    make_store, now, monkeypatch, added, opened
):
    """A writer keeping a big tenant's snapshot every twentieth (`upkeep.KEEP_SHARE`) leaves
    it more than `CATCH_UP_LIMIT` behind from 400,000 memories on: reading back fewer
    memories than it holds costs less than rebuilding from every one."""
    monkeypatch.setattr(live, "CATCH_UP_LIMIT", 10)
    store = make_store("s.db")
    fill(store, now, count=20)
    recall(store, "alpha", tenant="t", now=now)
    fill(make_store("s.db"), now, count=added, prefix="late")
    again = make_store("s.db")
    expected = answers(again, "t", now)
    assert store_index(again).opened["t"] == opened
    fresh = make_store("s.db")
    store_index(fresh).rebuild("t")
    assert answers(fresh, "t", now) == expected


def test_builds_report_to_the_callback_given_while_a_block_runs(make_store, now):
    store = make_store("s.db")
    fill(store, now, count=25)  # no recall yet: no snapshot
    again, reports = make_store("s.db"), []
    with reporting(again, lambda done, total: reports.append((done, total))):
        recall(again, "alpha", tenant="t", now=now)
    assert reports == [(25, 25)]
    assert store_index(again).progress is None  # the library itself draws nothing


def test_a_stale_snapshot_is_caught_up_by_the_commits_since(make_store, now):
    store = make_store("s.db")
    fill(store, now, count=20)
    recall(store, "alpha", tenant="t", now=now)
    with make_store("s.db").commit(message="more", now=now) as tx:
        tx.add("alpha cache novel", id="n1", tenant="t")
        tx.update("m3", content="gamma gamma")
    again = make_store("s.db")
    ctx = recall(again, "novel", tenant="t", now=now, scorer="tfidf")
    assert [m.id for m in ctx.selected] == ["n1"]
    assert store_index(again).opened["t"] == "loaded, caught up 2 memories"
    fresh = make_store("s.db")
    store_index(fresh).rebuild("t")
    assert answers(again, "t", now) == answers(fresh, "t", now)


def _layout(data):
    """Where each array of a snapshot lies in the file (the layout persist's docstring gives)."""
    _, _, _, header_size, text_size = struct.unpack("<8sIIQQ", data[:32])
    base = 32 + header_size
    return base, {
        name: (base + offset, base + offset + length * np.dtype(dtype).itemsize)
        for name, dtype, length, offset, _ in json.loads(data[32 : 32 + text_size])["arrays"]
    }


def test_a_damaged_header_or_a_cut_file_is_refused_at_open(make_store, now):
    store = make_store("s.db")
    fill(store, now)
    expected = answers(store, "t", now)
    path = snapshot_file(store)
    sound = path.read_bytes()
    base, _ = _layout(sound)
    for place, reason in [
        (40, "checksum mismatch"),  # the JSON header
        (base - 8, "checksum mismatch"),  # the blocks' CRC-32 table
        (len(sound) // 2, "truncated"),  # a file cut short
    ]:
        data = bytearray(sound[:place] if reason == "truncated" else sound)
        if reason != "truncated":
            data[place] ^= 0xFF
        path.write_bytes(bytes(data))
        again = make_store("s.db")
        assert answers(again, "t", now) == expected
        assert store_index(again).opened["t"] == f"built: snapshot {reason}"
    path.write_bytes(sound[:20])
    with pytest.raises(persist.SnapshotRefused, match="truncated"):
        persist.read(path, "t", store.log()[-1].id)


def test_a_flipped_byte_in_any_array_is_never_used(make_store, now):
    """Each array damaged in turn: the answers never change, and the damage is found by the
    time everything was read (when its block is first read: the index is rebuilt)."""
    store = make_store("s.db")
    fill(store, now)
    expected = answers(store, "t", now)
    path = snapshot_file(store)
    sound = path.read_bytes()
    _, arrays = _layout(sound)
    assert len(arrays) > 40
    for name, (start, end) in arrays.items():
        if end == start:
            continue
        damaged = bytearray(sound)
        damaged[(start + end) // 2] ^= 0x55
        path.write_bytes(bytes(damaged))
        again = make_store("s.db")
        try:
            assert answers(again, "t", now) == expected, name
        except IndexDamaged:  # met by an explanation built after its recall returned
            assert answers(again, "t", now) == expected, name  # the next recall rebuilt
        store_index(again).save("t")  # reads every array: the damage is found by now
        assert not path.exists() or path.read_bytes() != bytes(damaged), name
        assert answers(again, "t", now) == expected, name
        again.close()
        path.write_bytes(sound)


def test_a_damaged_index_passed_in_directly_raises_a_typed_error(make_store, now):
    store = make_store("s.db")
    fill(store, now)
    recall(store, "alpha", tenant="t", now=now)
    path = snapshot_file(store)
    data = bytearray(path.read_bytes())
    start, end = _layout(data)[1]["main_docs"]
    data[start:end] = bytes(end - start)  # every posting now names document 0
    path.write_bytes(bytes(data))
    opened = persist.read(path, "t", store.log()[-1].id)
    index = store_index(store).index("t").restore("t", opened.sections)
    source = Source(index, store_loader(store, "t"), True)
    with pytest.raises(IndexDamaged, match="main_docs"):
        recall(source, "alpha", tenant="t", now=now)


def test_a_damaged_snapshot_let_go_before_the_retry_is_rebuilt_all_the_same(
    make_store, now, monkeypatch
):
    """The recall that met the damage runs again; if another thread let the tenant's index
    go in between (its mark of the damage with it), the retry must not open the same file."""
    store = make_store("s.db")
    fill(store, now)
    reference = [r.memory.id for r in recall(store, "alpha deploy", tenant="t", now=now).rows]
    path = snapshot_file(store)
    data = bytearray(path.read_bytes())
    start, end = _layout(data)[1]["main_docs"]
    data[start:end] = bytes(end - start)
    path.write_bytes(bytes(data))
    again = make_store("s.db")
    live_index = store_index(again)
    sourced = []
    real = run._source

    def source_then_let_go(*args):  # the second attempt: the index was let go meanwhile
        if sourced and "t" in live_index.tenants:
            live_index.tenants.pop("t")
            live_index._evicted("t")
        sourced.append(args)
        return real(*args)

    monkeypatch.setattr(run, "_source", source_then_let_go)
    found = [r.memory.id for r in recall(again, "alpha deploy", tenant="t", now=now).rows]
    assert len(sourced) == 2 and found == reference


def test_a_snapshot_of_another_format_is_refused(make_store, now, monkeypatch):
    store = make_store("s.db")
    fill(store, now)
    expected = answers(store, "t", now)
    monkeypatch.setattr(persist, "FORMAT", persist.FORMAT + 1)
    again = make_store("s.db")
    assert answers(again, "t", now) == expected
    assert store_index(again).opened["t"] == f"built: snapshot format {persist.FORMAT - 1}, " + (
        f"this version reads {persist.FORMAT}"
    )


def test_a_snapshot_lacking_a_column_is_refused_and_rebuilt(make_store, now):
    """A snapshot of the same format but other columns (a build from another version)."""
    store = make_store("s.db")
    fill(store, now)
    expected = answers(store, "t", now)
    path = snapshot_file(store)
    opened = persist.read(path, "t", store.log()[-1].id)
    arrays = {name: s.whole().copy() for name, s in opened.sections.items() if name != "speaker"}
    persist.write(path, "t", opened.stamp, Exported(arrays))
    again = make_store("s.db")
    assert answers(again, "t", now) == expected
    assert store_index(again).opened["t"] == "built: the snapshot lacks speaker"


def test_another_stores_snapshot_is_refused(make_store, now):
    mine, other = make_store("mine.db"), make_store("other.db")
    fill(mine, now)
    fill(other, now, count=12)
    expected = answers(mine, "t", now)
    recall(other, "alpha", tenant="t", now=now)
    shutil.copyfile(snapshot_file(other), snapshot_file(mine))
    again = make_store("mine.db")
    assert answers(again, "t", now) == expected
    assert store_index(again).opened["t"] == "built: snapshot belongs to another store"


def test_a_tenants_snapshot_never_serves_another_tenant(make_store, now):
    store = make_store("s.db")
    fill(store, now, tenant="t")
    fill(store, now, tenant="u", count=7, prefix="u")
    expected_u = answers(store, "u", now)
    recall(store, "alpha", tenant="t", now=now)
    shutil.copyfile(snapshot_file(store, "t"), snapshot_file(store, "u"))
    again = make_store("s.db")
    assert answers(again, "u", now) == expected_u
    assert store_index(again).opened["u"] == "built: snapshot holds tenant 't'"
    assert all(r.memory.tenant == "u" for r in recall(again, "alpha", tenant="u", now=now).rows)


def test_a_snapshot_from_a_diverged_copy_is_refused(tmp_path, now, store_backend, monkeypatch):
    if store_backend != "sqlite":
        pytest.skip("copies a store file")
    import memcommit

    monkeypatch.delenv("MEMCOMMIT_INDEX_DIR")  # a copy is the same store: beside each file

    first = memcommit.open(tmp_path / "a.db")
    fill(first, now, count=10)
    first.close()
    shutil.copyfile(tmp_path / "a.db", tmp_path / "b.db")  # same history up to here
    a, b = memcommit.open(tmp_path / "a.db"), memcommit.open(tmp_path / "b.db")
    with a.commit(message="a's own", now=now) as tx:
        tx.add("alpha only in a", id="x", tenant="t")
    with b.commit(message="b's own", now=now) as tx:
        tx.add("gamma only in b", id="y", tenant="t")
    recall(a, "alpha", tenant="t", now=now)
    expected = answers(b, "t", now)
    shutil.copyfile(snapshot_file(a), snapshot_file(b))
    again = memcommit.open(tmp_path / "b.db")
    assert answers(again, "t", now) == expected
    assert store_index(again).opened["t"] == "built: snapshot from another history"
    for store in (a, b, again):
        store.close()


def _snapshot_bytes(directory):
    return b"".join(p.read_bytes() for p in directory.rglob("*") if p.is_file())


def test_purge_leaves_no_trace_in_the_snapshot_files(make_store, now, recall_snapshots):
    store = make_store("s.db")
    fill(store, now)
    with store.commit(message="secret", now=now) as tx:
        tx.add("zebraquux alpha", id="secret", tenant="t")
    recall(store, "alpha", tenant="t", now=now)  # indexed here: written again on purge
    assert b"zebraquux" in _snapshot_bytes(recall_snapshots)
    with store.commit(message="erase", now=now) as tx:
        tx.purge("secret")
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)
    assert b"secret" not in _snapshot_bytes(recall_snapshots)
    assert store_index(make_store("s.db")).index("t").n_docs == 40


def test_a_purge_in_a_commit_too_large_to_apply_still_erases_the_snapshot(
    make_store, now, recall_snapshots, monkeypatch
):
    monkeypatch.setattr(live, "CATCH_UP_LIMIT", 3)  # this commit drops the indexes instead
    store = make_store("s.db")
    fill(store, now)
    with store.commit(message="secret", now=now) as tx:
        tx.add("zebraquux alpha", id="secret", tenant="t")
    recall(store, "alpha", tenant="t", now=now)  # indexed here
    with store.commit(message="erase and more", now=now) as tx:
        tx.purge("secret")
        for i in range(5):
            tx.add(f"alpha more {i}", tenant="t")
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)
    assert "secret" not in {r.memory.id for r in recall(store, "alpha", tenant="t", now=now).rows}


def test_purge_by_a_process_that_never_recalled_erases_the_snapshot(
    make_store, now, recall_snapshots
):
    store = make_store("s.db")
    fill(store, now)
    with store.commit(message="secret", now=now) as tx:
        tx.add("zebraquux alpha", id="secret", tenant="t")
    expected_before = recall(store, "alpha", tenant="t", now=now)
    assert "secret" in {r.memory.id for r in expected_before.rows}
    with make_store("s.db").commit(message="erase", now=now) as tx:  # no index in this one
        tx.purge("secret")
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)
    again = make_store("s.db")
    assert "secret" not in {r.memory.id for r in recall(again, "alpha", tenant="t", now=now).rows}
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)


def test_catching_up_reads_only_the_memories_of_tenants_open_here(make_store, now, monkeypatch):
    """Another writer's commits in other tenants are skipped by their tenant, unread."""
    store = make_store("s.db")
    fill(store, now)
    recall(store, "alpha", tenant="t", now=now)
    other = make_store("s.db")
    fill(other, now, tenant="u", prefix="u")
    fill(other, now, count=3, prefix="n")
    read = []
    apply = live.StoreIndex._apply

    def spy(self, ids):
        read.extend(ids)
        return apply(self, ids)

    monkeypatch.setattr(live.StoreIndex, "_apply", spy)
    found = recall(store, "alpha", tenant="t", now=now)
    assert sorted(read) == ["n0", "n1", "n2"] and store_index(store).index("t").n_docs == 43
    assert outcome(found) == outcome(recall(make_store("s.db"), "alpha", tenant="t", now=now))


def _landing_during_writes(monkeypatch, land):
    """Every snapshot write, counted; ``land()`` runs (another writer commits) after the first."""
    writes = []
    real = persist.write

    def write(*args, **kwargs):
        size = real(*args, **kwargs)
        writes.append(args[0])
        if len(writes) == 1:
            land()
        return size

    monkeypatch.setattr(persist, "write", write)
    return writes


def test_a_commit_landing_while_a_snapshot_is_written_leaves_it_as_written(
    make_store, now, recall_snapshots, monkeypatch
):
    """Other writers' commits only leave the new file behind (a reader catches up), so it is
    not written again: with many busy writers it was, over and over."""
    store = make_store("s.db")
    fill(store, now)
    recall(store, "alpha", tenant="t", now=now)
    fill(store, now, prefix="n")  # the index is now behind the file
    other = make_store("s.db")
    writes = _landing_during_writes(monkeypatch, lambda: fill(other, now, prefix="o"))
    store_index(store).save("t")
    assert len(writes) == 1
    reader = make_store("s.db")
    assert store_index(reader).index("t").n_docs == 120
    assert store_index(reader).opened["t"] == "loaded, caught up 40 memories"


def _indexed_with_a_secret(make_store, now):
    """A store whose tenant t holds "zebraquux" (id "secret"), indexed, then 40 more."""
    store = make_store("s.db")
    fill(store, now)
    with store.commit(message="secret", now=now) as tx:
        tx.add("zebraquux alpha", id="secret", tenant="t")
    recall(store, "alpha", tenant="t", now=now)
    fill(store, now, prefix="n")
    return store


def test_a_purge_landing_while_a_snapshot_is_written_has_it_written_again(
    make_store, now, recall_snapshots, monkeypatch
):
    store = _indexed_with_a_secret(make_store, now)

    def purge():
        with make_store("s.db").commit(message="erase", now=now) as tx:
            tx.purge("secret")

    writes = _landing_during_writes(monkeypatch, purge)
    store_index(store).save("t")
    assert len(writes) >= 2
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)


def test_a_purge_landing_before_a_snapshot_is_renamed_keeps_the_stale_file_out(
    make_store, now, recall_snapshots, monkeypatch
):
    """The arrays were taken before another writer's purge landed and erased the folder:
    the write is given up under the folder's lock, before its rename, rather than put
    right after it (a writer killed in between left the purged words on disk)."""
    store = _indexed_with_a_secret(make_store, now)
    on_disk, real = [], persist.write

    def write(*args, **kwargs):
        if not on_disk:  # after the arrays were taken, before the file is written
            with make_store("s.db").commit(message="erase", now=now) as tx:
                tx.purge("secret")
        try:
            return real(*args, **kwargs)
        finally:
            on_disk.append(b"zebraquux" in _snapshot_bytes(recall_snapshots))

    monkeypatch.setattr(persist, "write", write)
    assert store_index(store).save("t") is not None
    assert len(on_disk) >= 2 and not any(on_disk)  # given up once, then written without it


def test_a_process_behind_another_writers_purge_never_writes_the_purged_words_back(
    make_store, now, recall_snapshots
):
    behind = make_store("s.db")
    fill(behind, now)
    with behind.commit(message="secret", now=now) as tx:
        tx.add("zebraquux alpha", id="secret", tenant="t")
    recall(behind, "alpha", tenant="t", now=now)  # indexed here, with the secret
    with make_store("s.db").commit(message="erase", now=now) as tx:  # another writer purges
        tx.purge("secret")
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)
    with behind.commit(message="drop one", now=now) as tx:  # a purge here rewrites the snapshot
        tx.purge("m0")
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)
    assert b"secret" not in _snapshot_bytes(recall_snapshots)
    store_index(behind).save("t")
    assert b"zebraquux" not in _snapshot_bytes(recall_snapshots)
    assert store_index(make_store("s.db")).index("t").n_docs == 39


def test_a_sqlite_stores_snapshots_sit_beside_its_file(tmp_path, now, monkeypatch):
    import memcommit

    monkeypatch.delenv("MEMCOMMIT_INDEX_DIR")
    with memcommit.open(tmp_path / "here.db") as store:
        fill(store, now, count=5)
        recall(store, "alpha", tenant="t", now=now)
        assert index_dir(store) == tmp_path / "here.db.recall"
        assert snapshot_file(store).exists()
    with memcommit.open(":memory:") as store:
        assert index_dir(store) is None

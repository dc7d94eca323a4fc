"""Export/import is a verified format: cut, edited or reordered files are refused (defect 2)."""

from __future__ import annotations

import io
import json
import os

import pytest

from memcommit.errors import InvalidInput
from memcommit.store import transfer
from memcommit.store.transfer import export_file, export_jsonl, exporting, import_jsonl


@pytest.fixture
def exported(make_store, now) -> list[str]:
    """The lines of an export of a small store with history, a trace and a purge."""
    store = make_store("source")
    with store.commit(message="learn", author="t", now=now) as tx:
        fact = tx.add("Deploys happen on weekdays.", tenant="acme", key="deploy")
        tx.add("Staging is orders-stage.", tenant="acme", metadata={"n": [1, {"x": "é"}]})
    with store.commit(message="change", author="t", now=now) as tx:
        tx.update(fact.id, content="Deploys happen on Tuesdays.")
        trace = tx.begin_trace("Fix the build", tenant="acme")
        tx.step(trace, "found it")
        tx.finish(trace)
    out = io.StringIO()
    export_jsonl(store, out)
    return out.getvalue().splitlines(keepends=True)


def _import(make_store, lines: list[str], name: str = "target"):
    store = make_store(name)
    return store, import_jsonl(store, io.StringIO("".join(lines)))


def test_the_export_ends_with_a_trailer_that_lists_it(exported):
    trailer = json.loads(exported[-1])
    assert trailer["type"] == "trailer"
    assert trailer["lines"] == len(exported) - 1
    assert trailer["counts"]["commit"] == 2


def test_a_whole_export_imports(make_store, exported):
    store, summary = _import(make_store, exported)
    assert summary.commits == 2
    assert store.check().ok


def _refused(make_store, lines) -> InvalidInput:
    store = make_store("target")
    with pytest.raises(InvalidInput) as caught:
        import_jsonl(store, io.StringIO("".join(lines)))
    assert store.log() == [] and store.find() == []
    return caught.value


def test_a_cut_file_is_refused_naming_the_line(make_store, exported):
    error = _refused(make_store, exported[:-1])  # head -n -1
    assert error.field == f"line {len(exported)}"
    assert "cut" in error.reason


def test_a_file_cut_mid_line_is_refused(make_store, exported):
    text = "".join(exported)
    error = _refused(make_store, [text[: len(text) // 2]])
    assert error.field.startswith("line ")


def test_an_edited_line_is_refused_naming_the_trailer(make_store, exported):
    edited = [line.replace("Tuesdays", "Fridays") for line in exported]
    assert edited != exported
    error = _refused(make_store, edited)
    assert error.field == f"line {len(exported)}: sha256"


def test_reordered_lines_are_refused(make_store, exported):
    usage_free = list(exported)
    last_two = usage_free[-3:-1]
    usage_free[-3:-1] = reversed(last_two)
    assert usage_free != exported
    error = _refused(make_store, usage_free)
    assert error.field.startswith("line ")


def test_lines_after_the_trailer_are_refused(make_store, exported):
    error = _refused(make_store, [*exported, exported[1]])
    assert error.field == f"line {len(exported) + 1}"


def test_an_export_that_fails_leaves_no_partial_file(make_store, tmp_path, monkeypatch, now):
    store = make_store("source")
    with store.commit(message="m", author="t", now=now) as tx:
        for n in range(3):
            tx.add(f"memory {n}", tenant="acme")
    target = tmp_path / "backup.jsonl"
    target.write_text("the previous backup\n")

    def broken(backend):
        yield {"type": "header", "format": transfer.FORMAT, "version": transfer.VERSION,
               "commits": 1}  # fmt: skip
        raise OSError("disk full")

    monkeypatch.setattr(exporting, "records", broken)  # where export_jsonl looks it up
    with pytest.raises(OSError, match="disk full"):
        export_file(store, target)
    assert target.read_text() == "the previous backup\n"
    assert sorted(os.listdir(tmp_path)) == sorted(
        p for p in os.listdir(tmp_path) if not p.startswith(".memcommit-export-")
    )
    monkeypatch.undo()
    summary = export_file(store, target)
    assert summary.versions == 3
    restored = make_store("restored")
    with target.open(encoding="utf-8") as source:
        import_jsonl(restored, source)
    assert len(restored.find(tenant="acme")) == 3


def test_an_export_reads_one_snapshot_and_stops_no_writer(make_store, store_backend):
    """An export takes no writers' lock: commits another connection makes while it runs,
    unordered and ordered, land at once (not after a wait that would outlast their 0.5 s
    timeout), and the export is the store as it was when it began."""
    wait = {"busy_timeout": 0.5} if store_backend == "sqlite" else {"lock_timeout": 0.5}
    store = make_store("source")
    for n in range(3):
        with store.commit(message=f"before {n}") as tx:
            tx.add(f"memory {n}", tenant="acme")
    writer = make_store("source", **wait)  # the same store, on connections of its own
    landed = []

    def progress(done: int, total: int) -> None:
        if done == 1:  # the snapshot is open and read from: write twice meanwhile
            with writer.commit(message="during, unordered") as tx:
                tx.add("added while the export ran", tenant="other")
            landed.append(tx.result.seq)
            with writer.commit(message="during, ordered") as tx:
                assert tx.pending.seq == 5  # ordered: the writers' lock from here
                tx.add("added in order while the export ran", tenant="acme")
            landed.append(tx.result.seq)

    out = io.StringIO()
    summary = export_jsonl(store, out, progress=progress)
    assert landed == [4, 5]
    _restored_as_it_began(make_store, summary, out)
    assert len(store.log()) == 5 and store.verify().ok


def _restored_as_it_began(make_store, summary, out: io.StringIO):
    """The export of the three commits made before it began, imported and verified."""
    assert summary.commits == 3 and summary.versions == 3
    restored = make_store("restored")
    import_jsonl(restored, io.StringIO(out.getvalue()))
    assert [c.message for c in restored.log()] == ["before 2", "before 1", "before 0"]
    assert restored.verify().ok and restored.check().ok
    return restored


def test_the_cli_reference_says_the_trailer_detects_accidents_not_tampering():
    from memcommit.cli.docs import DOCS_PATH

    words = " ".join(DOCS_PATH.read_text(encoding="utf-8").split())
    assert "The trailer detects accidents, not tampering" in words
    assert "whoever edits the file can recompute it" in words


def test_an_export_in_one_thread_and_commits_in_another_share_one_store(make_store):
    """A backup thread exports while the agent's thread commits through the same Store
    object: the commits land at once, the export is the store as it was when it began,
    and the store takes commits and exports again after."""
    import threading

    store = make_store("source")
    with store.commit(message="before 0") as tx:
        first = tx.add("memory 0", tenant="acme")
    for n in (1, 2):
        with store.commit(message=f"before {n}") as tx:
            tx.add(f"memory {n}", tenant="acme")
    reading, written = threading.Event(), threading.Event()
    landed: list[int] = []

    def progress(done: int, total: int) -> None:
        if done == 1:  # the snapshot is open and read from: let the other thread write
            reading.set()
            assert written.wait(10), "a commit in another thread waited for the export"

    def agent() -> None:
        assert reading.wait(10)
        with store.commit(message="during 0") as tx:
            tx.add("added while the export ran", tenant="other")
        landed.append(tx.result.seq)
        with store.commit(message="during 1") as tx:  # a version the export has, ended
            tx.update(first.id, content="memory 0, changed while the export ran")
        landed.append(tx.result.seq)
        written.set()

    thread = threading.Thread(target=agent)
    thread.start()
    out = io.StringIO()
    summary = export_jsonl(store, out, progress=progress)
    thread.join(10)
    assert landed == [4, 5]
    restored = _restored_as_it_began(make_store, summary, out)
    assert restored.get(first.id).content == "memory 0"
    assert store.scrub()  # nothing of the ended export holds the store's rows
    with store.commit(message="after") as tx:
        tx.add("after the export", tenant="acme")
    assert len(store.log()) == 6 and store.verify().ok and store.check().ok
    assert export_jsonl(store, io.StringIO()).commits == 6


def test_an_export_whose_own_thread_commits_to_the_same_store_stays_its_snapshot(make_store):
    store = make_store("source")
    with store.commit(message="before") as tx:
        tx.add("memory 0", tenant="acme")

    def progress(done: int, total: int) -> None:
        with store.commit(message="during") as tx:  # the same thread, the same Store
            tx.add("added by the exporting thread", tenant="acme")

    out = io.StringIO()
    assert export_jsonl(store, out, progress=progress).commits == 1
    assert len(store.log()) == 2 and store.verify().ok
    restored = make_store("restored")
    import_jsonl(restored, io.StringIO(out.getvalue()))
    assert [c.message for c in restored.log()] == ["before"]


def test_a_store_in_memory_exports_a_copy_while_threads_read_and_commit():
    """In memory there is one connection: a snapshot is a copy made between commits. A
    commit in another thread lands at once, the export's own thread reads its snapshot
    through the Store and commits meanwhile, and the export is the store as it began."""
    import threading

    import memcommit

    store = memcommit.open(":memory:")
    with store.commit(message="before") as tx:
        tx.add("memory 0", tenant="acme")
    landed: list[int] = []

    def agent() -> None:
        with store.commit(message="during") as tx:
            tx.add("added while the export ran", tenant="acme")
        landed.append(tx.result.seq)

    def progress(done: int, total: int) -> None:
        thread = threading.Thread(target=agent)
        thread.start()
        thread.join(10)
        assert landed == [2]
        assert store.head_seq == 1  # this thread reads its snapshot until the export ends
        with store.commit(message="nested") as tx:  # and commits, after the newest commit
            tx.add("added by the exporting thread", tenant="acme")

    out = io.StringIO()
    assert export_jsonl(store, out, progress=progress).commits == 1
    assert store.head_seq == 3 and store.verify().ok and store.check().ok
    restored = memcommit.open(":memory:")
    import_jsonl(restored, io.StringIO(out.getvalue()))
    assert [c.message for c in restored.log()] == ["before"]


def test_an_export_inside_its_own_threads_commit_is_refused_and_the_commit_lands(make_store):
    store = make_store("source")
    with store.commit(message="outer") as tx:
        tx.add("before the export", tenant="acme")
        with pytest.raises(InvalidInput) as refused:
            export_jsonl(store, io.StringIO())
        assert refused.value.field == "snapshot"
        tx.add("after the export", tenant="acme")
    assert tx.result.seq == 1 and len(store.find(tenant="acme")) == 2
    assert store.verify().ok and export_jsonl(store, io.StringIO()).commits == 1


def test_a_store_opened_by_a_relative_path_exports_after_a_chdir(tmp_path, monkeypatch):
    import memcommit

    monkeypatch.chdir(tmp_path)
    store = memcommit.open("relative.db")
    with store.commit(message="seed") as tx:
        tx.add("kept", tenant="acme")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert export_jsonl(store, io.StringIO()).commits == 1 and store.verify().ok
    assert list(elsewhere.iterdir()) == []  # no empty store made where the process moved
    store.close()


def test_closing_a_store_while_threads_export_it_tells_them_it_closed(tmp_path):
    """Each export's own connection is left to its thread (closing it under a running
    query would crash the process); its next read says the store closed."""
    import threading

    import memcommit
    from memcommit.errors import StoreClosed

    store = memcommit.open(tmp_path / "s.db")
    backend = store.backend
    with store.commit(message="seed") as tx:
        for n in range(300):
            tx.add(f"memory {n}", tenant="acme")
    for n in range(3):
        with store.commit(message=f"more {n}") as tx:
            tx.add(f"more {n}", tenant="acme")
    started, closed = threading.Barrier(4), threading.Event()
    outcomes: list[str] = []

    def progress(done: int, total: int) -> None:
        if done == 1:
            started.wait(10)
            assert closed.wait(10)

    def export() -> None:
        try:
            export_jsonl(store, io.StringIO(), progress=progress)
            outcomes.append("finished")
        except StoreClosed:
            outcomes.append("closed")

    threads = [threading.Thread(target=export) for _ in range(3)]
    for thread in threads:
        thread.start()
    started.wait(10)
    store.close()
    closed.set()
    for thread in threads:
        thread.join(10)
    assert outcomes == ["closed"] * 3 and not backend._readers  # each ended its own


def test_an_import_inside_its_own_threads_commit_is_refused_not_waited_for():
    """In memory a commit holds the one connection until it ends: a second write
    transaction from the same thread (an import into the store) would wait forever."""
    import memcommit

    source = memcommit.open(":memory:")
    with source.commit(message="seed") as tx:
        tx.add("kept", tenant="acme")
    out = io.StringIO()
    export_jsonl(source, out)
    target = memcommit.open(":memory:")
    with pytest.raises(InvalidInput) as refused, target.commit(message="open") as tx:
        tx.add("pending", tenant="acme")
        import_jsonl(target, io.StringIO(out.getvalue()))
    assert refused.value.field == "commit" and target.log() == []
    import_jsonl(target, io.StringIO(out.getvalue()))
    assert [c.message for c in target.log()] == ["seed"] and target.verify().ok

"""Purge really erases: no interface copies content into commit messages, and no file keeps it.

Defect 3 of the reliability issue: the MCP tools copied 60 characters of content
into commit messages, SQLite's ``-wal`` file kept old page images while a
connection stayed open, and PostgreSQL kept old row versions until VACUUM.
"""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid

import pytest
from faults_helpers import files_of, holding, postgres_files, sqlite_files

import memcommit
from memcommit.compaction import Compactor
from memcommit.embedding.hashed import HashEmbedder
from memcommit.embedding.vectors import to_bytes
from memcommit.errors import HookError, InvalidInput
from memcommit.interfaces.agent import AgentMemory
from memcommit.interfaces.request_ids import (
    INDEXED,
    READ_ALL_ABOVE,
    REQUEST_ORDER,
    REQUESTS,
    named_by,
)
from memcommit.store.transfer import export_jsonl


@pytest.fixture
def secret() -> str:
    return f"The vault code is {uuid.uuid4().hex} and nobody may keep it."


def test_write_tools_never_copy_content_into_messages(make_store, secret):
    agent = AgentMemory(make_store(), "acme")
    agent.remember(secret)
    agent.correct(f"Never say {secret}")
    trace = agent.begin_task(f"Rotate {secret}")["trace_id"]
    agent.add_step(trace, f"Rotated {secret}")
    agent.finish_task(trace)
    messages = [c["message"] for c in agent.log(limit=50)["commits"]]
    assert len(messages) == 5
    assert not [m for m in messages if "vault" in m or secret[:20] in m]


def test_a_purge_drops_the_digest_of_the_calls_that_wrote_it(make_store, secret):
    """A write tool's request id keeps a digest of the call, its text among the arguments:
    after a purge it would let a reader of the store test guesses at the purged text.
    The purge drops it; the answer stays, so a retry still gets it without a second write."""
    store = make_store()
    agent = AgentMemory(store, "acme")
    kept = agent.remember(secret, request_id="r1")
    trace = agent.begin_task(f"Rotate {secret}", request_id="r2")["trace_id"]
    step = agent.add_step(trace, f"Rotated {secret}", request_id="r3")["id"]
    other = agent.remember("an unrelated note", request_id="r4")
    for memory_id in (kept["id"], trace, step):
        agent.forget(memory_id, mode="purge", confirm=memory_id)
    calls = store.tenant("acme").state_items(REQUESTS)
    assert [calls[r]["call"] for r in ("r1", "r2", "r3")] == [None, None, None]
    assert calls["r4"]["call"] is not None  # a call whose memory holds keeps its digest
    head = store.head.seq
    assert agent.remember(secret, request_id="r1") == kept  # the retry: its answer, no write
    assert agent.remember("an unrelated note", request_id="r4") == other
    with pytest.raises(InvalidInput) as refused:  # another tool under the id: never its answer
        agent.begin_task("another task", request_id="r1")
    assert refused.value.field == "request_id"
    assert store.head.seq == head


def test_a_purge_hook_that_fails_leaves_the_others_to_erase_theirs(make_store, monkeypatch):
    """Each purge hook erases its own copies (snapshots, call digests): one raising does
    not keep the next from running; the commit reports it (HookError) and has landed."""

    def broken(store, commit):
        raise RuntimeError("a snapshot folder that cannot be read")

    monkeypatch.setattr(memcommit.Store, "_purge_hooks", [broken, *memcommit.Store._purge_hooks])
    store = make_store()
    agent = AgentMemory(store, "acme")
    kept = agent.remember("a note to erase", request_id="r1")
    with pytest.raises(HookError), store.commit(message="erase") as tx:
        tx.purge(kept["id"])
    assert store.get(kept["id"]).content == ""
    assert store.tenant("acme").state_items(REQUESTS)["r1"]["call"] is None


KILLED_AFTER_THE_PURGE = """
    import json, os, sys
    import memcommit
    from memcommit.interfaces.agent import AgentMemory

    store = memcommit.open(sys.argv[1], **json.loads(sys.argv[2]))
    agent = AgentMemory(store, "acme")
    kept = agent.remember(sys.argv[3], request_id="r1")["id"]
    backend = store._core.backend
    landing = backend.commit

    def landed_then_killed():  # the database has the purge; nothing after it runs
        landing()
        os._exit(0)

    backend.commit = landed_then_killed
    agent.forget(kept, mode="purge", confirm=kept)
"""


def test_a_process_killed_as_its_purge_lands_leaves_no_digest(store_target, secret):
    """The digest goes in the purge's own commit: nothing run after the commit landed
    (the process died there) is needed to drop it."""
    target, options = store_target
    script = [sys.executable, "-c", textwrap.dedent(KILLED_AFTER_THE_PURGE)]
    done = subprocess.run([*script, target, json.dumps(options), secret], capture_output=True)
    assert done.returncode == 0, done.stderr
    with memcommit.open(target, **options) as store:
        view = store.tenant("acme")
        (purged,) = store.find(tenant="acme", live=False)
        assert purged.status == "purged"
        assert view.state_items(REQUESTS)["r1"]["call"] is None
        assert view.state_items(named_by(purged.id)) == {}


def test_a_purge_rolled_back_keeps_the_calls_digest(make_store, secret):
    store = make_store()
    agent = AgentMemory(store, "acme")
    kept = agent.remember(secret, request_id="r1")["id"]
    digest = store.tenant("acme").state_get(REQUESTS, "r1")["call"]
    with pytest.raises(RuntimeError), store.commit(message="erase") as tx:
        tx.purge(kept)
        raise RuntimeError("the caller changed its mind")
    assert store.tenant("acme").state_get(REQUESTS, "r1")["call"] == digest
    assert store.tenant("acme").state_items(named_by(kept)) == {"r1": True}
    assert agent.remember(secret, request_id="r1")["id"] == kept  # still a retry


def test_calls_kept_before_the_index_lose_their_digest_too(make_store, secret):
    """A tenant whose calls were kept by an earlier version (no `named_by` keys): its first
    purge reads every kept call once, in the purge's commit."""
    store = make_store()
    agent = AgentMemory(store, "acme")
    kept = agent.remember(secret, request_id="r1")["id"]
    other = agent.remember("an unrelated note", request_id="r2")["id"]
    view = store.tenant("acme")
    for memory_id in (kept, other):  # as an earlier version left them
        view.state_delete(named_by(memory_id), "r1" if memory_id == kept else "r2")
    view.state_delete(REQUEST_ORDER, INDEXED)
    agent.forget(kept, mode="purge", confirm=kept)
    calls = view.state_items(REQUESTS)
    assert calls["r1"]["call"] is None and calls["r2"]["call"] is not None
    assert view.state_items(named_by(other)) == {"r2": True}  # indexed now, once


def test_a_call_kept_by_an_earlier_version_beside_new_ones_loses_its_digest(make_store, secret):
    """A process of an earlier version keeps a call (no `named_by` keys, "next" moved alone)
    after this version kept one: the purge of its memory still drops its digest."""
    store = make_store()
    agent = AgentMemory(store, "acme")
    agent.remember("a note of this version", request_id="r1")
    with store.commit(message="remember") as tx:  # as the earlier version's tool wrote it
        old = tx.add(secret, tenant="acme").id
        view = store.tenant("acme")
        view.state_set(REQUESTS, "r2", {"tool": "remember", "call": "d" * 64,
                                        "answer": {"id": old}})  # fmt: skip
        view.state_set(REQUEST_ORDER, "1", "r2")
        view.state_set(REQUEST_ORDER, "next", 2)
    agent.forget(old, mode="purge", confirm=old)
    calls = view.state_items(REQUESTS)
    assert calls["r2"]["call"] is None and calls["r1"]["call"] is not None
    assert view.state_get(REQUEST_ORDER, INDEXED) == 2  # every call has its keys again


def test_a_kept_call_that_cannot_be_written_back_never_blocks_a_purge(make_store, secret):
    store = make_store()
    agent = AgentMemory(store, "acme")
    kept = agent.remember(secret, request_id="r1")["id"]
    record = '{"tool": "remember", "call": "%s", "answer": {"id": "%s", "score": NaN}}'
    store._core.backend.state_set("tenant:acme/" + REQUESTS, "r1", record % ("d" * 64, kept))
    agent.forget(kept, mode="purge", confirm=kept)
    assert store.get(kept).status == "purged"
    assert "r1" not in store.tenant("acme").state_items(REQUESTS)  # gone whole: erasure first


def test_a_bulk_purge_drops_every_digest_and_a_tenant_without_calls_gets_no_state(make_store):
    """Past `READ_ALL_ABOVE` purged memories a tenant's kept calls are read once; a tenant
    that never kept a call is read, never written to."""
    store = make_store()
    agent = AgentMemory(store, "acme")
    ids = [agent.remember(f"note {i}", request_id=f"r{i}")["id"] for i in range(READ_ALL_ABOVE + 6)]
    with store.commit(message="plain") as tx:
        plain = [tx.add(f"plain note {i}", tenant="quiet").id for i in range(3)]
    with store.commit(message="erase") as tx:
        for memory_id in ids[1:] + plain:
            tx.purge(memory_id)
    view = store.tenant("acme")
    calls = view.state_items(REQUESTS)
    assert calls["r0"]["call"] is not None
    assert all(calls[f"r{i}"]["call"] is None for i in range(1, len(ids)))
    assert all(view.state_items(named_by(m)) == {} for m in ids[1:])
    assert view.state_items(named_by(ids[0])) == {"r0": True}
    quiet = store.tenant("quiet")
    assert quiet.state_items(REQUEST_ORDER) == {} and quiet.state_items(REQUESTS) == {}


def test_a_call_let_go_by_the_ring_takes_its_index_key(make_store):
    store = make_store()
    agent = AgentMemory(store, "acme", kept_answers=2)
    first = agent.remember("one", request_id="r1")["id"]
    agent.remember("two", request_id="r2")
    agent.forget(first, request_id="r3")  # (invalidate) r1's slot: r1 is let go
    view = store.tenant("acme")
    assert sorted(view.state_items(REQUESTS)) == ["r2", "r3"]
    assert view.state_items(named_by(first)) == {"r3": True}


def test_purge_leaves_the_text_in_no_file_while_the_store_stays_open(own_store, secret):
    store, url = own_store
    agent = AgentMemory(store, "acme")
    memory_id = agent.remember(secret)["id"]
    with store.commit(message="other work", author="t") as tx:
        tx.add("A neighbour row that stays.", tenant="acme")
    assert holding(files_of(store, url), secret[18:50])  # the grep reads where the rows are
    agent.forget(memory_id, mode="purge", confirm=memory_id)  # scrubs after its commit

    assert store.scrub() is True  # nothing held the old rows back
    files = files_of(store, url)
    assert files
    assert holding(files, secret[18:50]) == []
    out = io.StringIO()
    export_jsonl(store, out)
    assert secret[18:50] not in out.getvalue()
    assert store.check().ok


def test_a_relabelled_summary_leaves_the_purged_step_in_no_file(own_store, secret):
    store, url = own_store
    with store.commit(message="task", author="t") as tx:
        trace = tx.begin_trace("Rotate the vault code", tenant="acme")
        step = tx.step(trace, secret)
        tx.finish(trace)
    (summary,) = Compactor(store).compact().summaries
    with store.commit(message="label", author="t") as tx:
        tx.update(summary.id, metadata={"label": "reviewed"})  # the links stay
    needle = secret[18:50]
    assert holding(files_of(store, url), needle)  # in the step and both summary versions
    with store.commit(message="forget", author="t") as tx:
        tx.purge(step.id)  # purges the summary too, every version of it
    assert any(store.scrub() for _ in range(20))  # as in the vector test: a loaded server
    assert holding(files_of(store, url), needle) == []
    kept = [(m.version, m.status) for m in store.history(summary.id)]
    assert kept == [(1, "active"), (2, "active"), (3, "purged")]
    assert all(needle not in m.content + json.dumps(m.metadata) for m in store.history(summary.id))
    assert store.check().ok


def test_purge_leaves_the_vector_bytes_in_no_file(own_store, secret):
    store, url = own_store
    with store.commit(message="remember", author="t") as tx:
        memory_id = tx.add(secret, tenant="acme").id
        tx.add("A neighbour row that stays.", tenant="acme")
    store.embed("hash:96")
    vector = to_bytes(HashEmbedder(dims=96).embed([secret])[0])

    def files() -> list:
        if url is None:
            return sqlite_files(store)
        return postgres_files(store, url, ("vectors",))

    assert holding(files(), vector) != []  # the needle is there to be found
    with store.commit(message="forget", author="t") as tx:
        tx.purge(memory_id)  # scrubs after its commit
    # scrub is False while another session's snapshot holds the dead rows (its contract:
    # call it again); on a shared, loaded server that can outlast its own few tries
    assert any(store.scrub() for _ in range(20))
    assert holding(files(), vector) == []
    assert store.vectors("hash-ngram-v1/96", tenant="acme").ids != ()  # the neighbour's stays


def test_scrub_is_refused_inside_a_commit(make_store):
    from memcommit.errors import InvalidInput

    store = make_store()
    with pytest.raises(InvalidInput, match="scrub"), store.commit(message="m", author="t"):
        store.scrub()
    assert store.scrub() is True


def test_a_scrub_held_back_by_a_reader_lets_every_writer_through(tmp_path, secret):
    """SQLite: the checkpoint waits for a reader in short holds, never for the whole wait."""
    path = tmp_path / "held.db"
    store = memcommit.open(path, busy_timeout=2)
    with store.commit(message="remember", author="t") as tx:
        memory_id = tx.add(secret, tenant="acme").id
    reader = sqlite3.connect(path)  # a read that began before the purge: its snapshot holds the log
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM versions").fetchone()
    with store.commit(message="purge", author="t") as tx:
        tx.purge(memory_id)
    writer = memcommit.open(path, busy_timeout=0.5)  # gives up after 0.5 s of a held lock
    scrubbed: list[bool] = []
    scrubbing = threading.Thread(target=lambda: scrubbed.append(store.scrub()))
    scrubbing.start()
    landed = 0
    while scrubbing.is_alive():
        with writer.commit(message="meanwhile", author="w") as tx:
            tx.add(f"written while the scrub waits {landed}", tenant="globex")
        landed += 1
    scrubbing.join()
    assert scrubbed == [False] and landed > 1
    reader.rollback()
    assert store.scrub() is True
    assert holding(sqlite_files(store), secret[18:50]) == []
    assert len(writer.find(tenant="globex")) == landed
    writer.close()
    store.close()
    reader.close()


def test_scrub_names_the_tenants_it_cannot_read(make_store):
    from memcommit.errors import InvalidInput

    store = make_store()
    for bad in (5, [""], ["acme", 3]):
        with pytest.raises(InvalidInput, match="tenants"):
            store.scrub(bad)
    assert store.scrub("acme") is True and store.scrub(["acme", "globex"]) is True

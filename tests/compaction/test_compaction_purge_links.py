"""A summary keeps its links to its sources through every edit, so a purge of a source
erases the summary in every version (the text it quotes, its metadata, its tags)."""

from __future__ import annotations

import json
import sqlite3
import uuid

import pytest
from compaction_store import T0, later

from memcommit.compaction import Compactor
from memcommit.errors import InvalidInput


@pytest.fixture
def secret() -> str:
    return f"zsecret{uuid.uuid4().hex}"


@pytest.fixture
def rows_holding(store_backend, request):
    """``rows_holding(store, needle)``: the rows of the versions and commits tables whose
    text holds ``needle``, read with raw SQL rather than through the store."""

    def find(store, needle: str) -> list[tuple]:
        sql = (
            "SELECT 'version', id, version FROM versions"
            " WHERE content LIKE {p} OR tags LIKE {p} OR metadata LIKE {p}"
            " UNION ALL SELECT 'commit', id, seq FROM commits"
            " WHERE message LIKE {p} OR changes LIKE {p}"
        )
        params = [f"%{needle}%"] * 5
        if store_backend == "sqlite":
            with sqlite3.connect(store.backend.target) as conn:
                return conn.execute(sql.format(p="?"), params).fetchall()
        import psycopg

        with psycopg.connect(request.getfixturevalue("postgres_server")) as conn:
            conn.execute(f'SET search_path TO "{store.backend.schema}"')
            return conn.execute(sql.format(p="%s"), params).fetchall()

    return find


def compacted(store, secret: str, *, at=T0) -> tuple:
    """A finished trace in tenant acme with a secret step, compacted: (secret step, summary)."""
    with store.commit(message="rotate", author="t", now=at) as tx:
        trace = tx.begin_trace("Rotate the vault keys", tenant="acme")
        tx.step(trace, "opened the vault")
        step = tx.step(trace, f"the new key is {secret}")
        tx.finish(trace)
    (summary,) = Compactor(store).compact(now=at + (later(1) - T0)).summaries
    assert secret in summary.content and secret in json.dumps(summary.metadata)
    return step, summary


def leaks(store, ids: list[str], secret: str) -> list[tuple[str, int]]:
    """(id, version) of each version of ``ids`` that holds ``secret`` anywhere."""
    return [
        (m.id, m.version)
        for i in ids
        for m in store.history(i)
        if secret in m.content + json.dumps(m.metadata) + json.dumps(m.tags)
    ]


EDITS = {
    "relabelled": {"metadata": {"label": "reviewed"}},
    "metadata None": {"metadata": None},
    "metadata emptied": {"metadata": {}},
    "rewritten as an adapter writes": {"content": "Rotated keys.", "metadata": {"langchain": 1}},
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=list(EDITS))
def test_a_summary_whose_metadata_was_replaced_goes_with_its_step_in_every_version(
    make_store, rows_holding, secret, edit
) -> None:
    store = make_store()
    step, summary = compacted(store, secret)
    with store.commit(message="edit", author="t", now=later(2)) as tx:
        edited = tx.update(summary.id, **edit)
    given = edit["metadata"] or {}
    assert edited.metadata == {**given, "provenance": summary.metadata["provenance"]}
    assert store.get(summary.id).metadata == edited.metadata  # as stored, not only as returned
    with store.commit(message="forget", author="t", now=later(3)) as tx:
        tx.purge(step.id)
    purges = {c.memory_id: c.detail for c in tx.result.changes if c.op == "purge"}
    assert purges == {step.id: {}, summary.id: {"derived_from": step.id}}
    assert [(m.version, m.status) for m in store.history(summary.id)] == [
        (1, "active"),
        (2, "active"),
        (3, "purged"),
    ]
    assert leaks(store, [step.id, summary.id], secret) == []
    assert rows_holding(store, secret) == []
    assert store.check().ok


def test_an_update_that_names_a_link_must_keep_every_source(make_store, secret) -> None:
    store = make_store()
    step, summary = compacted(store, secret)
    provenance = summary.metadata["provenance"]
    root, first, _ = provenance["built_from"]
    short = {**provenance, "built_from": [root]}
    for metadata, dropped in (
        ({"label": "x", "provenance": short}, first),
        ({"provenance": None}, root),
    ):
        commit = store.commit(message="unlink", author="t", now=later(2))
        with pytest.raises(InvalidInput) as caught, commit as tx:
            tx.update(summary.id, metadata=metadata)
        assert caught.value.field == "metadata['provenance']"
        assert caught.value.value == metadata["provenance"]
        assert repr(dropped) in caught.value.reason  # the first source it would drop
        assert [m.version for m in store.history(summary.id)] == [1]  # nothing landed
    wider = {**provenance, "built_from": [*provenance["built_from"], "elsewhere"], "by": "me"}
    with store.commit(message="relink", author="t", now=later(3)) as tx:
        tx.update(summary.id, metadata={"provenance": wider})  # every source and more: taken
    assert store.get(summary.id).metadata == {"provenance": wider}
    with store.commit(message="forget", author="t", now=later(4)) as tx:
        tx.purge(step.id)
    assert store.get(summary.id).status == "purged"


def test_a_consolidation_keeps_its_links_as_a_compaction_does(
    make_store, rows_holding, secret
) -> None:
    store = make_store()
    with store.commit(message="note", author="t", now=T0) as tx:
        note = tx.add(f"the key is {secret}", tenant="acme")
        seg = tx.add(  # as TieredMemory's consolidation records one
            f"segment: {secret}", tenant="acme", kind="summary",
            tags=(secret,), metadata={"consolidated": [note.id], "segment": "s1"},
        )  # fmt: skip
    with store.commit(message="rename", author="t", now=later(1)) as tx:
        tx.update(seg.id, metadata={"segment": "s2"})
        with pytest.raises(InvalidInput) as caught:
            tx.update(seg.id, metadata={"consolidated": []})
    assert caught.value.field == "metadata['consolidated']" and caught.value.value == []
    assert store.get(seg.id).metadata == {"segment": "s2", "consolidated": [note.id]}
    with store.commit(message="forget", author="t", now=later(2)) as tx:
        tx.purge(note.id)
    assert store.get(seg.id).status == "purged"
    assert leaks(store, [note.id, seg.id], secret) == []
    assert rows_holding(store, secret) == []


def test_links_outlive_merges_and_every_other_change(make_store, rows_holding, secret) -> None:
    store = make_store()
    step, first = compacted(store, secret)
    _, second = compacted(store, f"other{uuid.uuid4().hex}", at=later(10))
    (merged,) = Compactor(store).merge(now=later(20)).summaries  # supersedes first and second
    assert secret in merged.content
    assert store.get(first.id).status == "superseded"
    with store.commit(message="edit", author="t", now=later(21)) as tx:
        tx.update(merged.id, metadata={"label": "reviewed"}, content=f"merged: {secret}")
        tx.update(first.id, metadata=None)
    with store.commit(message="more", author="t", now=later(22)) as tx:
        tx.invalidate(merged.id)
        tx.archive(merged.id)
        tx.move(first.id, "mid")
    with store.commit(message="forget", author="t", now=later(23)) as tx:
        tx.purge(step.id)
    purges = {c.memory_id: c.detail for c in tx.result.changes if c.op == "purge"}
    assert purges == {
        step.id: {},
        first.id: {"derived_from": step.id},
        merged.id: {"derived_from": first.id},
    }
    assert store.get(second.id).status == "superseded"  # merged from, not built from the step
    assert leaks(store, [step.id, first.id, merged.id], secret) == []
    assert rows_holding(store, secret) == []
    assert store.check().ok

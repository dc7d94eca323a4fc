"""Purge reaches what was derived from the purged memory: summaries keep none of its text."""

from __future__ import annotations

import json
from datetime import timedelta

from memcommit.compaction import Compactor
from memcommit.store.provenance import derived, sources

SECRET = "hunter2"
HOUR = timedelta(hours=1)


def compacted_trace(store, now, task="deploy service"):
    """A finished trace with a secret step, compacted: (secret step, its summary)."""
    with store.commit(now=now) as tx:
        trace = tx.begin_trace(task, tenant="A")
        tx.step(trace, "checked the dashboards")
        secret = tx.step(trace, f"password is {SECRET}")
        tx.finish(trace)
    (summary,) = Compactor(store).compact(now=now + HOUR).summaries
    assert SECRET in summary.content + json.dumps(summary.metadata)
    return secret, summary


def leaks(store, ids):
    """Versions of ``ids`` that still hold the secret anywhere."""
    return [
        v for i in ids for v in store.history(i) if SECRET in v.content + json.dumps(v.metadata)
    ]


def test_purging_a_compacted_step_purges_its_summary_in_the_same_commit(store, now):
    secret, summary = compacted_trace(store, now)
    with store.commit(now=now + 2 * HOUR) as tx:
        unrelated = tx.add("unrelated", tenant="A", metadata={"provenance": {"built_from": ["x"]}})
        tx.purge(secret.id)
    purges = [c for c in tx.result.changes if c.op == "purge"]
    assert [(c.memory_id, c.detail) for c in purges] == [
        (secret.id, {}),
        (summary.id, {"derived_from": secret.id}),
    ]
    assert store.get(summary.id).status == "purged"
    assert leaks(store, [secret.id, summary.id]) == []
    assert store.get(unrelated.id).status == "active"
    assert store.check().ok


def test_summaries_of_summaries_and_consolidations_go_too(store, now):
    secret, first = compacted_trace(store, now)
    _, second = compacted_trace(store, now + 2 * HOUR)
    merged = Compactor(store).merge(now=now + 4 * HOUR).summaries[0]  # folds first and second
    with store.commit(now=now + 4 * HOUR) as tx:
        consolidated = tx.add(  # as TieredMemory's consolidation records it
            "segment summary", tenant="A", kind="summary", metadata={"consolidated": [merged.id]}
        )
        theirs = tx.add("B's note", tenant="B", metadata={"consolidated": [secret.id]})
    with store.commit(now=now + 5 * HOUR) as tx:
        tx.purge(secret.id)
    purged = {c.memory_id: c.detail.get("derived_from") for c in tx.result.changes}
    assert purged == {
        secret.id: None,
        first.id: secret.id,
        merged.id: first.id,
        consolidated.id: merged.id,
    }
    assert store.get(second.id).content  # merged from, not derived from the secret
    assert store.get(theirs.id).status == "active"  # another tenant's memory is not touched
    assert leaks(store, [first.id, merged.id]) == []
    assert store.check().ok


def test_a_summary_made_in_the_purging_commit_goes_too(store, now):
    with store.commit(now=now) as tx:
        m = tx.add(f"the password is {SECRET}", tenant="A")
        s = tx.add(
            f"summary: {SECRET}", tenant="A", kind="summary",
            metadata={"provenance": {"built_from": [m.id]}},
        )  # fmt: skip
        tx.purge(m.id)
    assert leaks(store, [m.id, s.id]) == [] and store.get(s.id).status == "purged"


def test_a_purge_through_a_view_reaches_derived_memories_of_that_tenant(store, now):
    secret, summary = compacted_trace(store, now)
    with store.tenant("A").commit(now=now + 2 * HOUR) as tx:
        tx.purge(secret.id)
    assert store.get(summary.id).status == "purged"


def test_provenance_links_are_read_from_both_formats_and_followed_through():
    assert sources(None) == [] and sources({"provenance": "odd"}) == []
    assert sources({"provenance": {"built_from": ["a", 3, "b"]}, "consolidated": ["c"]}) == [
        "a", "b", "c",
    ]  # fmt: skip
    candidates = [
        ("s1", {"provenance": {"built_from": ["x"]}}),
        ("s2", {"consolidated": ["s1", "x"]}),
        ("s3", {"provenance": {"built_from": ["s2"]}}),
        ("loop", {"consolidated": ["loop", "s3"]}),
        ("other", {"consolidated": ["y"]}),
    ]
    assert derived(["x"], candidates) == [("s1", "x"), ("s2", "x"), ("s3", "s2"), ("loop", "s3")]

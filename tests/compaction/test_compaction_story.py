"""The end-to-end story: a trace finished, compacted, and its summary recalled."""

from __future__ import annotations

import pytest
from compaction_store import add_trace, later

import memcommit
from memcommit.compaction import Compactor
from memcommit.recall import Words, recall


@pytest.fixture
def store(tmp_path):
    s = memcommit.open(str(tmp_path / "mem.db"))
    yield s
    s.close()


def test_a_compacted_trace_is_recalled_through_its_summary(store) -> None:
    lines = [
        "Built container image billing:42",
        "Ran the migration on the billing database",
        "Rolled out to three pods; health checks green",
    ]
    trace_id = add_trace(store, "Deploy the billing service", lines=lines, tenant="acme")
    add_trace(store, "Deploy the billing service", tenant="globex", lines=["globex secret step"])
    with store.commit(message="other memories", now=later(1)) as tx:
        tx.add("The office plants need water on Mondays", tenant="acme")
        tx.add("Lunch is at noon", tenant="acme")

    result = Compactor(store.tenant("acme")).compact(now=later(2))
    (summary,) = result.summaries

    ctx = recall(store, "how did we deploy the billing service", tenant="acme", now=later(3))
    selected = [m.id for m in ctx.selected]
    assert summary.id in selected and trace_id not in selected  # the summary holds the task
    assert store.trace(trace_id).root.tier == "archive"  # the root stays findable
    rows = {row.memory.id: row for row in ctx.rows}
    for step_id in result.moved:  # the raw steps are archived, so recall skips them
        assert rows[step_id].outcome == "excluded"
        assert rows[step_id].reason == "archived"
    assert all(row.memory.tenant == "acme" for row in ctx.rows)

    # The summary alone carries the task and its key lines within a small budget.
    small = recall(
        store, "billing database migration", tenant="acme", budget=Words(80), now=later(3)
    )
    assert small.selected[0].id == summary.id
    assert "Ran the migration on the billing database" in small.render()
    assert trace_id in summary.metadata["provenance"]["trace_ids"]

"""Recall never packs a compacted task next to its summary (defect 8)."""

from __future__ import annotations

from datetime import timedelta

from memcommit import Compactor, TieredMemory, Words
from memcommit.compaction import outline
from poolsplit import Pool


def test_a_compacted_task_loads_once_as_its_summary(make_store, now):
    agent = make_store().tenant("acme")
    with agent.commit(message="learn", author="agent", now=now) as tx:
        tx.add("Never rerun a flaky test blindly: read its logs first.",
               kind="correction", always=True)  # fmt: skip
    with agent.commit(message="task", author="agent", now=now) as tx:
        task = tx.begin_trace("Fix the flaky checkout test")
        tx.step(task, "test_refund_timeout failed once in five runs", kind="event")
        tx.finish(task, status="finished")
    Compactor(agent).compact(now=now + timedelta(minutes=1))

    ctx = agent.recall(
        "why did the checkout test fail",
        budget=Words(200),
        pools=[Pool("corrections", 0, 0, ("correction",)), Pool("knowledge", 200, 5)],
        now=now + timedelta(minutes=2),
    )
    assert ctx.render().count("Fix the flaky checkout test") == 1
    assert [m.kind for m in ctx.selected if m.kind != "correction"] == ["summary"]
    assert agent.trace(task).root.tier == "archive"


def test_the_outline_counts_one_step_in_the_singular(make_store, now):
    agent = make_store().tenant("acme")
    with agent.commit(message="task", author="agent", now=now) as tx:
        task = tx.begin_trace("Rotate the staging keys")
        tx.step(task, "rotated them", kind="event")
        tx.finish(task, status="finished")
    result = Compactor(agent).compact(now=now + timedelta(minutes=1))
    summary = result.summaries[0]
    assert "finished after 1 step" in summary.content
    assert "1 steps" not in summary.content
    assert outline(agent.trace(task))["steps"] == 1


def test_touching_a_compacted_task_counts_its_summary_and_pages_nothing_in(make_store, now):
    """The agent loop's case: members used before compaction are touched after it."""
    agent = make_store().tenant("acme")
    with agent.commit(message="task", author="agent", now=now) as tx:
        task = tx.begin_trace("Deploy the billing service")
        step = tx.step(task, "ran the billing tests: 212 passed", kind="event")
        tx.finish(task, status="finished")
    summary = Compactor(agent).compact(now=now + timedelta(minutes=1)).summaries[0]
    tiers = TieredMemory(agent, capacity=8)

    used = tiers.touch([task, step.id], now=now + timedelta(minutes=2))

    assert used.paged_in == [] and used.warm_hits == [summary.id, summary.id]
    assert {agent.get(task).tier, agent.get(step.id).tier} == {"archive"}
    ctx = agent.recall("deploy billing tests", now=now + timedelta(minutes=3))
    assert [m.id for m in ctx.selected] == [summary.id]


def test_a_member_whose_summary_no_longer_holds_pages_in_as_usual(make_store, now):
    agent = make_store().tenant("acme")
    with agent.commit(message="task", author="agent", now=now) as tx:
        task = tx.begin_trace("Deploy the billing service")
        tx.finish(task, status="finished")
    summary = Compactor(agent).compact(now=now + timedelta(minutes=1)).summaries[0]
    with agent.commit(message="drop the summary", now=now + timedelta(minutes=2)) as tx:
        tx.invalidate(summary.id)

    used = TieredMemory(agent, capacity=8).touch([task], now=now + timedelta(minutes=3))

    assert used.paged_in == [task]

"""The newest fact that still holds wins by default where agents read: recall, CLI, MCP agree."""

from __future__ import annotations

from datetime import timedelta

from memcommit.cli import main
from memcommit.interfaces.agent import AgentMemory
from memcommit.recall import recall


def test_a_newer_memory_with_the_same_key_hides_the_older_in_recall(make_store, now):
    store = make_store()
    team = store.tenant("team-a")
    with team.commit(message="tea", now=now) as tx:
        tea = tx.add("The user drinks tea every morning", key="drink")
    before = team.head
    with team.commit(message="coffee", now=now + timedelta(minutes=1)) as tx:
        coffee = tx.add("The user drinks coffee every morning", key="drink")
    later = now + timedelta(hours=1)
    ctx = recall(team, "what does the user drink", now=later, explain=True)
    assert [m.id for m in ctx.selected] == [coffee.id]
    assert {r.memory.id: r.reason for r in ctx.rows}[tea.id] == "superseded"
    every = recall(team, "what does the user drink", now=later, latest_per_key=False)
    assert {m.id for m in every.selected} == {tea.id, coffee.id}
    then = recall(team, "what does the user drink", now=later, as_of=before.seq)
    assert [m.id for m in then.selected] == [tea.id]  # as_of: tea was the newest then
    assert [v.content for v in team.history(tea.id)] == ["The user drinks tea every morning"]


def test_the_newer_fact_of_another_tenant_hides_nothing(make_store, now):
    store = make_store()
    with store.commit(message="two tenants", now=now) as tx:
        mine = tx.add("The user drinks tea", key="drink", tenant="team-a")
        tx.add("The user drinks coffee", key="drink", tenant="team-b")
    ctx = recall(store.tenant("team-a"), "user drinks", now=now + timedelta(hours=1))
    assert [m.id for m in ctx.selected] == [mine.id]


def test_the_cli_and_its_help_say_the_same(cli):
    cli("add", "The user prefers tea", "--key", "drink", "-m", "tea")
    cli("add", "The user prefers coffee", "--key", "drink", "-m", "coffee")
    query = "what does the user prefer"
    latest = cli.json("recall", query)
    assert [m["content"] for m in latest["selected"]] == ["The user prefers coffee"]
    both = cli.json("recall", query, "--every-key-version")
    assert len(both["selected"]) == 2
    then = cli.json("recall", query, "--as-of", "1")
    assert [m["content"] for m in then["selected"]] == ["The user prefers tea"]
    help_text = " ".join(cli.runner.invoke(main, ["recall", "--help"]).output.split())
    assert "The newest fact that still holds wins by default" in help_text
    add_help = " ".join(cli.runner.invoke(main, ["add", "--help"]).output.split())
    assert "A newer memory with the same key replaces this one in recall" in add_help


def test_mcp_recall_defaults_to_the_latest_fact(make_store):
    store = make_store()
    tools = AgentMemory(store, "team-a")
    tools.remember("The user prefers tea", key="drink")
    tools.remember("The user prefers coffee", key="drink")
    found = tools.recall("what does the user prefer")
    assert [m["content"] for m in found["selected"]] == ["The user prefers coffee"]
    every = tools.recall("what does the user prefer", latest_per_key=False)
    assert len(every["selected"]) == 2


def test_invalidating_the_newest_fact_brings_back_the_one_it_replaced(make_store, now):
    store = make_store()
    team = store.tenant("team-a")
    with team.commit(message="tea", now=now) as tx:
        tea = tx.add("The user drinks tea every morning", key="drink")
    with team.commit(message="coffee", now=now + timedelta(minutes=1)) as tx:
        coffee = tx.add("The user drinks coffee every morning", key="drink")
    with team.commit(message="juice", now=now + timedelta(minutes=2)) as tx:
        juice = tx.add("The user drinks juice every morning", key="drink",
                       valid_to=now + timedelta(minutes=30))  # fmt: skip
    with team.commit(message="coffee was wrong", now=now + timedelta(minutes=3)) as tx:
        tx.invalidate(coffee.id)
    query, later = "what does the user drink", now + timedelta(hours=1)
    ctx = recall(team, query, now=later, explain=True)
    assert [m.id for m in ctx.selected] == [tea.id]  # juice expired, coffee invalidated
    reasons = {r.memory.id: r.reason for r in ctx.rows}
    assert reasons == {tea.id: None, coffee.id: "no_longer_holds", juice.id: "no_longer_holds"}
    soon = recall(team, query, now=now + timedelta(minutes=10), explain=True)
    assert [m.id for m in soon.selected] == [juice.id]  # while juice holds, it wins
    assert {r.memory.id: r.reason for r in soon.rows}[tea.id] == "superseded"
    history = recall(team, query, now=later, live=False, explain=True)
    assert [m.id for m in history.selected] == [juice.id]  # live=False: the newest, as stored
    tools = AgentMemory(store, "team-a")  # MCP's recall tool: the same rule
    assert [m["content"] for m in tools.recall(query)["selected"]] == [tea.content]


def test_the_cli_recalls_the_fact_an_invalidation_brings_back(cli):
    tea = cli.json("add", "The user prefers tea", "--key", "drink")["memory"]["id"]
    coffee = cli.json("add", "The user prefers coffee", "--key", "drink")["memory"]["id"]
    cli("invalidate", coffee)
    found = cli.json("recall", "what does the user prefer", "--explain")
    assert [m["id"] for m in found["selected"]] == [tea]
    assert {r["id"]: r["reason"] for r in found["rows"]}[coffee] == "no_longer_holds"

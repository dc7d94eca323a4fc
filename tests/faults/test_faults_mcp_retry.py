"""MCP write tools are idempotent under retry: one request id, one write."""

from __future__ import annotations

import pytest

from memcommit.errors import InvalidInput
from memcommit.interfaces.agent import REQUESTS, AgentMemory


@pytest.fixture
def agent(make_store):
    return AgentMemory(make_store(), "acme")


def test_a_retried_remember_writes_once_and_answers_the_same(agent):
    first = agent.remember("Deploys happen on weekdays.", request_id="req-1")
    again = agent.remember("Deploys happen on weekdays.", request_id="req-1")
    assert again == first
    assert len(agent.view.find()) == 1
    assert len(agent.view.log()) == 1
    other = agent.remember("Deploys happen on weekdays.", request_id="req-2")
    assert other["id"] != first["id"]
    assert len(agent.view.find()) == 2


def test_without_a_request_id_every_call_writes(agent):
    agent.remember("Twice on purpose.")
    agent.remember("Twice on purpose.")
    assert len(agent.view.find()) == 2


def test_every_write_tool_is_idempotent(agent):
    calls = [
        lambda: agent.correct("Never force-push to main.", request_id="c"),
        lambda: agent.begin_task("Fix the build", request_id="b"),
    ]
    answers = [call() for call in calls]
    trace = answers[1]["trace_id"]
    step = lambda: agent.add_step(trace, "found the cause", request_id="s")  # noqa: E731
    finish = lambda: agent.finish_task(trace, request_id="f")  # noqa: E731
    answers += [step(), finish()]
    seen = len(agent.view.log())
    assert [call() for call in (*calls, step, finish)] == answers
    assert len(agent.view.log()) == seen
    memory_id = agent.remember("to be purged", request_id="r")["id"]
    forget = lambda: agent.forget(memory_id, "purge", confirm=memory_id, request_id="p")  # noqa: E731
    assert forget() == forget()
    assert agent.view.log()[0].message == f"forget (purge) {memory_id}"


def test_request_ids_are_per_tenant(make_store):
    store = make_store()
    a, b = AgentMemory(store, "team-a"), AgentMemory(store, "team-b")
    first = a.remember("A's fact.", request_id="same")
    second = b.remember("B's fact.", request_id="same")
    assert first["id"] != second["id"]
    assert [m.content for m in b.view.find()] == ["B's fact."]


def test_a_refused_call_stores_no_answer(agent):
    with pytest.raises(InvalidInput):
        agent.remember("bad importance", importance=2.0, request_id="req-x")
    assert agent.remember("good", request_id="req-x")["version"] == 1
    assert len(agent.view.find()) == 1


def test_a_reused_request_id_for_other_arguments_is_refused_naming_it(agent):
    coffee = agent.remember("The user drinks coffee.", request_id="r1")
    with pytest.raises(InvalidInput) as refused:
        agent.remember("The user drinks tea.", request_id="r1")
    assert refused.value.field == "request_id"
    assert refused.value.value == "r1"
    assert "remember" in str(refused.value)
    assert [m.content for m in agent.view.find()] == ["The user drinks coffee."]
    assert agent.remember("The user drinks coffee.", request_id="r1") == coffee


def test_a_reused_request_id_across_tools_is_refused_and_writes_nothing(agent):
    memory_id = agent.remember("The staging password is swordfish.", request_id="r")["id"]
    with pytest.raises(InvalidInput, match="request_id='r'"):
        agent.forget(memory_id, "purge", confirm=memory_id, request_id="r")
    assert agent.view.get(memory_id).content == "The staging password is swordfish."
    assert agent.view.get(memory_id).status == "active"
    trace = agent.begin_task("Fix the build", request_id="t")["trace_id"]
    seen = agent.view.head_seq
    with pytest.raises(InvalidInput, match=r"request_id='t'.*begin_task"):
        agent.add_step(trace, "found the cause", request_id="t")
    with pytest.raises(InvalidInput, match="request_id='t'"):
        agent.finish_task(trace, request_id="t")
    assert agent.view.head_seq == seen
    assert agent.view.trace(trace).status == "open"
    assert agent.view.trace(trace).steps == ()


def test_stored_answers_are_kept_for_the_newest_request_ids_only(make_store):
    agent = AgentMemory(make_store(), "acme", kept_answers=3)
    answers = {f"r{n}": agent.remember(f"note {n}", request_id=f"r{n}") for n in range(5)}
    kept = [rid for rid in answers if agent.view.state_get(REQUESTS, rid) is not None]
    assert kept == ["r2", "r3", "r4"]
    for rid in ("r2", "r3", "r4"):  # still answered: a retry writes nothing
        assert agent.remember(f"note {rid[1:]}", request_id=rid) == answers[rid]
    assert len(agent.view.find()) == 5
    again = agent.remember("note 0", request_id="r0")  # forgotten: a new write
    assert again["id"] != answers["r0"]["id"]
    assert len(agent.view.find()) == 6


@pytest.mark.parametrize("kept", [0, -1, 2.5, True, "3"])
def test_kept_answers_must_be_a_positive_integer(make_store, kept):
    with pytest.raises(InvalidInput, match="kept_answers"):
        AgentMemory(make_store(), "acme", kept_answers=kept)

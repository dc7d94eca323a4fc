"""MCP write tools are idempotent under retry: one request id, one write."""

from __future__ import annotations

import pytest

from memcommit.errors import InvalidInput
from memcommit.interfaces.agent import AgentMemory


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

"""MemcommitSession beyond openai-agents' suite: traces, history, compaction, recall, tenants."""

from __future__ import annotations

import pytest
from upstream import require

import memcommit
from memcommit.errors import InvalidInput, StoreClosed
from memcommit.recall import RecallOptions

oa = require("memcommit.integrations.openai_agents")
agents = require("agents")


@pytest.fixture
def memory(make_store):
    return make_store()


def user(text):
    return {"role": "user", "content": text}


async def test_a_session_is_a_trace_and_items_are_steps(memory):
    session = oa.MemcommitSession("chat-1", memory, tenant="acme")
    await session.add_items([user("hello"), {"role": "assistant", "content": "hi there"}])
    trace = session.trace()
    assert trace.status == "open" and trace.root.session == "chat-1"
    assert [s.content for s in trace.steps] == ["user: hello", "assistant: hi there"]
    assert [s.metadata["openai_agents"] for s in trace.steps] == await session.get_items()


async def test_pop_and_clear_keep_history(memory):
    session = oa.MemcommitSession("chat-1", memory)
    await session.add_items([user("one"), user("two"), user("three")])
    assert await session.pop_item() == user("three")
    assert await session.get_items() == [user("one"), user("two")]
    await session.clear_session()
    assert await session.get_items() == []
    assert [s.status for s in session.trace().steps] == ["invalidated"] * 3
    assert await session.pop_item() is None


async def test_another_process_continues_the_same_session(tmp_path):
    path = tmp_path / "memory.db"
    first = oa.MemcommitSession("chat-1", str(path))
    await first.add_items([user("remember the blue door")])
    trace_id = first.trace_id
    first.close()
    again = oa.MemcommitSession("chat-1", str(path))
    await again.add_items([user("and the red one")])
    assert await again.get_items() == [user("remember the blue door"), user("and the red one")]
    assert again.trace_id == trace_id
    again.close()


async def test_a_finished_session_compacts_into_a_summary(memory, now):
    session = oa.MemcommitSession("chat-1", memory, tenant="acme")
    with pytest.raises(InvalidInput):
        session.compact()  # nothing to compact yet
    await session.add_items([user("the deploy failed on a missing migration")])
    assert session.compact().traces == ()  # an open session is still being worked on
    session.finish()
    with pytest.raises(InvalidInput):
        await session.add_items([user("too late")])
    result = session.compact()
    assert result.traces == (session.trace_id,)
    (summary,) = result.summaries
    assert summary.kind == "summary" and "migration" in summary.content


async def test_sessions_and_tenants_are_apart(memory):
    a = oa.MemcommitSession("chat", memory, tenant="acme")
    b = oa.MemcommitSession("chat", memory, tenant="globex")
    c = oa.MemcommitSession("other", memory, tenant="acme")
    await a.add_items([user("acme only")])
    assert await b.get_items() == []
    assert await c.get_items() == []
    assert await b.pop_item() is None
    await b.clear_session()
    assert await a.get_items() == [user("acme only")]


async def test_bad_items_and_closed_sessions_are_typed_errors(memory):
    session = oa.MemcommitSession("chat", memory)
    with pytest.raises(InvalidInput) as err:
        await session.add_items([user("fine"), "not an item"])
    assert err.value.field == "items"
    assert await session.get_items() == []  # the good item did not land either
    with pytest.raises(InvalidInput):
        await session.add_items([{"role": "user", "content": object()}])
    session.close()
    with pytest.raises(StoreClosed):
        await session.get_items()
    assert not memory.closed  # a store the caller passed stays open


async def test_recall_instructions_feed_the_agent(memory, now):
    view = memory.tenant("acme")
    with view.commit(message="learn") as tx:
        tx.add("The user's name is Ada.", kind="fact")
        tx.add("Always answer in French.", kind="correction", always=True)
    instructions = oa.recall_instructions(
        view, "You are a helpful assistant.", query="what is the user's name", now=now
    )
    text = instructions(None, None)
    assert text.startswith("You are a helpful assistant.")
    assert "The user's name is Ada." in text and "Always answer in French." in text

    from agents.testing import ScriptedModel, assistant_message

    model = ScriptedModel()
    model.enqueue([assistant_message("Bonjour Ada")])
    agent = agents.Agent(name="helper", instructions=instructions, model=model)
    agents.set_tracing_disabled(True)
    result = await agents.Runner.run(agent, "hello", session=oa.MemcommitSession("s", memory))
    assert result.final_output == "Bonjour Ada"
    assert "The user's name is Ada." in model.last_call.system_instructions


def test_recall_instructions_take_options_checked_when_made(memory, now):
    view = memory.tenant("acme")
    with view.commit(message="learn") as tx:
        tx.add("The user's name is Ada.", kind="fact")
        tx.add("The user lives in Lyon.", kind="fact")
    options = RecallOptions(max_records=1, now=now)
    instructions = oa.recall_instructions(view, "Base.", query="the user", options=options)
    expected = view.recall("the user", options).render()
    assert instructions(None, None) == f"Base.\n\nWhat you remember:\n{expected}"
    assert expected.count("The user") == 1
    with pytest.raises(InvalidInput) as err:
        oa.recall_instructions(view, "Base.", options=options, max_records=-1)
    assert err.value.field == "max_records"


def test_memcommit_imports_without_the_frameworks():
    import subprocess
    import sys

    code = (
        "import sys, memcommit, memcommit.integrations, memcommit.integrations.filters;"
        "bad = [m for m in ('langgraph', 'langchain_core', 'agents') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert memcommit.__version__


@pytest.mark.parametrize("items", [None, 5, "hello", {"role": "user"}])
async def test_items_that_are_not_a_list_are_typed_errors(memory, items):
    session = oa.MemcommitSession("chat", memory)
    with pytest.raises(InvalidInput) as err:
        await session.add_items(items)
    assert err.value.field == "items"
    assert session.trace_id is None


@pytest.mark.parametrize("limit", ["3", 2.5, True])
async def test_a_limit_that_is_not_an_int_is_a_typed_error(memory, limit):
    session = oa.MemcommitSession("chat", memory)
    await session.add_items([user("one")])
    with pytest.raises(InvalidInput) as err:
        await session.get_items(limit=limit)
    assert err.value.field == "limit"


async def test_pop_and_clear_of_an_empty_session_land_no_commit(memory):
    fresh = oa.MemcommitSession("fresh", memory)
    emptied = oa.MemcommitSession("emptied", memory)
    await emptied.add_items([user("one")])
    await emptied.clear_session()
    seq = memory.head_seq  # the store's newest commit, empty ones included
    for session in (fresh, emptied):
        assert await session.pop_item() is None
        await session.clear_session()
    assert memory.head_seq == seq

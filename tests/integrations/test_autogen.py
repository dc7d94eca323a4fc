"""MemcommitMemory beyond autogen-core's tests: equal to ListMemory on a scenario, recall, tenants.

The differential test runs one scenario against AutoGen's own ListMemory and a
chronological MemcommitMemory and requires equal results at every step.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest
from upstream import require

from memcommit.errors import InvalidInput, StoreClosed

ag = require("memcommit.integrations.autogen")
from autogen_core import Image  # noqa: E402
from autogen_core.memory import ListMemory, Memory, MemoryContent, MemoryMimeType  # noqa: E402
from autogen_core.model_context import BufferedChatCompletionContext  # noqa: E402
from autogen_core.models import UserMessage  # noqa: E402

TEXT, JSON, MD, BINARY = (
    MemoryMimeType.TEXT,
    MemoryMimeType.JSON,
    MemoryMimeType.MARKDOWN,
    MemoryMimeType.BINARY,
)


def text(content, **metadata):
    return MemoryContent(content=content, mime_type=TEXT, metadata=metadata or None)


@pytest.fixture
def memory(make_store):
    return make_store()


async def scenario(memory: Memory) -> list:
    """Every observable answer of one memory through a run of adds, queries and clears."""
    seen = []

    async def observe(query):
        seen.append([c.model_dump() for c in (await memory.query(query)).results])
        context = BufferedChatCompletionContext(buffer_size=5)
        await context.add_message(UserMessage(content=str(query), source="user"))
        updated = await memory.update_context(context)
        messages = await context.get_messages()
        seen.append([c.model_dump() for c in updated.memories.results])
        seen.append(len(messages))
        for content in updated.memories.results:
            if isinstance(content.content, str):  # texts are quoted as they are by both
                assert content.content in messages[-1].content

    await observe("anything")
    await memory.add(text("Ada prefers metric units.", source="chat"))
    await memory.add(MemoryContent(content={"city": "Lyon", "since": 2021}, mime_type=JSON))
    await memory.add(MemoryContent(content="# Notes\n- tea, no sugar", mime_type=MD))
    await memory.add(MemoryContent(content=b"\x00\x01raw", mime_type=BINARY, metadata={"n": 1}))
    await observe("units")
    await observe(MemoryContent(content="where does Ada live", mime_type=TEXT))
    await memory.clear()
    await observe("units")
    await memory.add(text("Ada moved to Oslo."))
    await observe("")
    return seen


async def test_equal_to_list_memory_on_one_scenario(memory):
    mine = ag.MemcommitMemory(memory, name="ada", k=None, chronological=True, explain=False)
    assert await scenario(mine) == await scenario(ListMemory(name="ada"))


@pytest.fixture
def preferences(memory, now):
    return ag.MemcommitMemory(memory, tenant="acme", name="preferences", k=2, clock=lambda: now)


async def fill(memory):
    await memory.add(text("Ada prefers metric units."))
    await memory.add(text("Ada drinks tea without sugar."))
    await memory.add(text("The deploy runs on Tuesdays."))


async def test_query_is_recall_with_its_explanation(preferences, now):
    await fill(preferences)
    results = (await preferences.query("sugar in the tea")).results
    assert [c.content for c in results] == ["Ada drinks tea without sugar."]
    explained = results[0].metadata["memcommit"]
    assert explained["score"] > 0 and explained["unit"] in ("words", "tokens")
    ctx = preferences.recall("sugar in the tea")
    assert {r.memory.content: r.reason for r in ctx.rows}["The deploy runs on Tuesdays."] == (
        "no_lexical_match"
    )


async def test_k_caps_and_a_call_can_override_it(preferences):
    await fill(preferences)
    assert len((await preferences.query("Ada")).results) == 2
    assert len((await preferences.query("Ada", max_records=1)).results) == 1


async def test_update_context_recalls_for_the_latest_message(preferences):
    await fill(preferences)
    context = BufferedChatCompletionContext(buffer_size=5)
    await context.add_message(UserMessage(content="hello", source="user"))
    await context.add_message(UserMessage(content="when is the deploy", source="user"))
    updated = await preferences.update_context(context)
    assert [c.content for c in updated.memories.results] == ["The deploy runs on Tuesdays."]
    assert (await context.get_messages())[-1].content == (
        "What you remember:\n1. The deploy runs on Tuesdays."
    )


async def test_tenants_and_names_never_see_each_other(memory, preferences):
    await fill(preferences)
    for other in (
        ag.MemcommitMemory(memory, tenant="globex", name="preferences", chronological=True),
        ag.MemcommitMemory(memory, tenant="acme", name="other", chronological=True),
    ):
        assert (await other.query("Ada tea deploy")).results == []
        await other.clear()
    assert len((await preferences.query("Ada")).results) == 2


async def test_clear_keeps_history(preferences):
    await fill(preferences)
    await preferences.clear()
    assert (await preferences.query("Ada")).results == []
    found = preferences.view.find(scopes=["preferences"], live=False)
    assert [m.status for m in found] == ["invalidated"] * 3


async def test_scopes_are_the_memorys_to_bind(memory, preferences):
    """No recall option reaches another name's contents: ``scopes`` is refused, as a tenant is."""
    await fill(preferences)
    private = ag.MemcommitMemory(memory, tenant="acme", name="private")
    await private.add(text("Ada's private diary about tea."))
    for scopes in (None, ["private"]):
        with pytest.raises(InvalidInput) as raised:
            ag.MemcommitMemory(memory, name="x", recall_options={"scopes": scopes})
        assert raised.value.field == "scopes"
        with pytest.raises(InvalidInput) as raised:
            await preferences.query("tea", scopes=scopes)
        assert raised.value.field == "scopes"
    with pytest.raises(InvalidInput) as raised:
        await preferences.query("tea", tenant="globex")
    assert raised.value.field == "tenant"


async def test_clear_invalidates_what_holds_as_its_commit_lands(make_store, before_commit):
    ours, theirs = (ag.MemcommitMemory(make_store(), name="prefs") for _ in range(2))
    await ours.add(text("Ada prefers metric units."))
    before_commit(ours, lambda: asyncio.run(theirs.clear()))
    await ours.clear()
    (held,) = ours.view.find(scopes=["prefs"], live=False)
    assert [v.status for v in ours.view.history(held.id)] == ["active", "invalidated"]


#: Metadata named "autogen" that no MemcommitMemory wrote (as MCP's remember or the API may).
FOREIGN = [
    "x",
    {"text": "Ada drinks tea"},  # no MIME type
    {"mime_type": "text/plain", "metadata": None},  # no value
    {"mime_type": "text/plain", "metadata": None, "text": "tea", "json": {"a": 1}},  # two
    {"mime_type": "text/plain", "metadata": None, "text": "tea", "colour": "red"},
    {"mime_type": "text/plain", "metadata": "none", "text": "tea"},
    {"mime_type": "application/octet-stream", "metadata": None, "bytes": "not base64!"},
    {"mime_type": "image", "metadata": None, "image": "bm90IGFuIGltYWdl"},  # "not an image"
]


async def test_memories_the_memory_did_not_write_are_no_contents(memory, preferences, now):
    await fill(preferences)
    with memory.tenant("acme").commit(message="remember, through MCP", now=now) as tx:
        for mark in [*FOREIGN, None]:
            metadata = {} if mark is None else {"autogen": mark}
            tx.add("Ada tea sugar, tea sugar", scope="preferences", metadata=metadata)
    results = (await preferences.query("Ada tea sugar")).results  # k=2, all foreign ones first
    assert [c.content for c in results] == [
        "Ada drinks tea without sugar.",
        "Ada prefers metric units.",
    ]
    assert len(preferences.recall("Ada tea sugar").selected) == len(FOREIGN) + 1 + 2
    context = BufferedChatCompletionContext(buffer_size=5)
    await context.add_message(UserMessage(content="Ada tea sugar", source="user"))
    updated = await preferences.update_context(context)
    assert [c.content for c in updated.memories.results] == [c.content for c in results]
    await preferences.clear()
    assert (await preferences.query("tea sugar")).results == []
    held = preferences.view.find(scopes=["preferences"])
    assert len(held) == len(FOREIGN) + 1 and all(m.version == 1 for m in held)  # untouched


async def test_contents_read_back_as_added(memory):
    every = ag.MemcommitMemory(memory, k=None, chronological=True, explain=False)
    picture = Image.from_base64(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
    )
    await every.add(MemoryContent(content=picture, mime_type=MemoryMimeType.IMAGE))
    await every.add(MemoryContent(content="x", mime_type="text/x-custom", metadata={"a": [1]}))
    image, custom = (await every.query("")).results
    assert image.content.to_base64() == picture.to_base64()
    assert custom == MemoryContent(content="x", mime_type="text/x-custom", metadata={"a": [1]})


async def test_bad_input_is_a_typed_error_and_lands_nothing(preferences):
    head = preferences.view.head_seq
    with pytest.raises(InvalidInput) as raised:
        await preferences.query("Ada", top=3)
    assert raised.value.field == "top"
    with pytest.raises(InvalidInput):
        await preferences.add(text("   "))
    with pytest.raises(InvalidInput):
        await preferences.add("not a MemoryContent")
    with pytest.raises(InvalidInput):
        await preferences.add(text("fine text", when=object()))  # metadata must be JSON
    assert preferences.view.head_seq == head
    with pytest.raises(InvalidInput):
        ag.MemcommitMemory(preferences.view, name="x")


async def test_dump_and_load_the_component(tmp_path):
    path = str(tmp_path / "memory.db")
    first = ag.MemcommitMemory(path, tenant="acme", name="notes", k=3)
    await first.add(text("Ada prefers metric units."))
    config = first.dump_component()
    assert config.provider == "memcommit.integrations.autogen.MemcommitMemory"
    again = Memory.load_component(config)
    assert isinstance(again, ag.MemcommitMemory) and (again.tenant, again.k) == ("acme", 3)
    assert [c.content for c in (await again.query("metric units")).results] == [
        "Ada prefers metric units."
    ]
    await first.close()
    await again.close()


async def test_a_memory_over_a_passed_store_is_not_dumped_and_close_leaves_it_open(memory):
    mine = ag.MemcommitMemory(memory, name="notes")
    with pytest.raises(InvalidInput) as raised:
        mine.dump_component()
    assert raised.value.field == "store"
    await mine.close()
    with pytest.raises(StoreClosed):
        await mine.query("anything")
    assert memory.tenant("default").find() == []  # the store itself is still open


def test_a_missing_autogen_is_a_typed_error_naming_the_extra():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["autogen_core"] = None  # as if autogen-core were not installed
        from memcommit.errors import MissingExtra
        try:
            import memcommit.integrations.autogen
        except MissingExtra as exc:
            print(exc.field, exc.value, isinstance(exc, ImportError), exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("extra autogen True ")
    assert "pip install 'memcommit[autogen]'" in done.stdout

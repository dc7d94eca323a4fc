"""The MCP server's optional capabilities, driven by the SDK's own client over real HTTP.

Logging levels, argument completion, prompts, and resource subscriptions with
their update notifications: on the handshake-era protocol (``mode="legacy"``,
``resources/subscribe``) and on 2026-07-28 (``subscriptions/listen``).
"""

from __future__ import annotations

from unittest.mock import ANY

import anyio
import pytest
from interfaces_mcp_client import call, http_server, run_async
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import PromptReference, ResourceTemplateReference

import memcommit
from memcommit.model import KINDS

TENANT = "team-a"

#: subscribe and setLevel are the handshake-era methods the conformance suite calls.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


class Notes:
    """What a legacy client received: log messages and resource updates."""

    def __init__(self) -> None:
        self.logs: list[tuple[str, object]] = []
        self.updated: list[str] = []

    async def on_log(self, params) -> None:
        self.logs.append((params.level, params.data))

    async def on_message(self, message) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            self.updated.append(str(root.params.uri))


def legacy(url: str, notes: Notes) -> Client:
    """A handshake-era client (the conformance suite's protocol) recording notifications."""
    return Client(
        url,
        mode="legacy",
        cache=None,
        logging_callback=notes.on_log,
        message_handler=notes.on_message,
    )


@pytest.fixture
def served(tmp_path):
    path = tmp_path / "agent.db"
    store = memcommit.open(str(path))
    with store.commit(message="other tenant", author="b") as tx:
        secret = tx.add("team-b secret", tenant="team-b", scope="vault")
    store.close()
    with http_server(path, TENANT) as url:
        yield url, secret.id


async def arrived(seen: list, count: int) -> None:
    """Wait until ``seen`` holds ``count`` notifications, then a moment for any extra one.

    Updates ride the connection's own stream, not the tool call's response, so
    they may land just after it.
    """
    with anyio.fail_after(10):
        while len(seen) < count:
            await anyio.sleep(0.02)
    await anyio.sleep(0.2)


def test_subscribers_hear_of_every_change_to_what_they_watch_and_nothing_else(served):
    url, secret = served

    async def session():
        watcher_notes, writer_notes = Notes(), Notes()
        async with legacy(url, watcher_notes) as watcher, legacy(url, writer_notes) as writer:
            capabilities = watcher.server_capabilities
            assert capabilities.resources.subscribe
            assert capabilities.logging is not None
            assert capabilities.completions is not None
            fact = await call(writer, "remember", content="billing listens on 8080")
            await watcher.subscribe_resource("memcommit://working")
            await watcher.subscribe_resource(f"memcommit://memory/{fact['id']}")
            await watcher.subscribe_resource(f"memcommit://memory/{secret}")  # team-b's
            await watcher.subscribe_resource("test://watched-resource")  # never changes
            await call(writer, "forget", id=fact["id"])
            await arrived(watcher_notes.updated, 2)
            after_forget = list(watcher_notes.updated)
            await watcher.unsubscribe_resource(f"memcommit://memory/{fact['id']}")
            await call(writer, "touch", ids=[fact["id"]])
            await arrived(watcher_notes.updated, 3)
            later = watcher_notes.updated[len(after_forget) :]
            return fact["id"], after_forget, later, writer_notes

    memory_id, after_forget, after_unsubscribe, writer_notes = run_async(session)
    assert after_forget == ["memcommit://working", f"memcommit://memory/{memory_id}"]
    assert after_unsubscribe == ["memcommit://working"]  # the memory's own updates stopped
    assert writer_notes.updated == []  # it subscribed to nothing


def test_log_messages_follow_the_level_the_client_set(served):
    url, _ = served

    async def session():
        notes = Notes()
        async with legacy(url, notes) as client:
            await call(client, "remember", content="quiet until asked")  # default: warning
            quiet = list(notes.logs)
            await client.set_logging_level("info")
            made = await call(client, "remember", content="the staging password is swordfish")
            loud = list(notes.logs)
            await client.set_logging_level("error")
            await call(client, "remember", content="quiet again")
            return quiet, loud, made, list(notes.logs)

    quiet, loud, made, last = run_async(session)
    assert quiet == []
    assert [level for level, _ in loud] == ["info"]
    data = loud[0][1]
    assert data["message"] == f"remember fact {made['id']}"
    assert data["commit"] == made["commit"]
    assert "swordfish" not in repr(loud)  # ids only, never content
    assert last == loud


def test_on_2026_07_28_a_request_opts_in_to_its_log_messages(served):
    url, _ = served

    async def session(level):
        notes = Notes()
        logging = {"log_level": level, "logging_callback": notes.on_log}
        async with Client(url, cache=None, **logging) as client:
            made = await call(client, "remember", content="logged or not")
            return made, notes.logs

    made, logs = run_async(session, "info")
    assert logs == [("info", {"commit": made["commit"], "author": "mcp", "message": ANY})]
    assert run_async(session, "error")[1] == []
    assert run_async(session, None)[1] == []


def test_completion_offers_ids_kinds_and_scopes_of_this_tenant_only(served):
    url, secret = served

    async def session():
        async with Client(url, cache=None) as client:
            made = [
                await call(client, "remember", content=f"note {n}", scope=scope)
                for n, scope in enumerate(["shared", "billing", "billing-eu"])
            ]
            template = ResourceTemplateReference(
                type="ref/resource", uri="memcommit://memory/{memory_id}"
            )
            review = PromptReference(type="ref/prompt", name="review-memory")
            recall = PromptReference(type="ref/prompt", name="recall-context")
            every = await client.complete(template, {"name": "memory_id", "value": ""})
            prefix = made[1]["id"][:-1]
            some = await client.complete(review, {"name": "memory_id", "value": prefix})
            kinds = await client.complete(recall, {"name": "kind", "value": "co"})
            scopes = await client.complete(recall, {"name": "scope", "value": "bil"})
            theirs = await client.complete(recall, {"name": "scope", "value": "va"})
            unknown = await client.complete(
                PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "x"},
            )
            return made, prefix, every, some, kinds, scopes, theirs, unknown

    made, prefix, every, some, kinds, scopes, theirs, unknown = run_async(session)
    ids = [m["id"] for m in made]
    assert every.completion.values == ids  # team-b's memory is not offered
    assert secret not in every.completion.values
    assert some.completion.values == [i for i in ids if i.startswith(prefix)]
    assert made[1]["id"] in some.completion.values
    assert kinds.completion.values == [k for k in KINDS if k.startswith("co")]
    assert scopes.completion.values == ["billing", "billing-eu"]
    assert theirs.completion.values == []  # team-b's scope "vault"
    assert unknown.completion.values == []


def test_prompts_put_this_tenants_memory_into_the_conversation(served):
    url, secret = served

    async def session():
        async with Client(url, cache=None) as client:
            names = [p.name for p in (await client.list_prompts()).prompts]
            fact = await call(client, "remember", content="billing listens on port 8080")
            recalled = await client.get_prompt("recall-context", {"query": "billing port"})
            review = await client.get_prompt("review-memory", {"memory_id": fact["id"]})
            errors = []
            for arguments in ({"memory_id": secret}, {"memory_id": "no-such-memory"}):
                with pytest.raises(MCPError) as caught:
                    await client.get_prompt("review-memory", arguments)
                errors.append(caught.value.error.message.replace(arguments["memory_id"], "<id>"))
            with pytest.raises(MCPError) as bad_kind:
                await client.get_prompt("recall-context", {"query": "x", "kind": "gossip"})
            return names, fact, recalled, review, errors, str(bad_kind.value)

    names, fact, recalled, review, errors, bad_kind = run_async(session)
    assert names == ["recall-context", "review-memory"]
    assert "8080" in recalled.messages[0].content.text
    embedded = review.messages[0].content.resource
    assert str(embedded.uri) == f"memcommit://memory/{fact['id']}"
    assert "8080" in embedded.text
    assert errors[0] == errors[1]  # another tenant's id reads exactly as one that does not exist
    assert "not found" in errors[0]
    assert "kind" in bad_kind and "gossip" in bad_kind


def test_listeners_on_2026_07_28_get_the_same_updates(served):
    url, _ = served

    async def session():
        async with (
            Client(url, cache=None) as client,
            client.listen(resource_subscriptions=["memcommit://working"]) as events,
        ):
            await call(client, "remember", content="a new fact")
            with anyio.fail_after(10):
                async for event in events:
                    return event

    event = run_async(session)
    assert event == ResourceUpdated(uri="memcommit://working")

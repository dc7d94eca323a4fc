"""``memcommit mcp --tokens``: one real HTTP server for many tenants, driven by the SDK client.

Good, missing, malformed, unknown, revoked and other tenants' tokens; the
tenant-isolation probes (every tool, resource, prompt, completion and
subscription) through it; tokens never written anywhere in plain text.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import anyio
import httpx2
import pytest
from interfaces_mcp_client import MEMCOMMIT, bearer, call, clean_env, fail, run_async, serving
from mcp.shared.exceptions import MCPError
from mcp.types import ResourceTemplateReference
from test_interfaces_mcp import exercise_every_tool

import memcommit
from memcommit.interfaces.tokens import Tokens, digest

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


class Served:
    """A store with tokens and team-b's memories, served by a real ``mcp --tokens`` process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        store = memcommit.open(str(path))
        tokens = Tokens(store)
        self.a = tokens.create("team-a", label="host-a").token
        self.b = tokens.create("team-b", label="host-b").token
        self.doomed = tokens.create("team-a", label="to revoke")
        revoked = tokens.create("team-a", label="revoked")
        tokens.revoke(revoked.info.id)
        self.revoked = revoked.token
        with store.commit(message="team-b's own", author="b") as tx:
            self.secret = tx.add("team-b secret: the vault code is QX-47-ZW", tenant="team-b").id
            self.rule = tx.add("team-b rule: rotate weekly", tenant="team-b", always=True).id
            self.trace = tx.begin_trace("team-b rotating the vault", tenant="team-b")
        store.close()
        self.url = ""
        self.stderr: list[str] = []


@pytest.fixture
def served(tmp_path):
    made = Served(tmp_path / "agent.db")
    with serving(made.path, "--tokens") as (url, stderr):
        made.url, made.stderr = url, stderr
        yield made


def post(url: str, headers: dict[str, str], body: dict = INITIALIZE) -> httpx2.Response:
    return httpx2.post(url, json=body, headers={**ACCEPT, **headers}, timeout=30)


async def refusal(url: str, token: str) -> str:
    """What the SDK client says when the server refuses it at the door (it must)."""
    try:
        async with bearer(url, token) as client:
            await client.list_tools()
    except BaseException as exc:  # the SDK raises it inside nested task-group errors
        while len(getattr(exc, "exceptions", ())) == 1:  # an exception group of one
            exc = exc.exceptions[0]
        assert isinstance(exc, MCPError), exc
        return str(exc)
    raise AssertionError("the client was let in")


def test_a_good_token_serves_every_tool_in_its_own_tenant(served):
    async def session() -> dict:
        async with bearer(served.url, served.a) as client:
            return await exercise_every_tool(client)

    made = run_async(session)
    store = memcommit.open(str(served.path))
    try:
        assert sorted(store.tenants()) == ["team-a", "team-b"]
        for memory_id in (made["fact"], made["rule"], made["doomed"], made["trace_id"]):
            assert store.get(memory_id).tenant == "team-a"
        assert store.get(made["doomed"]).status == "purged"
        assert store.get(served.secret).status == "active"
    finally:
        store.close()


def test_nothing_is_served_without_a_valid_token(served):
    unknown = "mct_" + "0" * 16 + "_" + "0" * 64
    wrong_secret = served.a[:-1] + ("0" if served.a[-1] != "0" else "1")
    missing = [{}, {"Authorization": "Basic dXNlcjpwYXNz"}, {"Authorization": "Bearer"}]
    invalid = [
        {"Authorization": f"Bearer {token}"}
        for token in ("not-a-token", unknown, wrong_secret, served.revoked, served.a + "0")
    ]
    metadata = served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    bodies = set()
    for headers in missing + invalid:
        answer = post(served.url, headers)
        assert answer.status_code == 401, headers
        challenge = answer.headers["WWW-Authenticate"]
        assert challenge.startswith('Bearer realm="memcommit"')
        assert f'resource_metadata="{metadata}"' in challenge
        assert ('error="invalid_token"' in challenge) == (headers in invalid)
        if headers in invalid:
            bodies.add(answer.text)
    assert len(bodies) == 1  # malformed, unknown, wrong and revoked read the same
    assert httpx2.get(served.url, headers=ACCEPT, timeout=30).status_code == 401
    document = httpx2.get(metadata, timeout=30).json()
    assert document == {
        "resource": served.url,
        "bearer_methods_supported": ["header"],
        "resource_name": "memcommit",
    }

    assert run_async(refusal, served.url, served.revoked) == "Server returned an error response"


def test_a_revoked_token_stops_at_its_next_request(served):
    async def session():
        async with bearer(served.url, served.doomed.token) as client:
            first = await call(client, "remember", content="written before the revocation")
            revoked = subprocess.run(
                [*MEMCOMMIT, "token", "revoke", served.doomed.info.id, "--store", served.path],
                capture_output=True,
                text=True,
                env=clean_env(),
                timeout=60,
            )
            assert revoked.returncode == 0, revoked.stderr
            with pytest.raises(MCPError):
                await client.call_tool("remember", {"content": "written after it"})
            return first

    first = run_async(session)
    store = memcommit.open(str(served.path))
    assert [m.content for m in store.find(tenant="team-a")] == [store.get(first["id"]).content]
    store.close()


def test_another_tenants_token_reaches_nothing_of_it(served):
    absent = uuid.uuid4().hex

    async def probes(client, their_id: str, their_trace: str) -> list[str]:
        """The error of every path that names one id: equal for theirs and for an absent one."""
        said = [
            await fail(client, "forget", id=their_id),
            await fail(client, "forget", id=their_id, mode="purge", confirm=their_id),
            await fail(client, "touch", ids=[their_id]),
            await fail(client, "add_step", trace_id=their_trace, content="x"),
            await fail(client, "finish_task", trace_id=their_trace),
        ]
        for read in (
            lambda: client.read_resource(f"memcommit://memory/{their_id}"),
            lambda: client.get_prompt("review-memory", {"memory_id": their_id}),
        ):
            with pytest.raises(MCPError) as caught:
                await read()
            said.append(str(caught.value))
        return [s.replace(their_id, "<id>").replace(their_trace, "<id>") for s in said]

    async def session():
        async with bearer(served.url, served.a) as client:
            mine = await call(client, "remember", content="team-a: the vault is in room 2")
            seen = [
                await call(client, "recall", query="team-b vault code secret rule rotate"),
                await call(client, "log", limit=100),
                await client.read_resource("memcommit://commits/recent"),
                await client.read_resource("memcommit://working"),
                await client.get_prompt("recall-context", {"query": "vault code rotate"}),
                await client.complete(
                    ResourceTemplateReference(
                        type="ref/resource", uri="memcommit://memory/{memory_id}"
                    ),
                    {"name": "memory_id", "value": ""},
                ),
            ]
            sneaky = await fail(client, "remember", content="vault note", tenant="team-b")
            theirs = await probes(client, served.secret, served.trace)
            nobodys = await probes(client, absent, absent)
            return mine, seen, sneaky, theirs, nobodys

    mine, seen, sneaky, theirs, nobodys = run_async(session)
    shown = repr(seen)
    for leak in (served.secret, served.rule, served.trace, "QX-47-ZW", "rotate weekly", "team-b"):
        assert leak not in shown
    assert theirs == nobodys  # another tenant's ids answer exactly as ids that do not exist
    assert all("not found" in said for said in theirs), theirs
    assert "server's configuration" in sneaky
    store = memcommit.open(str(served.path))
    try:
        assert [m.content for m in store.find(tenant="team-b", live=False)].count("vault note") == 0
        assert store.get(mine["id"]).tenant == "team-a"
        assert store.get(served.secret).status == "active"
        assert store.usage([served.secret]) == {}
        assert store.trace(served.trace).status == "open"
    finally:
        store.close()


def test_a_session_is_reachable_only_with_the_token_that_opened_it(served):
    opened = post(served.url, {"Authorization": f"Bearer {served.a}"})
    assert opened.status_code == 200
    session = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    as_b = {"Authorization": f"Bearer {served.b}", "MCP-Protocol-Version": "2025-11-25"}
    hijack = post(served.url, {**as_b, "mcp-session-id": session}, ping)
    made_up = post(served.url, {**as_b, "mcp-session-id": uuid.uuid4().hex}, ping)
    assert hijack.status_code == made_up.status_code == 404
    assert hijack.text == made_up.text  # indistinguishable from a session that never existed


def test_subscribers_hear_nothing_of_another_tenants_changes(served):
    heard: list[str] = []

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            heard.append(str(root.params.uri))

    async def session():
        async with (
            bearer(served.url, served.a, mode="legacy", message_handler=on_message) as a,
            bearer(served.url, served.b) as b,
        ):
            await a.subscribe_resource("memcommit://working")
            await a.subscribe_resource(f"memcommit://memory/{served.secret}")
            await call(b, "forget", id=served.secret)  # team-b changes its own memory
            await call(b, "remember", content="team-b again")
            await call(a, "remember", content="team-a's own change")
            with anyio.fail_after(10):
                while not heard:
                    await anyio.sleep(0.02)
            await anyio.sleep(0.3)  # room for anything else to arrive

    run_async(session)
    assert heard == ["memcommit://working"]  # team-a's own write, once


def test_tokens_are_never_stored_or_written_in_plain_text(served):
    async def session():
        async with bearer(served.url, served.a) as client:
            await call(client, "remember", content="a fact")
        assert await refusal(served.url, served.revoked)

    run_async(session)
    written = b"".join(p.read_bytes() for p in served.path.parent.rglob("*") if p.is_file())
    for token in (served.a, served.b, served.revoked, served.doomed.token):
        assert token.encode() not in written
        assert token.split("_")[2].encode() not in written  # nor its secret alone
        assert token not in "".join(served.stderr)
    assert digest(served.a).encode() in written  # the file read is the one holding the digests


@pytest.mark.parametrize("many", [False, True], ids=["one tenant", "tokens"])
def test_the_recall_cache_option_sizes_the_served_store(tmp_path, monkeypatch, many):
    """``--recall-cache`` reaches the store either server opens (the token server serves
    every tenant from one process: where a budget matters most)."""
    from click.testing import CliRunner

    from memcommit.cli import main
    from memcommit.interfaces import mcp, mcp_served

    budgets = []

    async def served(app, host, port, label):  # instead of listening: the store is open now
        budgets.extend(store.recall_cache_bytes for store in opened)

    opened = []
    real_open = memcommit.open
    monkeypatch.setattr(
        memcommit, "open", lambda *a, **k: opened.append(real_open(*a, **k)) or opened[-1]
    )
    monkeypatch.setattr(mcp_served, "serve_http", served)
    monkeypatch.setattr(mcp, "serve_http", served)
    target = str(tmp_path / "a.db")
    real_open(target).close()
    options = ["--tokens"] if many else ["--http"]
    result = CliRunner().invoke(main, ["mcp", *options, "--recall-cache", "3", "--store", target])
    assert result.exit_code == 0, result.output
    assert budgets == [3 * 2**20]

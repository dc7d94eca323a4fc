"""The MCP server, driven by the MCP SDK's own client: in process, over stdio and over HTTP.

Every test runs the real server over a real SQLite file and checks the store
afterwards through the Python API.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from interfaces_mcp_client import (
    MEMCOMMIT,
    call,
    connect,
    fail,
    http_server,
    read_json,
    run_async,
    stdio_params,
)
from mcp.shared.exceptions import MCPError

import memcommit
from memcommit.interfaces.agent import TOOLS
from memcommit.interfaces.mcp import create_server

TENANT = "team-a"


async def exercise_every_tool(client) -> dict:
    """Call each tool once, the way an agent would; return the ids it made."""
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == list(TOOLS)
    for tool in tools:
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.input_schema["type"] == "object"
        assert "tenant" not in tool.input_schema.get("properties", {}), tool.name

    refused = await fail(client, "remember", content="a sneaky note", tenant="team-b")
    assert refused.startswith("Error executing tool remember: tenant='team-b': unknown argument")
    fact = await call(client, "remember", content="The billing service listens on port 8080.")
    await call(
        client,
        "remember",
        content="Deploy billing with make deploy-billing from the release branch.",
        kind="procedure",
        key="deploy.billing",
        importance=0.9,
        tags=["billing"],
    )
    rule = await call(client, "correct", content="Never force-push to main.")
    recalled = await call(client, "recall", query="billing port", budget=50)
    selected = [m["id"] for m in recalled["selected"]]
    assert fact["id"] in selected
    assert rule["id"] in selected  # a correction loads whatever the query
    assert "8080" in recalled["context"]
    assert set(recalled["excluded"]) == {"total", "by_reason", "near_misses"}

    task = await call(client, "begin_task", task="Deploy billing")
    step = await call(client, "add_step", trace_id=task["trace_id"], content="ran the tests")
    assert step["step"] == 1
    finished = await call(client, "finish_task", trace_id=task["trace_id"], status="failed")
    assert finished["steps"] == 1

    touched = await call(client, "touch", ids=[fact["id"], rule["id"]])
    assert touched["touched"] == [fact["id"], rule["id"]]

    doomed = await call(client, "remember", content="The staging password is swordfish.")
    message = await fail(client, "forget", id=doomed["id"], mode="purge")
    assert "confirm" in message
    await call(client, "forget", id=doomed["id"], mode="purge", confirm=doomed["id"])
    await call(client, "forget", id=fact["id"])

    log = await call(client, "log", limit=3)
    assert len(log["commits"]) == 3
    assert log["commits"][0]["changes"][0]["op"] == "invalidate"

    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert resources == {"memcommit://working", "memcommit://commits/recent"}
    working = await read_json(client, "memcommit://working")
    assert rule["id"] in str(working)
    recent = await read_json(client, "memcommit://commits/recent")
    assert recent["commits"][0] == log["commits"][0]
    one = await read_json(client, f"memcommit://memory/{rule['id']}")
    assert one["always"] is True
    return {"fact": fact["id"], "rule": rule["id"], "doomed": doomed["id"], **task}


def check_store(path: Path, made: dict) -> None:
    """What the tools did is in the SQLite file, in the server's tenant."""
    store = memcommit.open(str(path))
    try:
        assert store.tenants() == [TENANT]
        assert store.get(made["rule"]).always
        assert store.get(made["rule"]).kind == "correction"
        assert store.get(made["fact"]).status == "invalidated"
        assert store.get(made["doomed"]).status == "purged"
        assert all(v.content == "" for v in store.history(made["doomed"]))
        trace = store.trace(made["trace_id"])
        assert trace.status == "failed"
        assert [s.content for s in trace.steps] == ["ran the tests"]
        assert store.usage([made["fact"], made["rule"]])[made["rule"]].count == 1
        assert {c.author for c in store.log()} <= {"mcp", "tiers"}
        assert store.check().ok
    finally:
        store.close()


def test_every_tool_over_stdio(tmp_path):
    path = tmp_path / "agent.db"

    async def session() -> dict:
        async with connect(stdio_params(path, TENANT)) as client:
            return await exercise_every_tool(client)

    check_store(path, run_async(session))


def test_every_tool_over_streamable_http(tmp_path):
    path = tmp_path / "agent.db"

    async def session(url: str) -> dict:
        async with connect(url) as client:
            return await exercise_every_tool(client)

    with http_server(path, TENANT) as url:
        assert url.startswith("http://127.0.0.1:")
        made = run_async(session, url)
    check_store(path, made)


# -- in process: the same server object, the SDK client over memory streams ------


@pytest.fixture
def store(tmp_path):
    opened = memcommit.open(str(tmp_path / "agent.db"))
    yield opened
    opened.close()


def run_in_process(store, tenant: str, script) -> object:
    """Run ``script(client)`` against an in-process server for ``tenant``."""

    async def session():
        async with connect(create_server(store, tenant)) as client:
            return await script(client)

    return run_async(session)


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("remember", {"content": ""}, "content"),
        ("remember", {"content": "x", "importance": 2}, "importance"),
        ("remember", {"content": "x", "kind": "gossip"}, "kind"),
        ("remember", {"content": "x", "tags": "billing"}, "tags"),
        ("remember", {"content": "x", "metadata": [1]}, "metadata"),
        ("remember", {}, "content"),
        ("recall", {"query": "x", "budget": -1}, "budget"),
        ("recall", {"query": "x", "recency_weight": 1.5}, "recency_weight"),
        ("recall", {"query": "x", "pools": [{"name": "p", "max_tokens": -1}]}, "max_tokens"),
        ("correct", {"content": "   "}, "content"),
        ("forget", {"id": "no-such-memory"}, "id"),
        ("forget", {"id": "x", "mode": "shred"}, "mode"),
        ("add_step", {"trace_id": "no-such-trace", "content": "x"}, "trace_id"),
        ("finish_task", {"trace_id": "no-such-trace"}, "trace_id"),
        ("finish_task", {"trace_id": "x", "status": "abandoned"}, "status"),
        ("touch", {"ids": []}, "ids"),
        ("touch", {"ids": ["no-such-memory"]}, "ids"),
        ("log", {"limit": 0}, "limit"),
        ("remember", {"content": "x", "tenant": "team-b"}, "tenant='team-b'"),
        ("recall", {"query": "x", "tenant": "team-b"}, "tenant"),
        ("recall", {"query": "x", "budgte": 5}, "budgte=5"),
        ("touch", {"ids": ["x"], "tenant": "a", "extra": 1}, "extra, tenant="),
        ("log", {"limit": 3, "as_of": 1}, "as_of"),
        ("remember", {"content": "x", "request_id": "r\x00"}, "request_id='r"),
        ("forget", {"id": "x", "request_id": "r\x00"}, "request_id='r"),
        ("recall", {"query": "x", "scopes": [""]}, "scopes"),
    ],
)
def test_bad_arguments_are_tool_errors_naming_the_field(store, tool, arguments, field):
    async def script(client):
        message = await fail(client, tool, **arguments)
        still = await call(client, "remember", content="the server is still up")
        return message, still

    head_before = store.head
    message, still = run_in_process(store, TENANT, script)
    assert field in message
    assert "Traceback" not in message
    assert store.head.seq == (head_before.seq if head_before else 0) + 1  # only the last call
    assert store.get(still["id"]).content == "the server is still up"


def test_forgetting_a_forgotten_memory_lands_no_commit_and_keeps_when_it_stopped(store):
    async def script(client):
        fact = await call(client, "remember", content="billing listens on 8080")
        first = await call(client, "forget", id=fact["id"])
        again = await call(client, "forget", id=fact["id"])
        return fact["id"], first, again

    memory_id, first, again = run_in_process(store, TENANT, script)
    assert first["commit"] == store.head.seq and again["commit"] is None
    forgotten = store.get(memory_id)
    assert forgotten.status == "invalidated" and forgotten.version == 2
    assert forgotten.valid_to == store.log()[0].time


def test_a_finished_task_takes_no_more_steps(store):
    async def script(client):
        task = await call(client, "begin_task", task="one thing")
        await call(client, "finish_task", trace_id=task["trace_id"])
        return (
            await fail(client, "add_step", trace_id=task["trace_id"], content="late"),
            await fail(client, "finish_task", trace_id=task["trace_id"]),
        )

    late, twice = run_in_process(store, TENANT, script)
    assert "trace_id" in late
    assert "finished" in late
    assert "trace_id" in twice


def test_a_server_never_shows_another_tenants_memories(store):
    with store.commit(message="tenant b's own", author="b") as tx:
        secret = tx.add("team-b secret: the vault code is QX-47-ZW", tenant="team-b", key="vault")
        rule = tx.add("team-b rule: vault code rotates weekly", tenant="team-b", always=True)
        trace = tx.begin_trace("team-b rotating the vault code", tenant="team-b")

    async def script(client):
        seen = []
        mine = await call(client, "remember", content="team-a: the vault is in room 2")
        # tenant is not a parameter of any tool: naming one is an error, never obeyed
        sneaky = await fail(client, "remember", content="vault note", tenant="team-b")
        seen.append(await call(client, "recall", query="team-b vault code secret rule"))
        seen.append(await call(client, "log", limit=100))
        seen.append(await read_json(client, "memcommit://commits/recent"))
        seen.append(await read_json(client, "memcommit://working"))
        errors = [
            await fail(client, "forget", id=secret.id),
            await fail(client, "forget", id=secret.id, mode="purge", confirm=secret.id),
            await fail(client, "touch", ids=[secret.id]),
            await fail(client, "touch", ids=[mine["id"], rule.id]),
            await fail(client, "add_step", trace_id=trace, content="x"),
            await fail(client, "finish_task", trace_id=trace),
        ]
        with pytest.raises(MCPError) as caught:
            await client.read_resource(f"memcommit://memory/{secret.id}")
        errors.append(str(caught.value))
        return mine, sneaky, seen, errors

    mine, sneaky, seen, errors = run_in_process(store, TENANT, script)
    shown = repr(seen)
    for leak in (secret.id, rule.id, trace, "QX-47-ZW", "rotates", "team-b"):
        assert leak not in shown
    assert all("not found" in e for e in errors), errors
    assert "tenant" in sneaky and "server's configuration" in sneaky
    assert [m.content for m in store.find(tenant="team-b")].count("vault note") == 0
    assert [m.content for m in store.find(tenant=TENANT)] == ["team-a: the vault is in room 2"]
    assert store.get(mine["id"]).tenant == TENANT
    assert store.get(secret.id).status == "active"
    assert store.usage([secret.id, rule.id]) == {}
    assert store.trace(trace).status == "open"


def test_corrections_load_even_when_the_pools_leave_them_out(store):
    async def script(client):
        fact = await call(client, "remember", content="billing listens on port 8080")
        rule = await call(client, "correct", content="never restart billing on Fridays")
        for n in range(5):
            await call(client, "remember", content=f"billing port note {n} " + "filler " * 30)
        facts_only = [{"name": "facts", "max_tokens": 12, "max_entries": 3, "kinds": ["fact"]}]
        return fact, rule, await call(client, "recall", query="billing port", pools=facts_only)

    fact, rule, recalled = run_in_process(store, TENANT, script)
    assert [m["id"] for m in recalled["selected"]] == [rule["id"], fact["id"]]
    assert recalled["excluded"]["by_reason"] == {"over_budget": 5}


def test_a_correction_remembered_by_kind_always_loads(store):
    async def script(client):
        rule = await call(client, "remember", content="never deploy on Fridays", kind="correction")
        await call(client, "remember", content="billing listens on port 8080")
        recalled = await call(client, "recall", query="billing port", budget=3)
        return rule, recalled

    async def reuse(client):
        await call(client, "remember", content="billing listens on 8080", request_id="r")
        return await fail(client, "remember", content="billing listens on 9090", request_id="r")

    rule, recalled = run_in_process(store, TENANT, script)
    assert recalled["selected"][0]["id"] == rule["id"]  # outside the budget, whatever the query
    assert store.get(rule["id"]).always
    message = run_in_process(store, TENANT, reuse)
    assert "request_id='r'" in message and "different call" in message


def test_the_tenant_can_come_from_the_environment(tmp_path):
    path = tmp_path / "agent.db"
    params = stdio_params(path, TENANT)
    params.args = params.args[: params.args.index("--tenant")]
    params.env = {**params.env, "MEMCOMMIT_TENANT": "from-env"}

    async def session() -> str:
        async with connect(params) as client:
            return (await call(client, "remember", content="where am I"))["id"]

    memory_id = run_async(session)
    store = memcommit.open(str(path))
    assert store.get(memory_id).tenant == "from-env"
    store.close()


def test_a_busy_port_is_one_clear_error(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [*MEMCOMMIT, "mcp", "--http", "--port", str(port), "--store", str(tmp_path / "a.db")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: port={port}: cannot listen on 127.0.0.1")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--http", "--host", "0.0.0.0"], "error: Invalid value for --host: '0.0.0.0': only"),
        (["--tokens", "--tenant", "team-a"], "error: Invalid value for --tenant: does not apply"),
    ],
)
def test_only_the_token_server_listens_beyond_loopback_or_for_many_tenants(
    tmp_path, options, error
):
    done = subprocess.run(
        [*MEMCOMMIT, "mcp", *options, "--store", str(tmp_path / "a.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(error)
    assert not (tmp_path / "a.db").exists()  # refused before anything was opened


def test_the_server_opened_with_an_embedder_stores_the_vectors_of_what_it_remembers(tmp_path):
    path = tmp_path / "agent.db"
    params = stdio_params(path, TENANT)
    params.args = [*params.args, "--embedder", "hash"]

    async def session() -> str:
        async with connect(params) as client:
            return (await call(client, "remember", content="her new Civic is red"))["id"]

    memory_id = run_async(session)
    with memcommit.open(str(path)) as store:
        assert store.vectors("hash", tenant=TENANT).ids == (memory_id,)

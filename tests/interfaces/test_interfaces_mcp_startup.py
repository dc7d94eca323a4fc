"""The MCP server starts without the recall layer: it answers tools/list, then loads recall.

Driven over stdio by the SDK's own client, as an agent starts it. Whether the
recall layer is loaded is read from outside, in the server process' memory map
(numpy's compiled core is mapped once recall is imported), so the test needs
Linux's /proc.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from interfaces_mcp_client import call, connect, run_async, stdio_params

import memcommit
from memcommit.interfaces.agent import TOOLS

TENANT = "team-a"

pytestmark = pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")


def server_pid(store: Path) -> int:
    """The pid of this process' child serving ``store``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and str(store).encode() in cmdline:
            return int(entry.name)
    raise AssertionError(f"no server process for {store}")


def numpy_loaded(pid: int) -> bool:
    """Whether numpy's compiled core is mapped into process ``pid``."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return any("/numpy/" in line for line in maps.splitlines())


def test_tools_are_listed_before_recall_loads_and_recall_works_after(tmp_path):
    path = tmp_path / "agent.db"
    store = memcommit.open(str(path))
    with store.commit(message="seed", author="test") as tx:
        fact = tx.add("The billing service listens on port 8080.", kind="fact", tenant=TENANT)
        for i in range(200):
            tx.add(f"Unrelated note number {i} about the weather.", kind="note", tenant=TENANT)
    store.close()

    async def session() -> dict:
        async with connect(stdio_params(path, TENANT)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            server = server_pid(path)
            before = numpy_loaded(server)
            recalled = await call(client, "recall", query="billing port", budget=50)
            return {
                "tools": tools,
                "before": before,
                "after": numpy_loaded(server),
                "selected": [m["id"] for m in recalled["selected"]],
            }

    seen = run_async(session)
    assert seen["tools"] == list(TOOLS)
    assert seen["before"] is False
    assert seen["after"] is True
    assert fact.id in seen["selected"]

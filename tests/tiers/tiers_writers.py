"""Work run in separate processes by the many-writers test (importable by spawned children).

Each writer records every error it is shown, with no retry: the property under
test is that a commit that landed is never reported as failed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import memcommit
from memcommit.compaction import Compactor
from memcommit.tiers import LRU, TieredMemory

#: Short-term capacity of the writers with tiers attached (tenant "default").
CAPACITY = 6
#: The MCP server's own TieredMemory keeps its default capacity (tenant "agents").
MCP_CAPACITY = 64


def write_with_tiers(target: str, options: dict[str, Any], worker: int, commits: int) -> dict:
    """Commit notes and finished tasks with tiers and compaction attached; touch now and then."""
    errors: list[str] = []
    landed: list[int] = []
    with memcommit.open(target, **options) as store:
        view = store.tenant("default")
        tiers = TieredMemory(view, capacity=CAPACITY, eviction=LRU(), compactor=Compactor(view))
        recent: list[str] = []
        for i in range(commits):
            tx = None
            try:
                with view.commit(message=f"w{worker}-{i}", author=f"worker-{worker}") as tx:
                    if i % 4 == 3:
                        task = tx.begin_trace(f"worker {worker} task {i}", scope=f"desk{i % 2}")
                        tx.step(task, f"worker {worker} tried step one of {i}")
                        tx.finish(task)
                    else:
                        recent.append(tx.add(f"worker {worker} note {i}", scope=f"desk{i % 2}").id)
                landed.append(tx.result.seq)
            except Exception as exc:  # recorded, never retried: this is what we count
                errors.append(f"commit {i}: {type(exc).__name__}: {exc}")
                if tx is not None and tx.result is not None:
                    landed.append(tx.result.seq)
            if i % 5 == 4 and recent:
                try:
                    tiers.touch(recent[-3:])
                except Exception as exc:
                    errors.append(f"touch {i}: {type(exc).__name__}: {exc}")
        tiers.close()
    return {"landed": landed, "errors": errors}


async def _drive_mcp(target: str, calls: int) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCOMMIT_")}
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcommit", "mcp", "--store", target, "--tenant", "agents"],
        env=env,
    )
    errors: list[str] = []
    remembered: list[str] = []
    async with Client(server, cache=None) as client:
        for i in range(calls):
            result = await client.call_tool(
                "remember", {"content": f"agent note {i} from server {os.getpid()}"}
            )
            if result.is_error:
                errors.append(" ".join(getattr(b, "text", "") for b in result.content))
            else:
                remembered.append(result.structured_content["id"])
            if i % 6 == 5:
                result = await client.call_tool("touch", {"ids": remembered[-2:]})
                if result.is_error:
                    errors.append(" ".join(getattr(b, "text", "") for b in result.content))
    return {"remembered": remembered, "errors": errors}


def drive_mcp_server(target: str, calls: int) -> dict:
    """Drive ``memcommit mcp`` over stdio with the official client: remembers, some touches."""
    return asyncio.run(_drive_mcp(target, calls))

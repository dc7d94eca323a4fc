"""Start-up: ``import memcommit``, ``memcommit --help`` and the MCP server, beside peers.

    python benchmarks/startup_bench.py             # 11 fresh processes per figure
    python benchmarks/startup_bench.py --runs 5 --memories 1000

Every figure is the median over ``--runs`` fresh processes of the wall time and
of the process' own CPU time (user + system). On a shared, loaded machine the
wall time mostly measures waiting for a core; the CPU time is the work done.

Peers, in the same run on the same machine:

- the interpreter alone (``python -c pass``): the floor under every figure;
- sqlite-utils (``import sqlite_utils``, ``sqlite-utils --help``): a library with
  a click command line, the shape of ours; the CLI our style guide points to.
  It is in the ``bench`` extra;
- for the MCP server, the smallest server the same official SDK makes (one tool,
  stdio): the part of the start-up that belongs to the SDK, not to us.

memcommit's modules are compiled to bytecode first, as an install leaves them
(under PYTHONDONTWRITEBYTECODE each fresh process would otherwise compile them).

MCP ready = the official client's ``initialize`` and ``tools/list`` answered,
timed from spawning the server. The server opens a store of ``--memories``
memories of one tenant, so work that grows with the store (recall's index, the
tier counts) would show here.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import memcommit

TENANT = "bench"
BIN = Path(sys.executable).parent

#: The smallest server the official SDK makes: one tool, served over stdio.
PEER_SERVER = '''\
from mcp.server.mcpserver import MCPServer

server = MCPServer("peer")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


server.run()
'''


class Sample(NamedTuple):
    wall: float
    cpu: float


def run_once(argv: list[str]) -> Sample:
    """Run ``argv`` to the end; its wall time and the CPU time it used."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {process.returncode}")
    return Sample(wall, usage.ru_utime + usage.ru_stime)


def children() -> list[int]:
    """Pids of this process' children, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(int(entry.name))
    return found


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mcp_ready_once(command: str, args: list[str]) -> Sample:
    """Spawn a stdio MCP server; time until ``initialize`` and ``tools/list`` are answered."""

    async def session() -> Sample:
        params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
        start = time.perf_counter()
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            wall = time.perf_counter() - start
            if not tools:
                raise RuntimeError(f"{command} {args} listed no tools")
            (server,) = children()  # idle now, waiting for the next request
            return Sample(wall, cpu_of(server))

    return anyio.run(session)


def median(sample: Callable[[], Sample], runs: int) -> Sample:
    samples = [sample() for _ in range(runs)]
    return Sample(
        statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples)
    )


def build_store(path: Path, memories: int) -> None:
    """A store of ``memories`` memories in one tenant, made by bulk commits of the public API."""
    words = ("deploy", "billing", "cache", "timeout", "pool", "agent", "release", "schema")
    store = memcommit.open(str(path))
    try:
        for start in range(0, memories, 1000):
            with store.commit(message=f"bulk {start}", author="bench") as tx:
                for i in range(start, min(start + 1000, memories)):
                    text = " ".join(words[(i * k) % len(words)] for k in (1, 3, 7, 11))
                    tx.add(f"{text} #{i}", kind="fact", tenant=TENANT)
    finally:
        store.close()


def row(what: str, ours: Sample, peer: Sample | None, peer_name: str) -> str:
    theirs = f"{peer.wall * 1000:8.0f} {peer.cpu * 1000:8.0f}  {peer_name}" if peer else "  n/a"
    return f"{what:<16}{ours.wall * 1000:8.0f} {ours.cpu * 1000:8.0f}   {theirs}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=11, help="fresh processes per figure")
    parser.add_argument("--memories", type=int, default=10_000, help="memories in the MCP store")
    args = parser.parse_args()
    compileall.compile_dir(Path(memcommit.__file__).parent, quiet=1)
    python = sys.executable
    memcommit_cli = str(BIN / "memcommit")
    sqlite_utils_cli = shutil.which("sqlite-utils", path=str(BIN)) or shutil.which("sqlite-utils")

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "bench.db"
        build_store(store, args.memories)
        peer_script = Path(tmp) / "peer_server.py"
        peer_script.write_text(PEER_SERVER)

        floor = median(lambda: run_once([python, "-c", "pass"]), args.runs)
        ours_import = median(lambda: run_once([python, "-c", "import memcommit"]), args.runs)
        ours_help = median(lambda: run_once([memcommit_cli, "--help"]), args.runs)
        peer_import = peer_help = None
        if sqlite_utils_cli:
            peer_import = median(lambda: run_once([python, "-c", "import sqlite_utils"]), args.runs)
            peer_help = median(lambda: run_once([sqlite_utils_cli, "--help"]), args.runs)
        ours_mcp = median(
            lambda: mcp_ready_once(
                memcommit_cli, ["mcp", "--store", str(store), "--tenant", TENANT]
            ),
            args.runs,
        )
        peer_mcp = median(lambda: mcp_ready_once(python, [str(peer_script)]), args.runs)

    print(f"start-up, medians of {args.runs} fresh processes, ms (wall, then CPU user+sys)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'':<16}{'wall':>8} {'cpu':>8}   {'wall':>8} {'cpu':>8}  peer")
    print(row("python -c pass", floor, None, ""))
    sqlite_utils = "sqlite-utils" if sqlite_utils_cli else "sqlite-utils (not installed)"
    print(row("import", ours_import, peer_import, f"import sqlite_utils ({sqlite_utils})"))
    print(row("--help", ours_help, peer_help, f"{sqlite_utils} --help"))
    print(
        row(
            "MCP ready",
            ours_mcp,
            peer_mcp,
            f"one-tool MCPServer, same SDK (ours: {args.memories:,} memories)",
        )
    )


if __name__ == "__main__":
    main()

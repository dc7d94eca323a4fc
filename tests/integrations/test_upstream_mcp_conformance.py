"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``), server mode.

It runs against a real ``memcommit mcp --http`` server, on a real SQLite file.
The suite needs Node 22 or newer: the npm registry's ``node`` package provides
it, so both are installed at test time with npm into the upstream cache (never
into the repository). No npm skips the module with the reason, and fails it
under MEMCOMMIT_REQUIRE_UPSTREAM=1 (as `.ci/run` sets).

Every scenario the suite runs is either in `IN_SCOPE` (it must pass) or in
`deselected.MCP_CONFORMANCE` with the reason it is not asked of memcommit (the
run prints that list); a scenario in neither fails the run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from deselected import MCP_CONFORMANCE, VERSIONS
from upstream import CACHE, _unavailable

SUITE = "@modelcontextprotocol/conformance"
NODE = VERSIONS["node"]

#: The scenarios that need no fixture of the suite's reference server: memcommit must pass them.
IN_SCOPE = (
    "server-initialize",
    "ping",
    "logging-set-level",
    "completion-complete",
    "tools-list",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "dns-rebinding-protection",
)

_RESULT_DIR = re.compile(r"server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z")


def installed() -> tuple[Path, Path]:
    """(node, the suite's entry script), installed with npm into the cache once."""
    root = CACHE / f"mcp-conformance-{VERSIONS[SUITE]}-node-{NODE}"
    node = root / "node_modules" / "node" / "bin" / "node"
    entry = root / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not (root / ".complete").exists():
        npm = shutil.which("npm")
        if npm is None:
            _unavailable("npm is not installed: the MCP conformance suite is installed with it")
        root.mkdir(parents=True, exist_ok=True)
        (root / "package.json").write_text('{"private": true}\n', encoding="utf-8")
        command = [
            npm, "install", "--no-audit", "--no-fund", "--no-save",
            f"node@{NODE}", f"{SUITE}@{VERSIONS[SUITE]}",
        ]  # fmt: skip
        try:
            subprocess.run(
                command, cwd=root, check=True, capture_output=True, text=True, timeout=900
            )
        except (subprocess.SubprocessError, OSError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            _unavailable(f"cannot install {SUITE} and node@{NODE} with npm: {detail.strip()}")
        (root / ".complete").touch()
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"v{NODE}", version
    return node, entry


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, list[str]]:
    """Run the whole active suite once against a real server: each scenario's failures."""
    node, entry = installed()
    tmp = tmp_path_factory.mktemp("conformance")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCOMMIT_")}
    store = ["--store", str(tmp / "agent.db"), "--tenant", "conformance"]
    server = subprocess.Popen(
        [sys.executable, "-m", "memcommit", "mcp", "--http", "--port", "0", *store],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = server.stderr.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        assert url, f"server did not start: {line}"
        out = tmp / "results"
        subprocess.run(
            [node, entry, "server", "--url", url.group(0), "--output-dir", out],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,  # it exits non-zero when any scenario fails; the results say which
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stderr.close()
    failures: dict[str, list[str]] = {}
    for folder in sorted(out.iterdir()):
        scenario = _RESULT_DIR.fullmatch(folder.name)
        assert scenario, folder.name
        checks = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
        failures[scenario["scenario"]] = [
            f"{c['id']}: {c.get('errorMessage') or c['description']}"
            for c in checks
            if c["status"] == "FAILURE"
        ]
    return failures


def test_every_scenario_is_in_scope_or_left_out_with_a_reason(results):
    unknown = sorted(set(results) - set(IN_SCOPE) - set(MCP_CONFORMANCE))
    assert not unknown, f"scenarios of {SUITE} {VERSIONS[SUITE]} neither in scope nor deselected"
    assert not set(IN_SCOPE) & set(MCP_CONFORMANCE)
    assert set(IN_SCOPE) <= set(results), "an in-scope scenario did not run"


@pytest.mark.parametrize("scenario", IN_SCOPE)
def test_scenario_passes(results, scenario):
    assert results.get(scenario) == [], f"{scenario} not passed: {results.get(scenario)}"

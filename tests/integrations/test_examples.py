"""The integration examples run offline as shipped: memory across two runs, recall explained."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from upstream import require

import memcommit

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(name: str, store: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_langgraph_agent_remembers_across_runs(tmp_path):
    require("langgraph.graph")
    out = run("langgraph_agent.py", tmp_path / "lg.db")
    first, second = out.split("run 2", 1)
    assert "(nothing yet)" in first
    assert "What you remember: | - Ada loves spicy ramen." in second
    assert "selected          score=1.000 'Ada loves spicy ramen.'" in second
    assert 'no_lexical_match  score=- "Ada\'s cat is called Miso."' in second
    with memcommit.open(tmp_path / "lg.db") as store:
        facts = store.tenant("acme").find(scopes=["user_ada.memories"])
        assert sorted(m.key for m in facts) == ["food", "pet"]


def test_openai_agents_session_remembers_across_runs(tmp_path):
    require("agents")
    out = run("openai_agents_session.py", tmp_path / "oa.db")
    first, second = out.split("run 2", 1)
    assert "compacted into a summary: 'finished after 2 steps'" in first
    assert "What you remember:\\n- Deploys go out on Tuesdays after the standup." in second
    assert "selected          score=1.000 'Deploys go out on Tuesdays" in second
    with memcommit.open(tmp_path / "oa.db") as store:
        traces = store.tenant("acme").traces()
        assert [t.status for t in traces] == ["finished", "open"]


def test_llama_index_memory_remembers_across_runs(tmp_path):
    require("llama_index.core")
    out = run("llama_index_memory.py", tmp_path / "li.db")
    first, second = out.split("run 2", 1)
    assert "4 messages active, 4 flushed to the archive tier" in first
    assert "the session continues: 9 messages in its history" in second
    assert "- Never deploy on a Friday.\\n- Deploys go out on Tuesdays after the standup." in second
    assert "selected          score=0.343 'Deploys go out on Tuesdays" in second
    with memcommit.open(tmp_path / "li.db") as store:
        (trace,) = store.tenant("acme").traces()
        tiers = [step.tier for step in trace.steps]
        assert tiers == ["archive"] * 6 + ["short"] * 3  # run 2 flushed two more


def test_google_adk_memory_remembers_across_runs(tmp_path):
    require("google.adk")
    out = run("google_adk_memory.py", tmp_path / "adk.db")
    first, second = out.split("run 2", 1)
    assert "with 5 steps" in first
    assert "search_memory found 4 memories" in second
    assert "helper  0.382 'Never deploy on a Friday.'" in second
    assert "selected          score=1.000 'user: Our deploys go out on Tuesdays" in second
    assert "archived          score=- 'adk session monday'" in second
    with memcommit.open(tmp_path / "adk.db") as store:
        (trace,) = store.tenant("release-helper").traces()
        assert [step.scope for step in trace.steps] == ["ada"] * 5

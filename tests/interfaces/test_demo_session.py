"""`memcommit demo`: the agent session chapter on a real SQLite file tells a fixed story."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

import memcommit
from memcommit.cli import main

HEX_ID = re.compile(r"(…[0-9a-f]{7,32}|\b[0-9a-f]{12,32})\b")
LAYOUT = re.compile(r"[ \u2500-\u257f]+")  # spaces and box-drawing characters


def run_demo(path) -> str:
    result = CliRunner().invoke(main, ["demo", "--store", str(path)], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_session_commits_supersedes_compacts_and_recalls(tmp_path):
    path = tmp_path / "demo.db"
    out = run_demo(path)
    assert " held: " in out and "Now it is replaced by" in out
    assert "Compacted 1 trace" in out and "4 steps archived" in out
    assert "## corrections" in out and "Never rerun a flaky checkout test blindly" in out
    assert "store.check(): ok" in out
    rows = out.split("why it was or was not selected")[1].split("store.check()")[0]
    cut = [line for line in rows.splitlines() if "…" in line.partition(" ")[2]]
    assert cut == []  # at 80 columns only the ids are shortened, never a reason
    with memcommit.open(str(path)) as store:
        view = store.tenant("acme")
        assert [c.author for c in view.log()][-1] == "agent"
        assert any(c.author == "tiers" for c in view.log())
        correction = view.find(kinds=["correction"])[0]
        assert correction.tier == "short"  # pinned: the evictions never took it
        assert store.check().ok


def test_the_session_prints_the_same_story_every_run(tmp_path):
    first = run_demo(tmp_path / "a.db").replace(str(tmp_path / "a.db"), "DB")
    second = run_demo(tmp_path / "b.db").replace(str(tmp_path / "b.db"), "DB")
    assert story(first) == story(second)


def story(output: str) -> str:
    """The demo's words with ids masked; table geometry dropped, since a short id grows
    past an all-digit tail (so a column's width depends on the random ids)."""
    return LAYOUT.sub(" ", HEX_ID.sub("ID", output))


def test_the_demo_refuses_to_overwrite_an_existing_file(tmp_path):
    path = tmp_path / "taken.db"
    path.write_text("not a store")
    result = CliRunner().invoke(main, ["demo", "--store", str(path)])
    assert result.exit_code != 0 and "must not exist yet" in result.output
    assert path.read_text() == "not a store"


def test_the_demo_prints_its_figures_as_json(tmp_path):
    result = CliRunner().invoke(main, ["demo", "--json", "--store", str(tmp_path / "j.db")])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["poolsplit"]["type_loads"]["procedure"] == {"one_budget": 0, "pools": 8}
    assert figures["poolsplit"]["correction_after_burst"]["24"] == {
        "one_budget": False,
        "pools": True,
    }
    session = figures["session"]
    assert session["check_ok"] is True and session["compacted"]["summaries"] == 1
    kinds = {m["kind"] for m in session["recall"]["selected"]}
    assert {"correction", "summary"} <= kinds

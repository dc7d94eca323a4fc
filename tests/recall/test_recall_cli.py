"""``memcommit recall`` on a real SQLite file."""

from __future__ import annotations

import json

from click.testing import CliRunner
from recall_bank import Q_PROCEDURE, build_bank

from memcommit.cli import main


def test_recall_json_and_explain(tmp_path, now):
    path = str(tmp_path / "cli.db")
    build_bank(path, now).close()
    runner = CliRunner()
    args = [
        "recall",
        Q_PROCEDURE,
        "--tenant",
        "team-a",
        "--store",
        path,
        "--kind",
        "procedural",
        "--words",
        "21",
        "--scorer",
        "tfidf",
        "--now",
        now.isoformat(),
    ]
    result = runner.invoke(main, [*args, "--json", "--explain"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [s["id"] for s in data["selected"]] == ["M4", "M7"]
    assert {r["id"] for r in data["rows"]} == {"M1", "M2", "M3", "M4", "M5", "M7", "M9"}
    result = runner.invoke(main, [*args, "--explain"])
    assert result.exit_code == 0 and "other_kind" in result.output


def test_bad_budget_is_one_line(tmp_path, now):
    path = str(tmp_path / "cli.db")
    build_bank(path, now).close()
    result = CliRunner().invoke(
        main, ["recall", "x", "--tenant", "team-a", "--store", path, "--words", "-3"]
    )
    assert result.exit_code == 1 and "budget=-3" in result.output

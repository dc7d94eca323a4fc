"""The external judge: agmi's nine at-rest attacks, run by `agmi-check` on both backends.

`agmi_memcommit.py` beside this file is the adapter (the real SQLite file, the
real PostgreSQL tables). Every attack must be caught: REJECTED or REPORTED, none
ACCEPTED, none NOT EVALUABLE (nor an ERROR: an edit that did not land).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memcommit

HERE = Path(__file__).parent
ATTACKS = 9


def agmi_check(adapter: str, out: Path) -> dict:
    source = str(Path(memcommit.__file__).resolve().parents[1])
    path = os.pathsep.join([str(HERE), source, os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "agmi.check", "--adapter", f"agmi_memcommit:{adapter}",
         "--json", str(out)],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text())


def judged(card: dict) -> dict[str, str]:
    verdicts = {row["attack"]: row["verdict"] for row in card["edits"]}
    assert len(verdicts) == ATTACKS
    missed = {a: v for a, v in verdicts.items() if v not in ("REJECTED", "REPORTED")}
    assert not missed, [row for row in card["edits"] if row["attack"] in missed]
    return verdicts


def test_agmi_on_sqlite(tmp_path):
    verdicts = judged(agmi_check("SQLiteAdapter", tmp_path / "card.json"))
    assert set(verdicts.values()) == {"REPORTED"}  # found by verify(), not on open


@pytest.mark.postgres
def test_agmi_on_postgres(tmp_path, postgres_server):
    verdicts = judged(agmi_check("PostgresAdapter", tmp_path / "card.json"))
    assert set(verdicts.values()) == {"REPORTED"}

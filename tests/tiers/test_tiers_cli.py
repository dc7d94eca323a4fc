"""memcommit tiers working|stats|touch|maintain|simulate: one library call each, --json."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import memcommit
from memcommit.cli import tiers_cmds  # noqa: F401  (registers the commands)
from memcommit.cli.app import main


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "cli.db")
    store = memcommit.open(path)
    with store.commit(message="seed") as tx:
        ids = [tx.add(f"note {i}", tier="archive").id for i in range(4)]
        ids.append(tx.add("kept", scope="planner").id)
    store.close()
    return path, ids


def run(*args: str, code: int = 0):
    out = CliRunner().invoke(main, list(args))
    assert out.exit_code == code, out.output
    return out


def test_touch_then_working_and_stats(db):
    path, ids = db
    out = run(
        "tiers",
        "touch",
        *ids[:3],
        "--store",
        path,
        "--capacity",
        "2",
        "--eviction",
        "fifo",
        "--json",
    )
    data = json.loads(out.output)
    assert data["paged_in"] == ids[:3] and data["evicted"] == [ids[0]]
    working = json.loads(
        run("tiers", "working", "--store", path, "--scope", "shared", "--json").output
    )
    assert [m["id"] for m in working] == ids[1:3]
    stats = json.loads(run("tiers", "stats", "--store", path, "--json").output)
    assert stats["total"]["misses"] == 3 and stats["total"]["evictions"] == 1
    assert "total" in run("tiers", "stats", "--store", path).output


def test_touch_reports_unknown_ids_and_fails(db):
    path, ids = db
    out = run("tiers", "touch", ids[4], "nope", "--store", path, "--json", code=1)
    touched, _, error = out.output.rpartition('\n{"error"')  # --json: the error is JSON too
    assert json.loads(touched)["hits"] == [ids[4]]
    assert json.loads('{"error"' + error)["error"]["field"] == "ids" and "nope" in error


def test_maintain_promotes_and_evicts(db):
    path, ids = db
    run("tiers", "touch", ids[4], ids[4], ids[4], "--store", path)
    data = json.loads(
        run("tiers", "maintain", "--store", path, "--promote-uses", "3", "--json").output
    )
    assert data["promoted"] == [ids[4]] and len(data["commits"]) == 1


def test_simulate_a_trace_file_and_a_synthetic_trace(tmp_path):
    trace = tmp_path / "touches.txt"
    trace.write_text("a\nb\na\nc\na\nb\n")
    data = json.loads(
        run(
            "tiers",
            "simulate",
            str(trace),
            "--capacity",
            "2",
            "--policy",
            "lru",
            "--policy",
            "2q",
            "--json",
        ).output
    )
    assert [(r["policy"], r["hits"]) for r in data] == [("LRU", 2), ("TwoQueue", 1)]
    out = run(
        "tiers",
        "simulate",
        "--synthetic",
        "scans",
        "--requests",
        "2000",
        "--capacity",
        "50",
        "--policy",
        "arc",
    )
    assert "ARC" in out.output
    assert "not both" in run("tiers", "simulate", "--capacity", "5", code=1).output
    assert "capacity" in run("tiers", "simulate", str(trace), "--capacity", "0", code=1).output


def test_touch_takes_the_short_ids_the_tables_show(db):
    path, ids = db
    out = run("tiers", "touch", "…" + ids[0][-7:], "--store", path, "--json")
    assert json.loads(out.output)["paged_in"] == [ids[0]]


def test_touch_takes_a_short_id_made_only_of_decimal_digits(tmp_path):
    path = str(tmp_path / "digits.db")
    with memcommit.open(path) as store, store.commit(message="seed") as tx:
        tx.add("archived note", id="0123456789abcdef0123456780810916", tier="archive")
    out = run("tiers", "touch", "0810916", "--store", path, "--json")
    assert json.loads(out.output)["paged_in"] == ["0123456789abcdef0123456780810916"]

"""Every failure a user can cause is one line on stderr and a non-zero exit; --debug shows why."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

import memcommit
from memcommit.cli import main
from memcommit.cli.moments import TIME_FORMS, parse_as_of, parse_moment
from memcommit.errors import InvalidInput

READS = [
    ["find"], ["log"], ["get", "0" * 32], ["show", "1"], ["history", "0" * 32],
    ["diff", "0", "1"], ["check"], ["recall", "tea"], ["tiers", "working"], ["tiers", "stats"],
    ["export", "-"],
]  # fmt: skip


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_error(result, *parts: str) -> str:
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for part in parts:
        assert part in lines[0]
    return lines[0]


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "agent.db")
    with memcommit.open(path) as store, store.commit(message="seed") as tx:
        tx.add("The user prefers tea", key="drink")
    return path


@pytest.mark.parametrize("args", READS, ids=[" ".join(a) for a in READS])
def test_reads_never_create_a_store(tmp_path, args):
    path = tmp_path / "typo.db"
    result = run(*args, "--store", str(path))
    one_line_error(result, "store=", "no such store", f"memcommit init --store {path} ")
    assert not path.exists()


def test_a_directory_is_not_a_store(tmp_path):
    one_line_error(run("find", "--store", str(tmp_path)), "is a directory")


def test_reads_never_create_a_postgresql_schema(postgres_server):
    url = f"{postgres_server}?schema=test_never_made_{os.getpid()}"
    result = run("find", "--store", url)
    one_line_error(result, "postgresql")
    import psycopg

    with psycopg.connect(postgres_server) as conn:
        found = conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s",
            (f"test_never_made_{os.getpid()}",),
        ).fetchall()
    assert found == []


def test_init_and_add_create_the_store(tmp_path):
    path = tmp_path / "new.db"
    assert run("add", "first", "--store", str(path)).exit_code == 0
    assert path.exists()


def test_export_into_a_missing_directory(db, tmp_path):
    out = tmp_path / "no" / "such" / "dir" / "backup.jsonl"
    one_line_error(run("export", str(out), "--store", db), "No such file or directory", str(out))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_export_onto_a_full_disk(db):
    one_line_error(run("export", "/dev/full", "--store", db), "No space left on device")


def test_import_of_a_missing_file_creates_no_store(tmp_path):
    target = tmp_path / "restored.db"
    missing = tmp_path / "backup.jsonl"
    result = run("import", str(missing), "--store", str(target))
    one_line_error(result, "No such file or directory", str(missing))
    assert not target.exists()


def test_import_of_a_binary_file(tmp_path):
    binary = tmp_path / "photo.jpg"
    binary.write_bytes(bytes(range(256)) * 8)
    result = run("import", str(binary), "--store", str(tmp_path / "restored.db"))
    one_line_error(result, "not a text file")


def test_import_into_a_store_that_has_commits(db, tmp_path):
    backup = tmp_path / "backup.jsonl"
    assert run("export", str(backup), "--store", db).exit_code == 0
    line = one_line_error(run("import", str(backup), "--store", db), "has 1 commits")
    assert "new, empty" in line and "store=" in line


def test_tiers_simulate_with_a_missing_trace_file(tmp_path):
    missing = tmp_path / "touches.txt"
    result = run("tiers", "simulate", str(missing), "--capacity", "4")
    one_line_error(result, "No such file or directory", str(missing))


def test_debug_shows_the_traceback(tmp_path):
    result = CliRunner().invoke(main, ["--debug", "find", "--store", str(tmp_path / "x.db")])
    assert result.exit_code == 1 and isinstance(result.exception, InvalidInput)


@pytest.mark.parametrize(
    "text", ["soon", "2030-13-01", "last tuesday", "12q"], ids=lambda t: t.replace(" ", "_")
)
def test_a_bad_time_lists_the_accepted_forms(db, text):
    line = one_line_error(run("find", "--as-of", text, "--store", db), "as-of=")
    assert "ISO 8601" in line and "2h" in line and "yesterday" in line
    assert "datetime.datetime" not in line


def test_a_time_in_the_future_reads_the_newest_state(db):
    result = run("find", "--as-of", "2030-01-01", "--json", "--store", db)
    assert result.exit_code == 0, result.output
    assert "prefers tea" in result.stdout


@pytest.mark.parametrize("text", ["yesterday", "2h", "3d", "now", "today", "2026-11-01T12:00Z"])
def test_relative_and_iso_times_are_read(db, text):
    result = run("log", "--as-of", text, "--json", "--store", db)
    assert result.exit_code == 0, result.output


def test_time_forms():
    now = datetime(2026, 11, 1, 12, 30, tzinfo=timezone.utc)
    assert parse_moment("at", "2h", now=now) == now - timedelta(hours=2)
    assert parse_moment("at", "3d", now=now) == now - timedelta(days=3)
    assert parse_moment("at", "yesterday", now=now) == datetime(2026, 10, 31, tzinfo=timezone.utc)
    assert parse_moment("at", "today", now=now) == datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert parse_moment("at", "2026-01-02", now=now) == datetime(2026, 1, 2, tzinfo=timezone.utc)
    plus2 = parse_moment("at", "2026-01-02T03:00+02:00", now=now)
    assert plus2 == datetime(2026, 1, 2, 1, tzinfo=timezone.utc)
    assert parse_moment("at", "2026-01-02T03:00Z", now=now).tzinfo is not None
    assert parse_as_of("12") == 12 and parse_as_of("a" * 32) == "a" * 32
    with pytest.raises(InvalidInput) as caught:
        parse_moment("at", "whenever", now=now)
    assert caught.value.field == "at" and TIME_FORMS in caught.value.reason


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add"], "error: Missing argument 'CONTENT' (see memcommit add --help)"),
        (["add", "x", "--importance", "abc"], "'abc' is not a valid float"),
        (["nope"], "error: No such command 'nope' (see memcommit --help)"),
        (
            ["recal"],
            "error: No such command 'recal'. Did you mean 'recall'? (see memcommit --help)",
        ),
        (["find", "--kind", "bogus"], "Invalid value for '--kind'"),
    ],
)
def test_click_usage_errors_are_one_line_too(args, message):
    result = CliRunner().invoke(main, args, prog_name="memcommit")
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr


def test_the_demo_refuses_an_existing_store_before_printing_anything(tmp_path):
    taken = tmp_path / "taken.db"
    taken.write_text("not a store")
    result = run("demo", "--store", str(taken))
    assert result.exit_code == 2 and result.stdout == ""
    assert "must not exist yet" in result.stderr


OUT_OF_RANGE = [
    (["recall", "tea", "--max-age", "99999999999d"], "max-age=", "at most 999999999 days"),
    (["recall", "tea", "--half-life", "99999999999w"], "half-life=", "at most 999999999 days"),
    (["recall", "tea", "--now", "99999999d"], "now=", "days ago (after year 1)"),
    (["recall", "tea", "--as-of", "99999999h"], "as-of=", "days ago (after year 1)"),
    (["find", "--as-of", "999999999999w"], "as-of=", "at most 999999999 days"),
    (["log", "--as-of", "99999999999s"], "as-of=", "days ago (after year 1)"),
]


@pytest.mark.parametrize(("args", "option", "range_"), OUT_OF_RANGE, ids=lambda a: str(a))
def test_an_out_of_range_time_form_is_one_line_naming_the_option_and_range(
    db, args, option, range_
):
    one_line_error(run(*args, "--store", db), option, range_)


def test_bare_memcommit_prints_its_help_and_succeeds():
    result = CliRunner().invoke(main, [], prog_name="memcommit")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: memcommit") and "recall" in result.stdout


def test_json_errors_are_json_too(tmp_path):
    target = str(tmp_path / "nope" / "x.db")
    result = CliRunner().invoke(main, ["find", "--store", target, "--json"])
    assert result.exit_code == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    error = json.loads(line)["error"]
    assert error["type"] == "InvalidInput" and error["field"] == "store"
    assert error["value"] == target and "no such store" in error["message"]

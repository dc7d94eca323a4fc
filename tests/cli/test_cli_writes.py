"""Every write of the Python API on the command line, on SQLite and PostgreSQL."""

from __future__ import annotations

import memcommit
from memcommit.cli.ids import short_ids
from memcommit.cli.opening import open_store


def added(cli, content: str, **options: str) -> str:
    args = [arg for name, value in options.items() for arg in (f"--{name}", value)]
    return cli.json("add", content, *args)["memory"]["id"]


def test_update_writes_a_new_version_of_the_given_fields(cli):
    mid = added(cli, "The user prefers tea", key="drink")
    out = cli.json("update", mid, "--content", "The user prefers green tea", "--importance", "0.9")
    assert out["op"] == "update" and out["memory"]["version"] == 2
    assert out["memory"]["content"] == "The user prefers green tea"
    assert out["memory"]["key"] == "drink" and out["memory"]["importance"] == 0.9
    history = cli.json("history", mid)
    assert [v["content"] for v in history] == ["The user prefers tea", "The user prefers green tea"]
    log = cli.json("log")
    assert log[0]["message"] == f"update {mid}" and log[0]["author"] == "cli"


def test_update_validates_like_the_library_and_changes_nothing(cli):
    mid = added(cli, "The user prefers tea")
    nothing = cli("update", mid, code=1)
    assert nothing.stderr.startswith("error: fields={}: name at least one of")
    bad = cli("update", mid, "--importance", "2", code=1)
    assert "importance=2.0" in bad.stderr and len(bad.stderr.splitlines()) == 1
    stale = cli("update", mid, "--content", "x", "--expected-version", "7", code=1)
    assert "expected_version" in stale.stderr
    assert [v["version"] for v in cli.json("history", mid)] == [1]


def test_invalidate_supersede_archive_restore(cli):
    old = added(cli, "Deploys happen on Tuesdays", key="deploy")
    new = added(cli, "Deploys happen on weekdays", key="deploy")
    gone = cli.json("supersede", old, new, "-m", "deploy window changed")
    assert gone["memory"]["status"] == "superseded" and gone["memory"]["superseded_by"] == new
    assert cli.json("log")[0]["message"] == "deploy window changed"
    archived = cli.json("archive", new)["memory"]
    assert archived["tier"] == "archive"
    restored = cli.json("restore", new, "--tier", "long")["memory"]
    assert restored["tier"] == "long" and restored["version"] == 3
    ended = cli.json("invalidate", new, "--at", "2020-01-02")["memory"]
    assert ended["status"] == "invalidated" and ended["valid_to"].startswith("2020-01-02T00:00")
    assert cli.json("find") == []
    assert "invalidate" in cli("show", str(cli.json("log")[0]["seq"])).stdout


def test_short_ids_from_the_tables_work_as_arguments(cli):
    mid = added(cli, "The user prefers tea")
    other = added(cli, "The user rides a bike")
    table = cli("find").stdout.splitlines()
    short = next(line.split()[0] for line in table if "prefers tea" in line)
    assert short.startswith("…") and mid.endswith(short[1:]) and len(short) >= 8
    assert cli.json("archive", short)["memory"]["id"] == mid
    assert cli.json("get", mid[-9:])["id"] == mid
    assert cli.json("get", mid[:31])["id"] == mid or mid[:31] == other[:31]
    missing = cli("archive", "…0000000", code=1)
    assert missing.stderr == "error: id 1='…0000000': not found\n"
    few = cli("get", "abc", code=1)
    assert "at least 4 of its last digits" in few.stderr


def test_forget_invalidates_or_purges_after_a_confirmation(cli):
    kept = added(cli, "The office is in Lyon")
    out = cli.json("forget", kept)
    assert out["op"] == "invalidate" and out["memory"]["status"] == "invalidated"
    secret = added(cli, "The user's card number is 4242")
    refused = cli("forget", secret, "--purge", input="n\n", code=1)
    assert "Purge" in refused.stderr and "erased from every version" in refused.stderr
    assert cli.json("get", secret)["content"] == "The user's card number is 4242"
    asked = cli("forget", secret, "--purge", input="y\n")
    assert "purge:" in asked.stdout
    versions = cli.json("history", secret)
    assert [v["content"] for v in versions] == ["", ""] and versions[-1]["status"] == "purged"
    another = added(cli, "Another secret")
    assert cli.json("forget", another, "--purge", "--yes")["memory"]["status"] == "purged"


def test_trace_begin_step_finish(cli):
    begun = cli.json("trace", "begin", "Fix the flaky test", "--scope", "planner")
    trace = begun["trace"]
    first = cli.json("trace", "step", trace, "Ran the suite: one failure in five")
    second = cli.json("trace", "step", "…" + trace[-7:], "Pinned the clock", "--kind", "procedure")
    assert (first["memory"]["step"], second["memory"]["step"]) == (1, 2)
    assert second["memory"]["scope"] == "planner" and second["memory"]["kind"] == "procedure"
    done = cli.json("trace", "finish", trace, "--status", "failed")
    assert done["status"] == "failed"
    again = cli("trace", "finish", trace, code=1)
    assert "trace is already failed" in again.stderr
    steps = cli.json("find", "--trace", trace)
    assert [m["step"] for m in steps] == [0, 1, 2]
    assert "step 1 of trace" in cli("trace", "step", cli.json("trace", "begin", "t")["trace"],
                                     "s").stdout  # fmt: skip


def test_writes_stay_inside_their_tenant(cli):
    mine = added(cli, "Team A's secret")
    other = cli("archive", mine, tenant="team-b", code=1)
    assert "not found" in other.stderr
    assert cli("forget", mine, "--purge", "--yes", tenant="team-b", code=1)
    assert cli("trace", "step", mine, "x", tenant="team-b", code=1)
    assert cli.json("get", mine)["tier"] == "short"
    assert cli.json("find", tenant="team-b") == []


def test_writes_to_a_missing_store_create_nothing(tmp_path):
    from click.testing import CliRunner

    from memcommit.cli import main

    path = tmp_path / "typo.db"
    result = CliRunner().invoke(main, ["archive", "0" * 32, "--store", str(path)])
    assert result.exit_code == 1 and "no such store" in result.stderr
    assert not path.exists()
    begun = CliRunner().invoke(main, ["trace", "begin", "a task", "--store", str(path)])
    assert begun.exit_code == 0 and path.exists()  # a write that needs nothing creates the store
    with memcommit.open(str(path)) as store:
        assert store.tenant("default").find()[0].content == "a task"


def test_cli_writes_equal_the_python_api(cli, target):
    """The CLI's update leaves the same versions as Transaction.update does."""
    mid = added(cli, "tea", key="drink")
    cli("update", mid, "--tag", "pref", "--tag", "drink", "--always")
    store = open_store(target, create=False)
    try:
        latest = store.tenant("default").get(mid)
    finally:
        store.close()
    assert latest.tags == ("pref", "drink") and latest.always is True and latest.version == 2


def test_short_commit_ids_from_the_log_work_as_arguments(cli):
    added(cli, "first fact")
    added(cli, "second fact")
    commits = cli.json("log")
    first, second = reversed(commits)
    shown = short_ids(c["id"] for c in commits)  # longer than 7 when the suffix is all digits
    short = shown[first["id"]]
    assert short in cli("log").stdout
    assert cli.json("show", short)["seq"] == first["seq"]
    assert [m["content"] for m in cli.json("find", "--as-of", short)] == ["first fact"]
    assert [c["op"] for c in cli.json("diff", short, shown[second["id"]])] == ["add"]
    assert "not found" in cli("show", "…fffffff", code=1).stderr


def test_a_correction_added_without_always_still_always_loads(cli):
    rule = added(cli, "Never deploy on Fridays", kind="correction")
    added(cli, "Billing listens on port 8080")
    assert cli.json("get", rule)["always"] is True
    recalled = cli.json("recall", "billing port", "--words", "3")
    assert recalled["selected"][0]["id"] == rule


def test_updating_a_memory_into_a_correction_makes_it_always_load(cli):
    mid = added(cli, "Deploys need a second reviewer")
    assert cli.json("update", mid, "--kind", "correction")["memory"]["always"] is True
    kept = cli.json("update", mid, "--content", "Deploys need two reviewers", "--not-always")
    assert kept["memory"]["always"] is False


def test_writes_that_change_nothing_say_so_and_commit_nothing(cli):
    mid = added(cli, "The user prefers tea", importance="0.5")
    head = cli.json("log")[0]["seq"]
    restored = cli("restore", mid).stdout  # not archived: nothing to bring back
    assert "unchanged, still version 1" in restored and "nothing was committed" in restored
    same = cli.json("update", mid, "--content", "The user prefers tea", "--importance", "0.5")
    assert same["commit"] is None and same["memory"]["version"] == 1
    assert cli.json("log")[0]["seq"] == head
    assert [v["version"] for v in cli.json("history", mid)] == [1]
    moved = cli.json("update", mid, "--content", "The user prefers tea", "--importance", "0.8")
    assert moved["commit"]["seq"] == head + 1 and moved["memory"]["version"] == 2
    assert cli.json("show", str(head + 1))["changes"][0]["detail"] == {"fields": ["importance"]}

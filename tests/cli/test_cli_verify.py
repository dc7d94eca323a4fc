"""``memcommit verify`` and ``memcommit witness``: the API's answers, one line each, exit codes."""

from __future__ import annotations

import memcommit


def open_target(target: str):
    if target.startswith("postgresql://"):
        url, _, schema = target.partition("?schema=")
        return memcommit.open(url, schema=schema)
    return memcommit.open(target)


def test_verify_and_witness_on_a_clean_store(cli):
    cli("add", "the user prefers tea")
    cli("add", "the user lives in Lyon")
    line = cli("witness").stdout.strip()
    assert line.startswith("memcommit-witness/1 seq=2 id=")
    assert cli.json("witness")["text"] == line
    out = cli("verify", "--expect", line).stdout
    assert out.startswith("ok: 2 commits and 2 versions after commit 0 verify")
    report = cli.json("verify", "--since", "1")
    assert report["ok"] and (report["after"], report["commits"]) == (1, 1)
    assert cli.json("verify", "--since", line)["commits"] == 0


def test_verify_names_the_first_problem_and_exits_1(cli):
    cli("add", "the user prefers tea")
    line = cli("witness").stdout.strip()
    cli("add", "the user lives in Lyon")
    with open_target(cli.target) as store:
        first = store.find()[0]
        store.backend._write_all(  # below the API: as an attacker with the database would
            "UPDATE versions SET content = 'coffee' WHERE id = "
            + ("%s" if "postgresql" in cli.target else "?"),
            [(first.id,)],
        )
    result = cli("verify", code=1)
    assert f"commit 1, memory {first.id} version 1: edited" in result.stdout
    report = cli.json("verify", code=1)
    assert report["problems"][0]["kind"] == "edited"
    assert report["problems"][0]["memory_id"] == first.id
    assert cli.json("verify", "--since", line)["ok"]  # only the commit after it


def test_a_bad_witness_is_one_line(cli):
    cli("add", "x")
    result = cli("verify", "--expect", "not a witness", code=1)
    assert result.stderr.startswith("error: expect='not a witness': must be a witness line")

"""Short ids made only of decimal digits are never taken for a commit seq, nor one for them."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

import memcommit
from memcommit.cli import main
from memcommit.cli.ids import ELLIPSIS, short_ids
from memcommit.store import ids

#: Commits made at most while looking for an id of the wanted shape (each has a few % chance).
TRIES = 800


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(autouse=True)
def seeded_commit_ids(monkeypatch):
    """The same commit ids every run: their random part comes from a seeded generator here.

    Commit ids take 20 hex digits from the operating system, so without this
    about one run in 130 found no id of the wanted shape within ``TRIES`` commits.
    """
    draw = random.Random(20261201)
    monkeypatch.setattr(ids.os, "urandom", draw.randbytes)


def commit_until(store, wanted):
    """Commit one memory at a time until a commit's id is ``wanted``; that commit."""
    for n in range(TRIES):
        with store.commit(message=f"note {n}") as tx:
            tx.add(f"note {n}")
        if wanted(tx.result):
            return tx.result
    pytest.fail(f"no commit id of the wanted shape in {TRIES} commits")


def test_a_shown_short_id_is_never_a_plain_number():
    ids = ["00000000000000000000000ab1234567", "0000000000000000000000000c765432"]
    shown = short_ids(ids)
    assert shown == {ids[0]: ELLIPSIS + "b1234567", ids[1]: ELLIPSIS + "c765432"}
    assert short_ids(["12345678"]) == {"12345678": "12345678"}  # a whole id stays whole


def test_show_finds_the_commit_whose_short_id_ends_in_digits(tmp_path):
    path = str(tmp_path / "digits.db")
    with memcommit.open(path) as store:
        found = commit_until(store, lambda c: c.id[-7:].isdigit())
    shown = run("log", "--store", path)
    assert f"{ELLIPSIS}{found.id[-7:]}" not in shown.split()  # shown with a letter before
    short = next(w for w in shown.split() if w.startswith(ELLIPSIS) and found.id.endswith(w[1:]))
    assert not short[1:].isdigit()
    for typed in (short, short[1:], found.id[-7:]):
        assert f"commit {found.seq} " in run("show", typed, "--store", path)


def test_a_number_that_is_both_a_seq_and_a_short_id_is_refused(tmp_path):
    path = str(tmp_path / "both.db")
    with memcommit.open(path) as store:
        found = commit_until(
            store,
            lambda c: c.id[-4:].isdigit() and 1 <= int(c.id[-4:]) <= c.seq,
        )
    number = found.id[-4:]
    out = run("show", number, "--store", path, code=1)
    assert f"is both commit seq {int(number)} and commit {found.id}" in out
    assert f"commit {found.seq} " in run("show", ELLIPSIS + number, "--store", path)

"""Tables at 80 columns: nothing cut mid-word without "…", and ids that can be told apart."""

from __future__ import annotations

import json
import string

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import memcommit
from memcommit.cli import main
from memcommit.cli.ids import ELLIPSIS, MIN_ID, short_ids
from memcommit.cli.tables import preview, when

CONTENTS = [
    "The user prefers tea in the morning and coffee after lunch.",
    "Deploys to production happen on Tuesdays and Thursdays after 10:00 unless frozen.",
    "Runbook: https://wiki.example.com/runbooks/checkout/database-timeouts-and-pool-exhaustion",
    "CI runs the checkout test suite on two cores in about six minutes.",
    "Never rerun a flaky checkout test blindly: read its logs first.",
    "ok",
]
QUERY = "checkout test"


@pytest.fixture
def db(tmp_path) -> str:
    """Memories made in one commit (their ids share all but their last digits), long text."""
    path = str(tmp_path / "wide.db")
    with memcommit.open(path) as store:
        with store.commit(message="learn the project", author="agent") as tx:
            for n, text in enumerate(CONTENTS):
                tx.add(text, kind="correction" if n == 4 else "fact", scope="planner")
        with store.commit(
            message="a long commit message that explains in some detail why the facts changed",
            author="maintenance-robot",
        ) as tx:
            tx.add("Deploys to production happen on weekdays.", key="deploy")
    return path


def render(*args: str, columns: int) -> str:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout


def vocabulary(db: str, *args: str) -> set[str]:
    """Every whole word the command can show: its wide rendering and its JSON values."""
    wide = render(*args, "--wide", "--store", db, columns=400)
    data = json.loads(render(*args, "--json", "--store", db, columns=400))
    words = set(wide.split())
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            words.update(item.split())
    return words


def full_ids(db: str) -> set[str]:
    with memcommit.open(db) as store:
        view = store.tenant("default")
        return {m.id for m in view.find(live=False)} | {c.id for c in view.log()}


COMMANDS = [("find",), ("log",), ("recall", QUERY, "--explain")]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_80_columns_cut_no_word_without_an_ellipsis(db, args):
    narrow = render(*args, "--store", db, columns=80)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    words = vocabulary(db, *args)
    ids = full_ids(db)
    for token in narrow.split():
        if token.endswith(ELLIPSIS) or set(token) <= set("─━│┃┏┓┗┛┡┩╇┳┻╋"):
            continue
        if token.startswith(ELLIPSIS):
            assert any(i.endswith(token[1:]) for i in ids), token
            continue
        assert token in words, f"{token!r} is cut without an ellipsis in:\n{narrow}"


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_80_columns_show_ids_that_can_be_told_apart(db, args):
    narrow = render(*args, "--store", db, columns=80)
    shown = [token for token in narrow.split() if token.startswith(ELLIPSIS)]
    expected = {"find": 7, "log": 2, "recall": 7}[args[0]]
    assert len(shown) == expected and len(set(shown)) == expected, narrow


def test_times_read_as_minutes(db):
    out = render("log", "--store", db, columns=80)
    with memcommit.open(db) as store:
        first = store.log()[-1]
    assert when(first.time) in out and first.time.isoformat() not in out


def test_wide_shows_whole_ids_and_text(db):
    out = render("find", "--wide", "--store", db, columns=250)
    assert all(i in out for i in full_ids(db) if len(i) == 32 and not i.startswith("0000"))
    assert CONTENTS[2] in out


@given(st.sets(st.text(alphabet="0123456789abcdef", min_size=32, max_size=32), max_size=40))
def test_short_ids_are_unique_suffixes(ids):
    shown = short_ids(ids)
    assert set(shown) == ids
    assert len(set(shown.values())) == len(ids)
    for full, short in shown.items():
        suffix = short.removeprefix(ELLIPSIS)
        assert full.endswith(suffix) and len(suffix) >= MIN_ID
        assert not any(o != full and o.endswith(suffix) for o in ids)


@given(st.text(alphabet=string.ascii_letters + " ", max_size=300), st.integers(5, 200))
def test_preview_cuts_at_a_word_and_says_so(text, limit):
    cut = preview(text, limit)
    assert len(cut) <= limit or " " not in text.strip()
    if cut.endswith(ELLIPSIS) and cut != " ".join(text.split()):
        assert " ".join(text.split()).startswith(cut[:-1])

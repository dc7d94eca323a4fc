"""Parameters are checked like every other input: a token counter's answers, opening targets."""

from __future__ import annotations

import math

import pytest

import memcommit
from memcommit import Tokens
from memcommit.errors import InvalidInput


@pytest.fixture
def view(make_store, now):
    view = make_store().tenant("acme")
    with view.commit(message="seed", author="t", now=now) as tx:
        for n in range(4):
            tx.add(f"Deploys of service {n} happen on weekdays after the standup.")
    return view


def _boom(text: str) -> int:
    raise RuntimeError("tokenizer offline")


@pytest.mark.parametrize(
    ("counter", "said"),
    [
        (lambda text: -1, "returned -1"),
        (lambda text: 0, "returned 0"),
        (lambda text: math.nan, "returned nan"),
        (lambda text: "3", "returned '3'"),
        (lambda text: 2.0, "returned 2.0"),
        (lambda text: True, "returned True"),
        (_boom, "raised RuntimeError('tokenizer offline')"),
    ],
)
def test_a_token_counters_bad_answer_is_a_typed_error_naming_it(view, now, counter, said):
    with pytest.raises(InvalidInput) as refused:
        view.recall("deploys weekdays", budget=Tokens(5, counter), now=now, explain=True)
    assert refused.value.field == "counter"
    assert refused.value.value is counter
    assert said in str(refused.value)


def test_a_good_counter_is_charged_as_it_answers(view, now):
    def count(text: str) -> int:
        return len(text.split())

    ctx = view.recall("deploys weekdays", budget=Tokens(20, count), now=now, explain=True)
    assert len(ctx.selected) == 2 and ctx.used == {"context": 20}
    assert Tokens(5, count) == Tokens(5, count)
    assert repr(count) in repr(Tokens(5, count))


@pytest.mark.parametrize(
    "target",
    [
        "agent\x00.db",
        "sqlite://agent\x00.db",
        "postgresql://postgres@127.0.0.1:5432/te\x00st",
        "postgresql://[bad/test",
        "postgresql://me:secret@[::1/test?schema=x",
    ],
)
def test_a_target_no_backend_can_open_is_invalid_input_naming_it(tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        memcommit.open(target)
    assert refused.value.field == "target"
    assert "secret" not in str(refused.value)
    assert target.split("\x00")[0].split("secret")[0] in refused.value.value
    assert list(tmp_path.iterdir()) == []


def test_a_path_object_with_a_nul_is_refused_the_same_way(tmp_path):
    with pytest.raises(InvalidInput, match="NUL"):
        memcommit.open(tmp_path / "agent\x00.db")

"""No path answers differently for another tenant's id than for an unused one (defect 7)."""

from __future__ import annotations

import pytest

from memcommit.errors import InvalidInput, NotFound


@pytest.fixture
def store(make_store, now):
    store = make_store()
    with store.commit(message="seed", author="t", now=now) as tx:
        tx.add("Team B's private note.", id="b-secret", tenant="team-b")
    return store


def _answer(call) -> tuple[str, str]:
    try:
        call()
    except (InvalidInput, NotFound) as exc:
        return type(exc).__name__, str(exc).replace("b-secret", "ID").replace("never-used", "ID")
    return "accepted", ""


def test_adding_with_an_explicit_id_reveals_nothing_through_a_view(store):
    view = store.tenant("team-a")
    answers = []
    for memory_id in ("b-secret", "never-used"):
        with pytest.raises(InvalidInput) as caught, view.commit(message="m", author="a") as tx:
            tx.add("probe", id=memory_id)
        answers.append((caught.value.field, caught.value.reason))
    assert answers[0] == answers[1]
    assert store.tenant("team-b").get("b-secret").content == "Team B's private note."
    assert view.find() == []


def _invalidate(view, memory_id):
    with view.commit(message="m", author="a") as tx:
        tx.invalidate(memory_id)


def _update(view, memory_id):
    with view.commit(message="m", author="a") as tx:
        tx.update(memory_id, content="x")


@pytest.mark.parametrize(
    "probe",
    [lambda v, i: v.get(i), lambda v, i: v.history(i), _invalidate, _update],
    ids=["get", "history", "invalidate", "update"],
)
def test_every_probe_by_id_answers_alike(store, probe):
    view = store.tenant("team-a")
    assert _answer(lambda: probe(view, "b-secret")) == _answer(lambda: probe(view, "never-used"))
    assert len(store.log()) == 1

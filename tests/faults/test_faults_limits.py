"""One limits table, enforced before anything is written, the same on both backends (defect 5).

Each value here was once accepted and then broke every read after it (or
failed on one backend only, or raised an untyped error).
"""

from __future__ import annotations

import io
import json

import pytest

import memcommit
from memcommit.errors import InvalidInput
from memcommit.inputs import LIMITS
from memcommit.store.transfer import export_jsonl

LONE = "\ud800"
TEN_MB = "x" * (10 * 1024 * 1024)


def _deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


ADD_CASES = {
    "lone surrogate in a metadata value": ({"metadata": {"note": LONE}}, "metadata"),
    "lone surrogate in a metadata key": ({"metadata": {LONE: 1}}, "metadata"),
    "NUL in metadata": ({"metadata": {"note": "a\x00b"}}, "metadata"),
    "10 MB of metadata": ({"metadata": {"blob": TEN_MB}}, "metadata"),
    "10 MB key": ({"key": TEN_MB}, "key"),
    "deep nesting": ({"metadata": _deep(5000)}, "metadata"),
    "a tag past the name limit": ({"tags": ["t" * (LIMITS["name"] + 1)]}, "tags"),
}


@pytest.mark.parametrize("case", sorted(ADD_CASES))
def test_add_refuses_what_could_not_be_read_back(make_store, case, now):
    fields, field = ADD_CASES[case]
    store = make_store()
    with store.commit(message="keep", author="t", now=now) as tx:
        kept = tx.add("a memory that stays", tenant="acme")
    with pytest.raises(InvalidInput) as caught, store.commit(message="m", author="t") as tx:
        tx.add("content", tenant="acme", **fields)
    assert caught.value.field == field
    assert [m.id for m in store.find(tenant="acme")] == [kept.id]
    out = io.StringIO()
    export_jsonl(store, out)  # every read still works
    assert store.check().ok


MESSAGE_CASES = {
    "lone surrogate": "saved " + LONE,
    "NUL": "saved\x00",
    "10 MB": TEN_MB,
}


@pytest.mark.parametrize("case", sorted(MESSAGE_CASES))
def test_commit_messages_follow_the_same_rules(make_store, case):
    store = make_store()
    with (
        pytest.raises(InvalidInput) as caught,
        store.commit(message=MESSAGE_CASES[case], author="t") as tx,
    ):
        tx.add("content", tenant="acme")
    assert caught.value.field == "message"
    with pytest.raises(InvalidInput) as caught, store.commit(message="ok", author="t") as tx:
        tx.add("content", tenant="acme")
        tx.message = MESSAGE_CASES[case]
    assert caught.value.field == "message"
    assert store.log() == []


def test_a_message_at_the_limit_is_accepted_and_round_trips(make_store):
    store = make_store()
    message = "m" * LIMITS["message"]
    with store.commit(message=message, author="t") as tx:
        tx.add("content", tenant="acme")
    assert store.log()[0].message == message


def test_metadata_at_the_depth_limit_is_accepted(make_store):
    store = make_store()
    deep = _deep(LIMITS["depth"] - 1)
    with store.commit(message="m", author="t") as tx:
        m = tx.add("content", tenant="acme", metadata=deep)
    assert store.get(m.id).metadata == json.loads(json.dumps(deep))


def test_a_bad_pool_is_an_invalid_input_naming_the_pool():
    with pytest.raises(InvalidInput) as caught:
        memcommit.Pool("knowledge", -1, 5)
    assert caught.value.field == "pool" and "max_tokens" in str(caught.value)

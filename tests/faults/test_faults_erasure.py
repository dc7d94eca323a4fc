"""Purge really erases: no interface copies content into commit messages, and no file keeps it.

Defect 3 of the reliability issue: the MCP tools copied 60 characters of content
into commit messages, SQLite's ``-wal`` file kept old page images while a
connection stayed open, and PostgreSQL kept old row versions until VACUUM.
"""

from __future__ import annotations

import io
import uuid

import pytest
from faults_helpers import holding, postgres_files, sqlite_files

from memcommit.interfaces.agent import AgentMemory
from memcommit.store.transfer import export_jsonl


@pytest.fixture
def secret() -> str:
    return f"The vault code is {uuid.uuid4().hex} and nobody may keep it."


def test_write_tools_never_copy_content_into_messages(make_store, secret):
    agent = AgentMemory(make_store(), "acme")
    agent.remember(secret)
    agent.correct(f"Never say {secret}")
    trace = agent.begin_task(f"Rotate {secret}")["trace_id"]
    agent.add_step(trace, f"Rotated {secret}")
    agent.finish_task(trace)
    messages = [c["message"] for c in agent.log(limit=50)["commits"]]
    assert len(messages) == 5
    assert not [m for m in messages if "vault" in m or secret[:20] in m]


def test_purge_leaves_the_text_in_no_file_while_the_store_stays_open(
    make_store, store_backend, secret, request
):
    store = make_store()
    agent = AgentMemory(store, "acme")
    memory_id = agent.remember(secret)["id"]
    with store.commit(message="other work", author="t") as tx:
        tx.add("A neighbour row that stays.", tenant="acme")
    agent.forget(memory_id, mode="purge", confirm=memory_id)

    if store_backend == "sqlite":
        files = sqlite_files(store)
    else:
        url = request.getfixturevalue("postgres_server")
        files = postgres_files(store, url, ("versions", "commits"))
    assert files
    assert holding(files, secret[18:50]) == []
    out = io.StringIO()
    export_jsonl(store, out)
    assert secret[18:50] not in out.getvalue()
    assert store.check().ok


def test_scrub_is_refused_inside_a_commit(make_store):
    from memcommit.errors import InvalidInput

    store = make_store()
    with pytest.raises(InvalidInput, match="scrub"), store.commit(message="m", author="t"):
        store.scrub()
    assert store.scrub() is True

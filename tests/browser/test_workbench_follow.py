"""The workbench follows a store other processes write to: it keeps what a commit left alone,
drops what it changed, never mixes two recalls in one table, and nothing waits for recall().

Every test here fails on the workbench before the review of its caching (issues 1-3):
the tiers read every memory under the lock recall() held, a commit of any tenant
dropped every kept result, and a page of rows named no result.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest
from workbench_helpers import running

import memcommit
from memcommit.store.tenant import TenantView
from memcommit.workbench import StoreSource, make_server
from memcommit.workbench import source as source_module

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def seed(path: Path) -> None:
    """Two tenants of a few notes each."""
    with memcommit.open(str(path)) as store, store.commit(message="seed", now=NOW) as tx:
        for i in range(12):
            tx.add(f"deploy note {i} about the payments queue", tenant="alpha")
            tx.add(f"deploy note {i} about the invoices queue", tenant="beta")


def commit(path: Path, tenant: str, text: str) -> None:
    """A commit by another process, as far as the workbench knows (another Store object)."""
    with memcommit.open(str(path)) as other, other.commit(message="other", now=NOW) as tx:
        tx.add(text, tenant=tenant)


@pytest.fixture
def served(tmp_path):
    """(source, path) over a read-only store of two tenants."""
    path = tmp_path / "m.db"
    seed(path)
    source = StoreSource(memcommit.open(str(path), read_only=True), clock=lambda: NOW)
    yield source, path
    source.close()


@pytest.fixture
def recalls(monkeypatch) -> list[str]:
    """The tenant of every recall() the workbench runs, in order."""
    ran: list[str] = []
    real = source_module.run_recall

    def counted(store, request, **kw):
        ran.append(request.tenant)
        return real(store, request, **kw)

    monkeypatch.setattr(source_module, "run_recall", counted)
    return ran


def asked(tenant: str, **more: str) -> dict[str, list[str]]:
    return {"tenant": [tenant], "query": ["deploy queue"], **{k: [v] for k, v in more.items()}}


def test_a_commit_of_another_tenant_keeps_the_kept_results(served, recalls) -> None:
    source, path = served
    source.recall(asked("alpha"))
    source.rows(asked("alpha"))
    commit(path, "beta", "deploy note for beta only")
    source.recall(asked("alpha"))
    source.rows(asked("alpha", offset="10"))
    assert recalls == ["alpha"]  # beta's commit left alpha's result be
    commit(path, "alpha", "deploy note for alpha")
    source.recall(asked("alpha"))
    assert recalls == ["alpha", "alpha"]  # alpha's own commit is seen
    assert source.rows(asked("alpha"))["total"] == 13


def test_a_page_names_its_result_and_a_changed_one_is_refused(served) -> None:
    source, path = served
    first = source.recall(asked("alpha"))
    page = source.rows(asked("alpha", result=first["result"], limit="5"))
    assert page["result"] == first["result"] and page["seq"] == first["seq"]
    commit(path, "alpha", "deploy queue deploy queue: a newer note")
    with pytest.raises(source_module.ResultGone) as gone:
        source.rows(asked("alpha", result=first["result"], offset="5", limit="5"))
    assert gone.value.field == "result" and "recall again" in gone.value.reason
    again = source.recall(asked("alpha"))
    assert again["result"] != first["result"] and again["seq"] == first["seq"] + 1
    assert source.rows(asked("alpha", result=again["result"]))["total"] == 13


def test_a_changed_result_is_a_409_naming_it(served) -> None:
    source, path = served
    for url in running(make_server(source)):
        query = "tenant=alpha&query=deploy"
        with urllib.request.urlopen(f"{url}api/recall?{query}") as response:
            result = json.load(response)["result"]
        commit(path, "alpha", "deploy: a newer note")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{url}api/rows?{query}&result={result}")
        error = json.load(refused.value)["error"]
        assert refused.value.code == 409
        assert (error["field"], error["value"]) == ("result", result)
        assert "recall again" in error["reason"]


def test_tiers_count_without_reading_every_memory(served, monkeypatch) -> None:
    source, _ = served
    finds: list[object] = []
    real = TenantView.find

    def spied(self, *args, **kwargs):
        finds.append(kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TenantView, "find", spied)
    tiers = source.tiers({"tenant": ["beta"]})
    assert tiers["partitions"][0]["counts"] == {"short": 12}
    assert finds == []


def test_log_and_tiers_are_read_again_only_when_their_tenant_changed(served, monkeypatch) -> None:
    source, path = served
    logs: list[str] = []
    real = TenantView.log

    def spied(self, **kwargs):
        logs.append(self.name)
        return real(self, **kwargs)

    monkeypatch.setattr(TenantView, "log", spied)
    source.log({"tenant": ["alpha"]})
    source.log({"tenant": ["alpha"]})
    commit(path, "beta", "a note for beta")
    source.log({"tenant": ["alpha"]})
    assert logs == ["alpha"]
    commit(path, "alpha", "a note for alpha")
    assert [c["message"] for c in source.log({"tenant": ["alpha"]})["commits"]] == [
        "other",
        "seed",
    ]
    assert source.tiers({"tenant": ["alpha"]})["partitions"][0]["counts"] == {"short": 13}
    assert logs == ["alpha", "alpha"]


def test_nothing_waits_for_a_recall_in_progress(served, monkeypatch) -> None:
    """A slow recall() of one tenant holds up no other request: not the log, not the tiers,
    not a kept result of another tenant."""
    source, _ = served
    source.recall(asked("beta"))  # kept
    release, started = threading.Event(), threading.Event()
    real = source_module.run_recall

    def slow(store, request, **kw):
        started.set()
        release.wait(10)
        return real(store, request, **kw)

    monkeypatch.setattr(source_module, "run_recall", slow)
    slow_one = threading.Thread(target=source.recall, args=(asked("alpha"),))
    slow_one.start()
    try:
        assert started.wait(5)
        answered: list[str] = []
        others = [
            threading.Thread(target=lambda: answered.append(str(source.tiers(asked("beta"))))),
            threading.Thread(target=lambda: answered.append(str(source.log(asked("beta"))))),
            threading.Thread(target=lambda: answered.append(str(source.recall(asked("beta"))))),
        ]
        for thread in others:
            thread.start()
        for thread in others:
            thread.join(timeout=5)
        assert len(answered) == 3 and slow_one.is_alive()
    finally:
        release.set()
        slow_one.join(timeout=10)


def test_a_new_tenant_reaches_the_list_and_config_says_the_commit(served) -> None:
    source, path = served
    before = source.config({})
    commit(path, "gamma", "a first note for gamma")
    after = source.config({})
    assert [t["id"] for t in after["tenants"]] == ["alpha", "beta", "gamma"]
    assert after["seq"] == before["seq"] + 1

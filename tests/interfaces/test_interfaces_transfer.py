"""export / import: the full history round-trips exactly, and a bad file changes nothing."""

from __future__ import annotations

import io
import json
import random
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import event, given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.errors import InvalidInput
from memcommit.store.transfer import export_jsonl, import_jsonl, replay_uses


def rich_history(path: Path, now) -> None:
    """A store that uses every kind of change, two tenants, traces and interleaved uses."""
    clock = iter(now + timedelta(minutes=i) for i in range(1000))
    store = memcommit.open(str(path), clock=lambda: next(clock))
    with store.commit(message="first facts", author="alice") as tx:
        editor = tx.add("user edits with vim", key="editor", tags=("tools",), importance=0.7)
        port = tx.add("billing on port 8080", key="billing.port", metadata={"src": "ops"})
        tx.update(port.id, content="billing on port 8081")  # two versions in one commit
        other = tx.add("tenant b keeps its own notes", tenant="team-b", session="s1")
        rule = tx.add("never force-push", kind="correction", always=True)
    with store.commit(message="changes", author="bob") as tx:
        newer = tx.add("user edits with helix", key="editor")
        tx.supersede(editor.id, newer.id)
        tx.invalidate(port.id)
        tx.move(other.id, "long")
        tx.archive(rule.id)
    with store.commit(message="page in and purge") as tx:
        tx.page_in(rule.id)
        secret = tx.add("api key is hunter2", tenant="team-b")
    with store.commit(message="purge") as tx:
        tx.purge(secret.id)
    with store.commit(message="tasks") as tx:
        done = tx.begin_trace("deploy billing", metadata={"ticket": 7})
        tx.step(done, "ran tests", tags=("ci",))
        tx.step(done, "deployed", importance=0.9)
        failed = tx.begin_trace("fix flaky test", tenant="team-b", session="s2")
        tx.step(failed, "error: still flaky", kind="event")
        tx.finish(done)
    with store.commit(message="end failed task") as tx:
        tx.finish(failed, status="failed")
        open_trace = tx.begin_trace("still going")
        tx.step(open_trace, "half way")
    store.record_uses([newer.id, port.id, newer.id])
    store.record_uses([rule.id, other.id, newer.id, rule.id])
    store.state_set("example", "policy", {"p": 0.25, "ghosts": ["a", "b"]})
    store.close()


def exported(path: Path) -> str:
    store = memcommit.open(str(path))
    try:
        out = io.StringIO()
        export_jsonl(store, out)
        return out.getvalue()
    finally:
        store.close()


def imported(path: Path, text: str):
    store = memcommit.open(str(path))
    try:
        return import_jsonl(store, io.StringIO(text))
    finally:
        store.close()


def everything(path: Path) -> dict:
    """What the store answers through its public API, for comparing two stores."""
    store = memcommit.open(str(path))
    try:
        log = store.log()
        ids = sorted({c.memory_id for commit in log for c in commit.changes if c.memory_id})
        return {
            "log": log,
            "history": {i: store.history(i) for i in ids},
            "traces": store.traces(),
            "usage": store.usage(),
            "tenants": store.tenants(),
            "state": store.state_get("example", "policy"),
            "as_of_2": store.find(as_of=2, live=False),
            "ok": store.check().ok,
        }
    finally:
        store.close()


def test_round_trip_is_exact(tmp_path, now):
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    rich_history(source, now)
    text = exported(source)
    summary = imported(target, text)
    assert summary.commits == 6
    assert summary.traces == 3
    assert summary.usages == 4
    assert summary.states == 3  # the use clock, the chain's record and the example
    assert exported(target) == text
    before, after = everything(source), everything(target)
    assert after == before
    assert after["ok"]


def test_use_clock_continues_where_it_stopped(tmp_path, now):
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    rich_history(source, now)
    imported(target, exported(source))
    results = []
    for path in (source, target):
        store = memcommit.open(str(path))
        some = sorted(store.usage())[0]
        results.append(store.record_uses([some]))
        store.close()
    assert results[0] == results[1]


def test_purged_content_stays_gone(tmp_path, now):
    source = tmp_path / "source.db"
    rich_history(source, now)
    assert "hunter2" not in exported(source)


@pytest.mark.parametrize(
    ("line", "edit", "field"),
    [
        (2, lambda r: r.update(seq=5), "line 2: seq"),
        (3, lambda r: r.update(importance=3), "line 3: importance"),
        (3, lambda r: r.update(kind="gossip"), "line 3: kind"),
        (3, lambda r: r.update(created_at="yesterday"), "line 3: created_at"),
        (3, lambda r: r.update(type="mystery"), "line 3: type"),
        (1, lambda r: r.update(format="csv"), "line 1: type"),
    ],
)
def test_bad_record_names_line_and_field_and_imports_nothing(tmp_path, now, line, edit, field):
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    rich_history(source, now)
    lines = exported(source).splitlines()
    record = json.loads(lines[line - 1])
    edit(record)
    lines[line - 1] = json.dumps(record)
    with pytest.raises(InvalidInput) as caught:
        imported(target, "\n".join(lines) + "\n")
    assert caught.value.field == field
    store = memcommit.open(str(target))
    assert store.head is None
    store.close()


def test_truncated_file_imports_nothing(tmp_path, now):
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    rich_history(source, now)
    lines = exported(source).splitlines()
    with pytest.raises(InvalidInput):
        imported(target, "\n".join(lines[: len(lines) // 2]) + "\n")
    with pytest.raises(InvalidInput, match="not JSON"):
        imported(target, lines[0] + "\n{oops\n")
    store = memcommit.open(str(target))
    assert store.head is None
    store.close()


def test_import_refuses_a_store_with_history(tmp_path, now):
    source = tmp_path / "source.db"
    rich_history(source, now)
    text = exported(source)
    with pytest.raises(InvalidInput) as caught:
        imported(source, text)
    assert caught.value.field == "store"
    assert exported(source) == text


OPS = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(["a", "b"]), st.sampled_from([None, "k1", "k2"])),
    st.tuples(st.just("update"), st.integers(0, 20), st.floats(0, 1)),
    st.tuples(st.just("invalidate"), st.integers(0, 20)),
    st.tuples(st.just("supersede"), st.integers(0, 20), st.integers(0, 20)),
    st.tuples(st.just("move"), st.integers(0, 20), st.sampled_from(memcommit.TIERS)),
    st.tuples(st.just("purge"), st.integers(0, 20)),
    st.tuples(st.just("trace"), st.integers(0, 3), st.sampled_from(["finished", "failed", None])),
    st.tuples(st.just("use"), st.lists(st.integers(0, 20), max_size=5)),
)


def apply(store, ops, made: list[str]) -> None:
    """Apply one commit's worth of ops; a bad op rolls that commit back, as in real use."""
    uses, new = [], []
    try:
        with store.commit(message=f"{len(ops)} ops", author="hypothesis") as tx:
            for op in ops:
                known = made + new
                pick = (lambda i, known=known: known[i % len(known)]) if known else None
                if op[0] == "add":
                    new.append(tx.add(f"memory {len(known)}", tenant=op[1], key=op[2]).id)
                elif op[0] == "trace":
                    trace = tx.begin_trace(f"task {len(made)}", tenant="a")
                    for n in range(op[1]):
                        tx.step(trace, f"step {n}")
                    if op[2]:
                        tx.finish(trace, status=op[2])
                elif pick is None:
                    continue
                elif op[0] == "update":
                    tx.update(pick(op[1]), importance=op[2])
                elif op[0] == "invalidate":
                    tx.invalidate(pick(op[1]))
                elif op[0] == "supersede":
                    tx.supersede(pick(op[1]), pick(op[2]))
                elif op[0] == "move":
                    tx.move(pick(op[1]), op[2])
                elif op[0] == "purge":
                    tx.purge(pick(op[1]))
                else:
                    uses += [pick(i) for i in op[1]]
    except memcommit.errors.MemcommitError:
        return
    made += new
    if uses:
        store.record_uses(uses)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(OPS, min_size=1, max_size=6), min_size=1, max_size=8))
def test_any_history_round_trips(commits):
    source = memcommit.open(":memory:")
    made: list[str] = []
    for ops in commits:
        apply(source, ops, made)
    text = io.StringIO()
    export_jsonl(source, text)
    target = memcommit.open(":memory:")
    import_jsonl(target, io.StringIO(text.getvalue()))
    again = io.StringIO()
    export_jsonl(target, again)
    assert again.getvalue() == text.getvalue()
    assert target.check().ok
    assert target.usage() == source.usage()
    assert target.log() == source.log()
    event(f"commits: {min(len(target.log()), 5)}")
    source.close()
    target.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_replayed_uses_give_the_same_counts(picks, rnd: random.Random):
    ids = [f"m{i}" for i in picks]
    rnd.shuffle(ids)
    usage: dict[str, tuple[int, int, int]] = {}
    for tick, memory_id in enumerate(ids, start=1):
        count, first, _ = usage.get(memory_id, (0, tick, tick))
        usage[memory_id] = (count + 1, first, tick)
    order = replay_uses(usage)
    replayed: dict[str, tuple[int, int, int]] = {}
    for tick, memory_id in enumerate(order, start=1):
        count, first, _ = replayed.get(memory_id, (0, tick, tick))
        replayed[memory_id] = (count + 1, first, tick)
    assert replayed == usage


def test_cli_export_then_import(tmp_path, now):
    from memcommit.cli import main

    source, target, dump = tmp_path / "source.db", tmp_path / "target.db", tmp_path / "dump.jsonl"
    rich_history(source, now)
    runner = CliRunner()
    out = runner.invoke(main, ["export", str(dump), "--store", str(source), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["commits"] == 6
    back = runner.invoke(main, ["import", str(dump), "--store", str(target), "--json"])
    assert back.exit_code == 0, back.output
    assert json.loads(back.output) == json.loads(out.output)
    assert exported(target) == dump.read_text(encoding="utf-8")
    again = runner.invoke(main, ["import", str(dump), "--store", str(target)])
    assert again.exit_code == 1
    assert "error: store=" in again.output

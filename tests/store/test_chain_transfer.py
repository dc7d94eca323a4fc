"""Export carries the chain, so a backup verifies on its own; import refuses one that does not.

The trailer's sha256 is a checksum anyone can recompute: every test below that
edits an export recomputes it, as an attacker would, and the chain still tells.
"""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from memcommit.errors import InvalidInput
from memcommit.store.transfer import RECORD_TYPES, export_jsonl, import_jsonl


@pytest.fixture
def source(store):
    with store.commit(message="facts") as tx:
        a = tx.add("the user prefers tea", tags=["drinks"])
        b = tx.add("the card number is 4111", metadata={"pii": True})
    with store.commit(message="corrections") as tx:
        tx.update(a.id, content="the user prefers green tea")
        tx.purge(b.id)
    with store.commit(message="more") as tx:
        tx.add("the deploy runs on Fridays")
    return store


def lines_of(store) -> list[dict]:
    out = io.StringIO()
    export_jsonl(store, out)
    return [json.loads(line) for line in out.getvalue().splitlines()[:-1]]


def text_of(records: list[dict]) -> str:
    """The records as an export file, with a trailer recomputed to match them."""
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records]
    counts = dict.fromkeys(RECORD_TYPES, 0)
    for r in records[1:]:
        counts[r["type"]] += 1
    digest = hashlib.sha256("".join(lines).encode()).hexdigest()
    trailer = {"type": "trailer", "lines": len(lines), "counts": counts, "sha256": digest}
    return "".join(lines) + json.dumps(trailer) + "\n"


def test_a_backup_carries_the_chain_and_comes_back_the_same(source, make_store):
    records = lines_of(source)
    assert records[0]["version"] == 4
    commits = [r for r in records if r["type"] == "commit"]
    assert [len(c["hash"]) for c in commits] == [64, 64, 64]
    versions = [r for r in records if r["type"] == "version"]
    erased = [v for v in versions if v["salt"] is None]
    assert len(erased) == 1 and erased[0]["content"] == "" and len(erased[0]["erased"]) == 64
    assert "card number is 4111" not in text_of(records)  # (bare "4111" turns up in random hex)

    target = make_store("copy.db")
    import_jsonl(target, io.StringIO(text_of(records)), expect=source.witness())
    assert target.witness() == source.witness()
    assert target.verify().ok and target.check().ok


def test_an_edited_backup_is_refused_at_its_commit(source, make_store):
    records = lines_of(source)
    number, version = next(
        (i, r) for i, r in enumerate(records, 1) if r.get("content") == "the user prefers green tea"
    )
    version["content"] = "the user prefers coffee"
    target = make_store("copy.db")
    with pytest.raises(InvalidInput) as caught:
        import_jsonl(target, io.StringIO(text_of(records)))
    commit_line = max(i for i, r in enumerate(records[:number], 1) if r["type"] == "commit")
    assert caught.value.field == f"line {commit_line}: hash"
    assert target.head is None  # nothing landed


def test_a_backup_with_a_rewritten_message_is_refused(source, make_store):
    records = lines_of(source)
    records[1]["message"] = "nothing to see"
    with pytest.raises(InvalidInput) as caught:
        import_jsonl(make_store("copy.db"), io.StringIO(text_of(records)))
    assert caught.value.field == "line 2: hash"


def test_a_backup_missing_its_chain_is_refused(source, make_store):
    records = lines_of(source)
    del records[1]["hash"]
    with pytest.raises(InvalidInput) as caught:
        import_jsonl(make_store("copy.db"), io.StringIO(text_of(records)))
    assert caught.value.field == "line 2: hash"
    records = lines_of(source)
    records[2]["salt"] = None  # neither salted nor erased
    with pytest.raises(InvalidInput) as caught:
        import_jsonl(make_store("copy2.db"), io.StringIO(text_of(records)))
    assert caught.value.field == "line 3: salt"


def test_an_older_backup_is_refused_against_a_newer_witness(source, make_store):
    old = lines_of(source)
    with source.commit() as tx:
        tx.add("after the backup")
    target = make_store("copy.db")
    with pytest.raises(InvalidInput) as caught:
        import_jsonl(target, io.StringIO(text_of(old)), expect=str(source.witness()))
    assert caught.value.field == "expect" and "behind" in caught.value.reason
    assert target.head is None


def test_a_backup_from_before_the_chain_is_hashed_on_import(source, make_store):
    records = lines_of(source)
    records[0]["version"] = 2
    for r in records:
        for name in ("hash", "salt", "digest", "erased"):
            r.pop(name, None)
    records = [r for r in records if r.get("namespace") != "memcommit" or r["key"] != "chain"]
    target = make_store("copy.db")
    import_jsonl(target, io.StringIO(text_of(records)))
    report = target.verify()
    assert report.ok and report.head.seq == 3 and report.sealed_upto == 3
    assert target.witness().hash != source.witness().hash  # fresh salts, a chain of its own

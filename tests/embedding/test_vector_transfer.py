"""Export, import and migrate carry the stored vectors; older exports still import."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import numpy as np
import pytest

import memcommit
from memcommit.embedding.hashed import HashEmbedder
from memcommit.errors import InvalidInput
from memcommit.store.migrate import migrate
from memcommit.store.transfer import export_jsonl, import_jsonl


def fill(store):
    """Two tenants' memories, one rewritten and archived, one purged, by two embedders."""
    with store.commit() as tx:
        a = tx.add("the user prefers tea")
        b = tx.add("a secret to forget")
        tx.add("another tenant's fact", tenant="bob")
    with store.commit() as tx:
        tx.update(a.id, content="the user prefers green tea")
        tx.archive(a.id)
        tx.purge(b.id)
    store.embed(HashEmbedder(dims=8))  # a second embedder
    return store


@pytest.fixture
def source(make_store):
    return fill(make_store("source.db", embedder="hash"))


def exported(store) -> list[dict]:
    out = io.StringIO()
    export_jsonl(store, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def text_of(records: list[dict], counted: tuple[str, ...]) -> str:
    """``records`` (header first, no trailer) as an export file, its trailer recomputed."""
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records]
    counts = dict.fromkeys(counted, 0)
    for r in records[1:]:
        counts[r["type"]] += 1
    digest = hashlib.sha256("".join(lines).encode()).hexdigest()
    trailer = {"type": "trailer", "lines": len(lines), "counts": counts, "sha256": digest}
    return "".join(lines) + json.dumps(trailer) + "\n"


ALL = ("commit", "version", "trace", "usage", "state", "vector")


def rows(store) -> list[tuple]:
    return store.backend.vector_rows(after=None, limit=1000)


def test_an_export_carries_every_vector_and_comes_back_byte_for_byte(source, make_store):
    records = exported(source)
    assert records[0]["version"] == 4
    vectors = [r for r in records if r["type"] == "vector"]
    assert len(vectors) == 4  # two live memories, two embedders
    assert records[-1]["counts"]["vector"] == 4
    copy = make_store("copy.db")
    summary = import_jsonl(copy, io.StringIO(text_of(records[:-1], ALL)))
    assert summary.vectors == 4
    assert rows(copy) == rows(source)
    assert np.array_equal(copy.vectors("hash-ngram-v1/64").matrix, source.vectors("hash").matrix)


def test_an_export_of_format_3_imports_without_vectors_and_they_are_filled(source, make_store):
    records = [r for r in exported(source)[:-1] if r["type"] != "vector"]
    records[0]["version"] = 3
    copy = make_store("old.db")
    summary = import_jsonl(copy, io.StringIO(text_of(records, ALL[:-1])))
    assert summary.vectors == 0 and rows(copy) == []
    assert copy.embed("hash").embedded == 2  # the live memory of each tenant
    assert np.array_equal(copy.vectors("hash").matrix, source.vectors("hash").matrix)


def test_migrate_copies_the_vectors_between_backends(tmp_path, postgres_server):
    import psycopg

    schema = "test_vectors_migrate"
    with memcommit.open(tmp_path / "source.db", embedder="hash") as store:
        fill(store)
    try:
        report = migrate(tmp_path / "source.db", postgres_server, target_options={"schema": schema})
        assert report.vectors == 4
        with (
            memcommit.open(postgres_server, schema=schema) as copy,
            memcommit.open(tmp_path / "source.db") as again,
        ):
            assert rows(copy) == rows(again) and len(rows(copy)) == 4
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def edited(source, change) -> str:
    records = exported(source)[:-1]
    vector = next(r for r in records if r["type"] == "vector" and r["tenant"] == "default")
    change(vector)
    return text_of(records, ALL)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r.update(vector="not base64!"), "vector"),
        (lambda r: r.update(vector=base64.b64encode(b"\0" * 12).decode()), "vector"),
        (lambda r: r.update(vector=base64.b64encode(b"\0" * 4 * r["dims"]).decode()), "vector"),
        (lambda r: r.update(dims=0), "dims"),
        (lambda r: r.update(id="nobody"), "id"),
        (lambda r: r.update(tenant="bob"), "id"),
        (lambda r: r.update(version=99), "id"),
    ],
)
def test_a_bad_vector_record_is_refused_naming_its_line_and_nothing_lands(
    source, make_store, change, field
):
    copy = make_store("bad.db")
    with pytest.raises(InvalidInput) as caught:
        import_jsonl(copy, io.StringIO(edited(source, change)))
    assert caught.value.field.startswith("line ") and caught.value.field.endswith(field)
    assert copy.log() == [] and rows(copy) == []

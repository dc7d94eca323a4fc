"""A store whose embedder is a service keeps working while the service is down, and a custom
embedder's name and size are checked before anything is written."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest
from embedding_server import embeddings_server

import memcommit
from memcommit.embedding.hashed import HashEmbedder
from memcommit.embedding.http import OpenAIEmbedder
from memcommit.errors import EmbedderError, InvalidInput

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
NOTES = ["her new Civic is silver", "the cat sleeps on the stove", "rent is due on Friday"]


def texts_sent(server) -> list[str]:
    return [text for request in server.requests for text in request["body"]["input"]]


def test_a_store_opens_finds_recalls_and_purges_while_its_embedding_service_is_down(make_store):
    with embeddings_server(dims=8) as server:
        spec = f"openai:m@{server.base_url}"
        store = make_store("outage", embedder=spec)
        with store.commit(now=NOW) as tx:
            ids = [tx.add(note).id for note in NOTES]
        assert len(store.vectors(tenant="default").ids) == 3
        store.close()
        server.mode, before = "error", len(server.requests)
        store = make_store("outage", embedder=spec)  # asks the service nothing
        assert len(server.requests) == before
    # the service is gone now
    assert [m.content for m in store.find()] == NOTES
    ctx = store.recall("silver civic", tenant="default", now=NOW)
    assert [m.id for m in ctx] == [ids[0]]
    assert ctx.note.startswith("ranked by words only: the query could not be embedded")
    assert ctx.to_dict()["note"] == ctx.note
    assert store.recall("silver civic", tenant="default", hybrid=False, now=NOW).note is None
    with pytest.raises(EmbedderError) as caught:
        store.recall("silver civic", tenant="default", hybrid=True, now=NOW)
    assert caught.value.field == "base_url"
    with store.commit(now=NOW) as tx:
        tx.purge(ids[2])
    assert [m.id for m in store.find()] == ids[:2]
    with embeddings_server(dims=8) as server:  # back, somewhere else: the same model's name
        store.close()
        store = make_store("outage", embedder=f"openai:m@{server.base_url}")
        ctx = store.recall("silver civic", tenant="default", now=NOW)
        assert ctx.note is None and "dense" in ctx.rows[0].components
        assert "dims" not in texts_sent(server)  # its size came with the query's answer


def test_a_service_whose_size_changed_is_refused_when_it_first_answers(make_store):
    with embeddings_server(dims=8) as server:
        store = make_store("resized", embedder=f"openai:m@{server.base_url}")
        with store.commit(now=NOW) as tx:
            tx.add(NOTES[0])
        store.close()
    with embeddings_server(dims=16) as server:  # the model behind the name changed
        store = make_store("resized", embedder=f"openai:m@{server.base_url}")
        with pytest.raises(InvalidInput) as caught:
            store.recall("civic", tenant="default", now=NOW)
        assert (caught.value.field, caught.value.value) == ("embedder", "openai:m")
        assert "16 dims" in str(caught.value) and "8-dim" in str(caught.value)
        with pytest.raises(InvalidInput) as caught:
            store.embed(tenant="default")
        assert caught.value.field == "embedder"
    assert store.vectors(tenant="default").dims == 8


class Custom:
    def __init__(self, name, dims) -> None:
        self.name, self.dims = name, dims

    def embed(self, texts, *, kind="passage"):
        return HashEmbedder(dims=4).embed(texts, kind=kind)


@pytest.mark.parametrize(
    ("name", "dims", "field"),
    [
        (5, 4, "name"),
        ("", 4, "name"),
        ("  ", 4, "name"),
        (None, 4, "name"),
        ("my-model-v1", np.int64(4), "dims"),
        ("my-model-v1", "4", "dims"),
        ("my-model-v1", 4.0, "dims"),
        ("my-model-v1", True, "dims"),
        ("my-model-v1", 0, "dims"),
    ],
)
def test_a_custom_embedder_with_a_bad_name_or_size_is_refused_before_anything_is_written(
    tmp_path, name, dims, field
):
    path = tmp_path / "custom.db"
    with pytest.raises(InvalidInput) as caught:
        memcommit.open(path, embedder=Custom(name, dims))
    assert caught.value.field == field
    assert caught.value.value is (name if field == "name" else dims)
    assert not path.exists()
    with memcommit.open(path) as store:
        with store.commit(now=NOW) as tx:
            tx.add(NOTES[0])
        with pytest.raises(InvalidInput) as caught:
            store.embed(Custom(name, dims))
        assert caught.value.field == field
        assert store.backend.embedders() == []


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_huge_and_tiny_numbers_from_a_service_keep_their_direction(scale):
    with embeddings_server(dims=8) as server:
        server.scale = scale
        client = OpenAIEmbedder("m", base_url=server.base_url)
        got = client.embed(NOTES)
        client.close()
    assert np.allclose(got, HashEmbedder(dims=8).embed(NOTES), atol=1e-6)

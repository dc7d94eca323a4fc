"""The embedders and their resolver: shapes, unit rows, determinism and typed errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcommit.embedding import Embedder, resolve
from memcommit.embedding.hashed import MAX_DIMS, HashEmbedder
from memcommit.embedding.vectors import answer, embedded, from_bytes, to_bytes
from memcommit.errors import EmbedderError, InvalidInput


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_hash_embedder_gives_unit_float32_rows_the_same_every_time():
    embedder = HashEmbedder(dims=32)
    texts = ["her new Civic is red", "she drives a car", ""]
    first = embedder.embed(texts)
    assert first.dtype == np.float32 and first.shape == (3, 32) and first.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(first, HashEmbedder(dims=32).embed(texts))
    assert np.array_equal(first, embedder.embed(texts, kind="query"))
    assert embedder.name == "hash-ngram-v1/32" and isinstance(embedder, Embedder)


def test_hash_embedder_puts_shared_words_closer_than_none():
    a, b, c = HashEmbedder(dims=256).embed(["red car parked", "a red car", "tomorrow's weather"])
    assert cosine(a, b) > cosine(a, c)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=6))
def test_every_text_embeds_to_a_unit_row(texts):
    matrix = embedded(HashEmbedder(dims=8), texts, "passage")
    assert matrix.shape == (len(texts), 8)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("dims", [0, 1, -3, 2.5, True, "64", 4097, 99999999999])
def test_hash_embedder_refuses_bad_dims(dims):
    with pytest.raises(InvalidInput) as caught:
        HashEmbedder(dims=dims)
    assert caught.value.field == "dims" and caught.value.value == dims


def test_an_unknown_kind_is_refused_naming_it():
    with pytest.raises(InvalidInput) as caught:
        HashEmbedder().embed(["x"], kind="document")
    assert caught.value.field == "kind" and "passage, query" in str(caught.value)


def test_stored_bytes_round_trip_exactly():
    matrix = HashEmbedder(dims=16).embed(["one", "two"])
    blobs = [to_bytes(row) for row in matrix]
    assert all(len(b) == 16 * 4 for b in blobs)
    assert np.array_equal(from_bytes(blobs, 16), matrix)
    assert from_bytes([], 16).shape == (0, 16)


def test_resolve_knows_the_names_and_passes_an_embedder_through():
    assert resolve("hash").name == "hash-ngram-v1/64"
    assert resolve(" hash:12 ").dims == 12
    assert resolve(f"hash:{MAX_DIMS}").dims == MAX_DIMS == 4096
    mine = HashEmbedder(dims=5)
    assert resolve(mine) is mine


@pytest.mark.parametrize(
    "spec",
    [
        "nope",
        "hash:x",
        "hash:",  # a size left out, not the default one
        "hash:²",  # a digit to str.isdigit, not to int()
        "hash:①",
        "hash:1",
        "hash:4097",
        "hash:99999999999",
        "hash:" + "9" * 5000,
        "openai:",
        "sentence-transformers:",
        "",
        3,
    ],
)
def test_resolve_refuses_an_unknown_name_listing_the_known(spec):
    with pytest.raises(InvalidInput) as caught:
        resolve(spec)
    assert caught.value.field == "embedder"
    assert "local" in str(caught.value) and "openai:MODEL" in str(caught.value)


class Wrong:
    """An embedder that answers wrongly in one chosen way."""

    name = "wrong/1"
    dims = 4

    def __init__(self, how: str) -> None:
        self.how = how

    def embed(self, texts, *, kind="passage"):
        out = np.tile(np.array([1.0, 0, 0, 0], dtype=np.float32), (len(texts), 1))
        if self.how == "dims":
            return out[:, :3]
        if self.how == "rows":
            return out[1:]
        if self.how == "values":
            out[0, 1] = np.nan
        if self.how == "norm":
            out *= 2
        return out


@pytest.mark.parametrize("how", ["dims", "rows", "values", "norm"])
def test_a_wrong_answer_is_an_embedder_error_naming_what(how):
    with pytest.raises(EmbedderError) as caught:
        embedded(Wrong(how), ["a", "b"], "passage")
    assert caught.value.field == how and caught.value.embedder == "wrong/1"


def test_no_texts_make_an_empty_matrix_without_a_call():
    assert embedded(Wrong("dims"), [], "query").shape == (0, 4)


@pytest.mark.parametrize(
    ("rows", "field"),
    [
        ([[1.0, 0.0], [1.0]], "values"),  # ragged
        ([["a", "b"]], "values"),
        ([[None, 1.0]], "values"),
        ([[True, False]], "values"),
        ([[10**400, 0.0]], "values"),  # no float holds it
        ([1.0, 0.0], "rows"),  # one vector, not a list of rows
        ("0.5", "rows"),
        ([[], []], "dims"),
    ],
)
def test_an_answer_that_is_not_rows_of_numbers_is_an_embedder_error(rows, field):
    with pytest.raises(EmbedderError) as caught:
        answer("lists/1", rows)
    assert caught.value.field == field and caught.value.embedder == "lists/1"


def test_an_answer_of_rows_of_numbers_is_a_float_matrix():
    got = answer("lists/1", [[1, 2], [3.5, 4]])
    assert got.dtype == np.float64 and got.tolist() == [[1.0, 2.0], [3.5, 4.0]]

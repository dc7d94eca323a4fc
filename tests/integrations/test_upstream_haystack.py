"""Haystack's own DocumentStore test kit (``haystack.testing``), against MemcommitDocumentStore.

Haystack ships its store conformance classes inside the ``haystack-ai`` package
(its sdist has no test folder): every sync and async class of
``haystack.testing.document_store`` and ``document_store_async`` runs here, on
both backends, with ``document_store`` a fresh memcommit index. The two tests
the kit leaves to each store (the default duplicate policy) are written here.
"""

from __future__ import annotations

import os
from importlib.metadata import version

import pytest
from deselected import HAYSTACK, VERSIONS
from upstream import require

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
kit = require("haystack.testing.document_store")
kit_async = require("haystack.testing.document_store_async")
hs = require("memcommit.integrations.haystack")
from haystack import Document  # noqa: E402
from haystack.document_stores.errors import DuplicateDocumentError  # noqa: E402

PACKAGE = "haystack-ai"
_upstream_deselected = HAYSTACK


def test_the_kit_is_the_pinned_version():
    assert version(PACKAGE) == VERSIONS[PACKAGE]


@pytest.fixture
def document_store(open_store):
    return hs.MemcommitDocumentStore(**open_store())


class TestDocumentStore(
    kit.DocumentStoreBaseExtendedTests,
    kit.CountDocumentsByFilterTest,
    kit.CountUniqueMetadataByFilterTest,
    kit.GetMetadataFieldsInfoTest,
    kit.GetMetadataFieldMinMaxTest,
    kit.GetMetadataFieldUniqueValuesTest,
):
    """The sync kit: count, write (every duplicate policy), filters (every operator), delete."""

    @pytest.fixture
    def document_store(self, document_store):
        return document_store

    def test_write_documents(self, document_store):
        """The default policy (NONE) fails on an existing id, as Haystack's in-memory store does."""
        doc = Document(content="test doc")
        assert document_store.write_documents([doc]) == 1
        with pytest.raises(DuplicateDocumentError):
            document_store.write_documents([doc])
        self.assert_documents_are_equal(document_store.filter_documents(), [doc])


class TestAsyncDocumentStore(
    kit_async.CountDocumentsAsyncTest,
    kit_async.WriteDocumentsAsyncTest,
    kit_async.DeleteDocumentsAsyncTest,
    kit_async.FilterDocumentsAsyncTest,
    kit_async.DeleteAllAsyncTest,
    kit_async.DeleteByFilterAsyncTest,
    kit_async.UpdateByFilterAsyncTest,
    kit_async.CountDocumentsByFilterAsyncTest,
    kit_async.CountUniqueMetadataByFilterAsyncTest,
    kit_async.GetMetadataFieldsInfoAsyncTest,
    kit_async.GetMetadataFieldMinMaxAsyncTest,
    kit_async.GetMetadataFieldUniqueValuesAsyncTest,
):
    """The async kit, the same store behind ``*_async`` methods."""

    @pytest.fixture
    def document_store(self, document_store):
        return document_store

    async def test_write_documents_async(self, document_store):
        """The default policy (NONE) fails on an existing id."""
        doc = Document(content="test doc")
        assert await document_store.write_documents_async([doc]) == 1
        with pytest.raises(DuplicateDocumentError):
            await document_store.write_documents_async([doc])
        self.assert_documents_are_equal(await document_store.filter_documents_async(), [doc])

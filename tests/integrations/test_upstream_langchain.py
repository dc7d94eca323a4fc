"""langchain-tests' standard suites against MemcommitVectorStore and MemcommitRetriever.

The vector store runs twice: with the suite's embedding (similarity is cosine)
and without one (similarity is recall's lexical relevance). Both backends.
"""

from __future__ import annotations

import pytest
from upstream import require

langchain = require("memcommit.integrations.langchain")
suites = require("langchain_tests.integration_tests")


class TestVectorStoreEmbedded(suites.VectorStoreIntegrationTests):
    """Similarity is the cosine of the suite's deterministic embedding."""

    @pytest.fixture
    def vectorstore(self, open_store):
        return langchain.MemcommitVectorStore(**open_store(), embedding=self.get_embeddings())


class TestVectorStoreLexical(suites.VectorStoreIntegrationTests):
    """No embedding: similarity is recall's lexical relevance."""

    @pytest.fixture
    def vectorstore(self, open_store):
        return langchain.MemcommitVectorStore(**open_store())


class TestRetriever(suites.RetrieversIntegrationTests):
    """Recall as a retriever, over a tenant holding a few matching memories."""

    @pytest.fixture(autouse=True)
    def _memory(self, open_store):
        opened = open_store()
        self.view = opened["store"].tenant(opened["tenant"])
        with self.view.commit(message="seed") as tx:
            for n in range(5):
                tx.add(f"deploy note {n}: deploys run on Tuesdays after the standup")

    @property
    def retriever_constructor(self):
        return langchain.MemcommitRetriever

    @property
    def retriever_constructor_params(self):
        return {"memory": self.view}

    @property
    def retriever_query_example(self):
        return "when do deploys run"

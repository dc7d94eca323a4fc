"""``import memcommit`` is cheap: each layer, and numpy with it, loads when first used.

Each test runs in a fresh interpreter, since this one has long loaded everything.
Behaviour only: which modules are loaded, and that every public name still works.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import memcommit

#: What a plain import must not pay for.
HEAVY = ("numpy", "rich", "psycopg", "mcp", "tiktoken", "pydantic")
#: The frameworks of the integrations, which only their own modules import.
FRAMEWORKS = (
    "langgraph",
    "langchain_core",
    "agents",
    "haystack",
    "autogen_core",
    "llama_index",
    "google.adk",
    "google.genai",
    "crewai",
)


def run_python(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; the JSON it prints on its last line."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` that are, or have a submodule, among ``modules``."""
    return [n for n in names if any(m == n or m.startswith(n + ".") for m in modules)]


def test_import_memcommit_loads_no_heavy_dependency():
    out = run_python(
        """
        import json, sys
        import memcommit
        print(json.dumps(sorted(sys.modules)))
        """
    )
    assert loaded(out, HEAVY) == []
    assert loaded(out, FRAMEWORKS) == []
    assert loaded(out, ("memcommit.integrations",)) == []
    assert loaded(out, ("memcommit.recall", "memcommit.tiers", "memcommit.compaction")) == []


def test_the_integrations_package_loads_no_framework():
    out = run_python(
        """
        import json, sys
        import memcommit.integrations
        print(json.dumps(sorted(sys.modules)))
        """
    )
    assert loaded(out, FRAMEWORKS) == []


def test_every_public_name_resolves_to_its_layers_object():
    out = run_python(
        """
        import importlib, json
        import memcommit

        layers = ["compaction", "errors", "model", "store", "tiers"]
        names = sorted({*memcommit.__all__, *layers} - set(dir(memcommit)))
        assert memcommit.tiers.LRU is memcommit.LRU
        assert memcommit.compaction.Compactor is memcommit.Compactor
        star = {}
        exec("from memcommit import *", star)
        layers = [
            importlib.import_module(f"memcommit.{name}")
            for name in ("compaction", "model", "recall", "store", "tiers")
        ]
        homes = {}
        for name in memcommit.__all__:
            value = getattr(memcommit, name)
            assert star[name] is value, name
            for layer in layers:
                if name in getattr(layer, "__all__", ()) or name in vars(layer):
                    homes[name] = getattr(layer, name) is value
        print(json.dumps({"missing_from_dir": names, "homes": homes}))
        """
    )
    assert out["missing_from_dir"] == []
    assert set(out["homes"]) == set(memcommit.__all__) - {"__version__", "errors"}
    assert all(out["homes"].values()), out["homes"]


def test_an_unknown_name_is_an_attribute_error():
    out = run_python(
        """
        import json
        import memcommit
        try:
            memcommit.Recall
        except AttributeError as exc:
            print(json.dumps(str(exc)))
        """
    )
    assert out == "module 'memcommit' has no attribute 'Recall'"


def test_memcommit_recall_stays_the_function_when_the_subpackage_loads_later():
    out = run_python(
        """
        import json, sys
        import memcommit
        import memcommit.recall.pipeline.budget  # the subpackage arrives before recall is asked for
        from memcommit.recall import Words
        pipeline = sys.modules["memcommit.recall.pipeline.run"]
        print(json.dumps({
            "function": memcommit.recall is pipeline.recall,
            "words": memcommit.Words is Words,
        }))
        """
    )
    assert out == {"function": True, "words": True}


def test_store_recall_loads_the_recall_layer_on_its_first_call(store_target, store_backend):
    """The store never imports recall; its first recall call loads it, on either backend."""
    target, options = store_target
    out = run_python(
        """
        import json, sys
        import memcommit

        store = memcommit.open(sys.argv[1], **json.loads(sys.argv[2]))
        with store.commit(message="note", author="test") as tx:
            kept = tx.add("Deploys happen on weekdays.", kind="fact", tenant="acme")
        before = "memcommit.recall" in sys.modules
        context = store.tenant("acme").recall("when do deploys happen")
        print(json.dumps({
            "before": before,
            "after": "memcommit.recall" in sys.modules,
            "selected": [m.id for m in context.selected] == [kept.id],
            "psycopg": "psycopg" in sys.modules,
        }))
        store.close()
        """,
        target,
        json.dumps(options),
    )
    assert out == {
        "before": False,
        "after": True,
        "selected": True,
        "psycopg": store_backend == "postgres",
    }

"""The import graph of src/, read from the modules' own import statements (ast).

Layers import downward only: poolsplit, errors, inputs, model and embedding know
nothing above them; the store knows only them; recall, tiers and compaction sit on the
store; the interfaces (cli, workbench, interfaces) on everything. Inside
recall, its wings import downward only too: the index imports neither scoring
nor pipeline, scoring never imports the pipeline. And no module takes part in
an import cycle, counting imports inside functions too.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {module_name(p): p for p in SRC.rglob("*.py")}
    return {name: path for name, path in found.items() if name.split(".")[0] in OURS}


OURS = ("memcommit", "poolsplit")


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of ours that ``name`` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                child = f"{base}.{alias.name}"
                out.add(child if child in known else base)
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the list of modules around it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[0] if parts[0] == "poolsplit" or len(parts) == 1 else parts[1]


#: What each lower layer may import besides itself (anything else is an upward edge).
ALLOWED = {
    "poolsplit": set(),
    "errors": set(),
    "inputs": {"errors"},
    "model": {"errors"},
    "embedding": {"errors"},
    "store": {"errors", "inputs", "model", "embedding"},
}


def test_the_graph_sees_the_layers_and_their_edges():
    edges = graph()
    assert "memcommit.store.backends.sql" in edges["memcommit.store.backends.sqlite"]
    assert "memcommit.store.protocols" in edges["memcommit.recall.index.live"]
    assert "poolsplit" in edges["memcommit.recall.pipeline.pack"]


def test_no_module_takes_part_in_an_import_cycle():
    assert cycle(graph()) is None


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_store_model_errors_and_poolsplit_never_import_upward():
    upward = [
        (module, target)
        for module, targets in graph().items()
        if layer_of(module) in ALLOWED
        for target in targets
        if layer_of(target) not in {layer_of(module), *ALLOWED[layer_of(module)]}
    ]
    assert upward == []


#: recall's wings, lowest first: each may import its own and lower wings only. The package
#: itself (``memcommit.recall``, the public facade) sits above them all.
WINGS = ("index", "scoring", "pipeline")


def wing_rank(module: str) -> int | None:
    """Where ``module`` sits among recall's wings (the facade above them); None: in no wing."""
    parts = module.split(".")
    if parts[:2] != ["memcommit", "recall"]:
        return None
    if len(parts) == 2:
        return len(WINGS)
    return WINGS.index(parts[2]) if parts[2] in WINGS else None


def test_recall_wings_import_only_downward():
    ranked = [
        (wing_rank(module), wing_rank(target), module, target)
        for module, targets in graph().items()
        for target in targets
        if wing_rank(module) is not None and wing_rank(target) is not None
    ]
    assert any(low < high for high, low, _, _ in ranked)  # it sees the downward edges
    assert [(module, target) for high, low, module, target in ranked if low > high] == []

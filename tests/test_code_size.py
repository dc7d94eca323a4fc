"""Small modules with one job: no module in src/ over 600 lines, no class over 350.

Lines are counted as a reader sees them: a module's every line, a class's from
its ``class`` line (decorators included) to its last, read with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MODULE_LINES = 600
CLASS_LINES = 350


def sizes(source: str) -> tuple[int, dict[str, int]]:
    """The lines of a module, and of each class in it by qualified name."""
    classes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                classes[name] = (child.end_lineno or child.lineno) - first + 1
                name += "."
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}."
            visit(child, name)

    visit(ast.parse(source), "")
    return len(source.splitlines()), classes


def oversized() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        lines, classes = sizes(path.read_text(encoding="utf-8"))
        where = path.relative_to(SRC)
        if lines > MODULE_LINES:
            found.append(f"{where}: {lines} lines (at most {MODULE_LINES})")
        found += [
            f"{where}: class {name} {n} lines (at most {CLASS_LINES})"
            for name, n in classes.items()
            if n > CLASS_LINES
        ]
    return found


def test_no_module_or_class_is_over_its_limit():
    assert oversized() == []


def test_the_measure_counts_modules_and_nested_classes():
    body = "\n".join(f"    x{n} = {n}" for n in range(4))
    source = f"@decorated\nclass Outer:\n{body}\n    class Inner:\n        y = 1\n\n\nz = 2\n"
    lines, classes = sizes(source)
    assert lines == 11
    assert classes == {"Outer": 8, "Outer.Inner": 2}  # from its decorator to its last line


def test_the_limits_apply_to_every_module_of_src():
    counted = sorted(SRC.rglob("*.py"))
    assert any(p.name == "poolsplit.py" for p in counted)
    assert any(p.parts[-3:] == ("store", "backends", "sql.py") for p in counted)

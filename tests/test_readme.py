"""The README's Quick start promises two commands; CI must run the test one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_has_exactly_two_commands_demo_then_tests():
    demo, tests = quick_start_commands()
    assert demo.endswith("memcommit demo")
    assert "pytest" in tests


def test_ci_runs_the_readme_test_command_verbatim():
    _, tests = quick_start_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines()


def python_examples() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.+?)\n```", readme, flags=re.S)


def test_every_python_example_in_the_readme_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples open ./memcommit.db
    examples = python_examples()
    assert len(examples) >= 2
    for source in examples:
        exec(compile(source, "README.md", "exec"), {"__name__": "readme_example"})


def test_ci_runs_the_slow_tests_after_the_readme_test_command():
    _, tests = quick_start_commands()
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    slow = [i for i, line in enumerate(lines) if "pytest" in line and "-m slow" in line]
    assert slow and slow[0] > lines.index(tests)

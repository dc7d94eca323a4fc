"""The built wheel is what the README says: every extra, the workbench's page, the migrations.

Slow (it builds the wheel and installs it into a fresh virtual environment), so CI's
second run (``-m slow``) runs it. The install takes no dependencies: whether each
extra's packages resolve is pip's business; that the wheel declares them is ours.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

pytestmark = pytest.mark.slow


def test_the_wheel_declares_every_extra_and_carries_its_data(tmp_path: Path) -> None:
    source, out = tmp_path / "source", tmp_path / "dist"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):  # a copy: the build writes beside its source
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--skip-dependency-check",
            "--outdir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = out.glob("memcommit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("poolsplit.py", "memcommit/workbench/static/app.js"):
        assert needed in names
    assert any(
        n.startswith("memcommit/store/backends/migrations/") and n.endswith(".sql") for n in names
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    extras = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; "
            "print('\\n'.join(m.metadata('memcommit').get_all('Provides-Extra')))",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.split()
    assert sorted(extras) == sorted(PROJECT["optional-dependencies"])

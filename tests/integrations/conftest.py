"""Fixtures of the integration tests: stores opened by path on both backends; deselections."""

from __future__ import annotations

import uuid

import pytest

from deselected import ALL


@pytest.fixture
def open_store(make_store):
    """``open_store(path)``: a memcommit store on this test's backend, as frameworks open theirs.

    Upstream suites open stores by path (":memory:" or a temporary file). Each
    ":memory:" is a new store; the same other path opens the same store again
    (a file in tmp_path on SQLite, one schema on PostgreSQL).
    """
    names: dict[str, str] = {}

    def open_(path: str = ":memory:", **options):
        if str(path) == ":memory:":
            name = f"{uuid.uuid4().hex}.db"
        else:
            name = names.setdefault(str(path), f"{uuid.uuid4().hex}.db")
        return make_store(name, **options)

    return open_


def pytest_collection_modifyitems(config, items):
    """Deselect the upstream tests named in `deselected` (each has its reason there)."""
    keep, drop = [], []
    for item in items:
        module = getattr(item, "module", None)
        names = getattr(module, "_upstream_deselected", {})
        name = getattr(item, "originalname", item.name)
        if getattr(item, "cls", None) is not None:
            name = f"{item.cls.__name__}.{name}"
        (drop if name in names else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_terminal_summary(terminalreporter):
    """Print every upstream deselection with its reason."""
    terminalreporter.section("upstream tests deselected (tests/integrations/deselected.py)")
    for suite, names in ALL.items():
        for name, reason in names.items():
            terminalreporter.write_line(f"{suite}::{name}: {reason}")

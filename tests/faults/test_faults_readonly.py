"""A store on read-only media opens for reading, checking and export (defect 9).

The medium is real: the store's folder is bind-mounted read-only, so the kernel
refuses every write, root's included (permissions alone would not stop root).
Needs root and mount(2); skipped with the reason otherwise.
"""

from __future__ import annotations

import io
import os
import subprocess

import pytest

import memcommit
from memcommit.errors import BackendError
from memcommit.store.transfer import export_jsonl


@pytest.fixture
def read_only_folder(tmp_path, now):
    """(folder, mounted read-only) holding a closed store with two memories."""
    source = tmp_path / "source"
    source.mkdir()
    with (
        memcommit.open(source / "agent.db") as store,
        store.commit(message="seed", author="t", now=now) as tx,
    ):
        tx.add("Deploys happen on weekdays.", tenant="acme")
        tx.add("The staging host is orders-stage.", tenant="acme")
    mounted = tmp_path / "media"
    mounted.mkdir()
    steps = (
        ["mount", "--bind", str(source), str(mounted)],
        ["mount", "-o", "remount,ro,bind", str(mounted)],
    )
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", str(mounted)], capture_output=True, check=False)
            pytest.skip(f"cannot make a read-only mount here: {done.stderr.strip()}")
    yield mounted
    subprocess.run(["umount", str(mounted)], check=True)


def test_the_medium_really_is_read_only(read_only_folder):
    with pytest.raises(OSError):
        (read_only_folder / "probe").write_text("x")
    assert not os.access(read_only_folder / "agent.db", os.W_OK)


@pytest.mark.parametrize("options", [{}, {"read_only": True}])
def test_a_store_on_read_only_media_opens_for_reading_and_export(read_only_folder, options):
    with memcommit.open(read_only_folder / "agent.db", **options) as store:
        assert len(store.find(tenant="acme")) == 2
        assert store.check().ok
        out = io.StringIO()
        summary = export_jsonl(store, out)
        assert summary.commits == 1 and summary.versions == 2
        with (
            pytest.raises(BackendError, match="read-only"),
            store.commit(message="no", author="t") as tx,
        ):
            tx.add("cannot land", tenant="acme")
        assert len(store.find(tenant="acme")) == 2
    assert sorted(p.name for p in read_only_folder.iterdir()) == ["agent.db"]

"""Recall's snapshot folder never serves, keeps or leaks what it should not (issue 24, items 2-7a).

Every fault is real: a writer killed by SIGKILL, a 3 MiB tmpfs filled up, a
folder bind-mounted read-only, another user (``setpriv``), a store reached by
another spelling of its address, a second host's folder, threads racing on the
first use. Each test runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

import pytest

import memcommit
from memcommit.recall.index.live import store_index

SECRET = "zebraquux"
SRC = str(Path(memcommit.__file__).resolve().parents[1])


def seeded(store, now, tenant="t", *, secret=True) -> str:
    """A few memories of ``tenant`` and (``secret``) one holding the secret word; its id."""
    with store.commit(message="seed", now=now) as tx:
        for i in range(6):
            last = tx.add(f"alpha deploy note {i}", tenant=tenant)
        return tx.add(f"alpha {SECRET} launch code", tenant=tenant).id if secret else last.id


def ids(ctx) -> list[str]:
    return [row.memory.id for row in ctx.rows]


def holding(directory: Path, word: str = SECRET) -> list[str]:
    """The files under ``directory`` whose bytes contain ``word`` (grep -rl)."""
    wanted = word.encode()
    return sorted(str(p) for p in directory.rglob("*") if p.is_file() and wanted in p.read_bytes())


def leftovers(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.tmp"))


SMALL_SNAPSHOTS = (
    'import importlib; importlib.import_module("memcommit.recall.index.live").SNAPSHOT_MIN = 1\n'
)


def python(code: str, *args: str, env: dict[str, str] | None = None, user: bool = False):
    """Run ``code`` in a fresh interpreter on this source tree (as uid 65534 when ``user``).

    Its tenants keep snapshots however small, as in this process (conftest's
    ``recall_snapshots``).
    """
    command = [sys.executable, "-c", SMALL_SNAPSHOTS + textwrap.dedent(code), *args]
    paths = os.pathsep.join([SRC, sysconfig.get_paths()["purelib"]])
    full = {**os.environ, "PYTHONPATH": paths, **(env or {})}
    if user:
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    return subprocess.run(command, capture_output=True, text=True, env=full, timeout=300)


# -- 2. a writer killed mid-write --------------------------------------------------------

KILLED_WRITER = """
    import json, os, signal, sys
    import memcommit

    def killed(*args, **kwargs):  # dies after writing its snapshot, before renaming it
        os.kill(os.getpid(), signal.SIGKILL)

    os.replace = killed
    store = memcommit.open(sys.argv[1], **json.loads(sys.argv[2]))
    store.recall("alpha", tenant="t")
"""


def killed_writer(target, options) -> None:
    done = python(KILLED_WRITER, str(target), json.dumps(options))
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_killed_writers_leftovers_are_swept_by_the_next_process(
    store_target, recall_snapshots, now
):
    target, options = store_target
    with memcommit.open(target, **options) as store:
        seeded(store, now)
    killed_writer(target, options)
    assert len(leftovers(recall_snapshots)) == 1 and holding(recall_snapshots)
    killed_writer(target, options)  # its first use swept the first one's leftover
    assert len(leftovers(recall_snapshots)) == 1
    with memcommit.open(target, **options) as store:
        assert store.recall("alpha", tenant="t", now=now).selected
    assert leftovers(recall_snapshots) == []


def test_a_purge_leaves_no_word_in_a_killed_writers_leftover(store_target, recall_snapshots, now):
    target, options = store_target
    with memcommit.open(target, **options) as store:
        secret = seeded(store, now)
    killed_writer(target, options)
    assert holding(recall_snapshots) and all(n.endswith(".tmp") for n in holding(recall_snapshots))
    with memcommit.open(target, **options) as purging, purging.commit(now=now) as tx:
        tx.purge(secret)  # this process never recalled: it only erases
    assert holding(recall_snapshots) == []


# -- 3. disk full -------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    """A real 3 MiB tmpfs, the recall snapshots' folder for this test."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(disk))
    yield disk
    subprocess.run(["umount", "--lazy", str(disk)], check=True)  # mapped snapshots: busy


def fill_up(disk: Path) -> None:
    """Write a file until the disk refuses with ENOSPC."""
    with open(disk / "filler", "wb") as out:
        try:
            while True:
                out.write(b"\xff" * 65536)
                out.flush()
        except OSError as full:
            assert full.errno == errno.ENOSPC


def test_disk_full_while_a_purge_rewrites_the_snapshot_keeps_no_purged_word(
    make_store, small_disk, now
):
    store = make_store("s.db")
    secret = seeded(store, now)
    assert secret in ids(store.recall("alpha", tenant="t", now=now))  # indexed here
    assert holding(small_disk)
    fill_up(small_disk)
    with store.commit(message="erase", now=now) as tx:
        tx.purge(secret)
    assert holding(small_disk) == []
    assert secret not in ids(store.recall("alpha", tenant="t", now=now))
    assert secret not in ids(make_store("s.db").recall("alpha", tenant="t", now=now))


# -- 4. a read-only folder ----------------------------------------------------------------


@pytest.fixture
def read_only():
    """``read_only(path)``: bind-mount ``path`` read-only over itself (undone after the test)."""
    mounted: list[Path] = []

    def mount(path: Path) -> None:
        for step in (
            ["mount", "--bind", str(path), str(path)],
            ["mount", "-o", "remount,ro,bind", str(path)],
        ):
            done = subprocess.run(step, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                subprocess.run(["umount", str(path)], capture_output=True, check=False)
                pytest.skip(f"cannot make a read-only mount here: {done.stderr.strip()}")
        mounted.append(path)

    yield mount
    for path in mounted:
        subprocess.run(["umount", "--lazy", str(path)], check=True)


def damage_postings(snapshot: Path) -> None:
    """Flip the first byte of the postings (``main_docs``), inside a CRC-checked block."""
    data = bytearray(snapshot.read_bytes())
    _, _, _, header_size, text_size = struct.unpack("<8sIIQQ", data[:32])
    header = json.loads(data[32 : 32 + text_size])
    (offset,) = [a[3] for a in header["arrays"] if a[0] == "main_docs"]
    data[32 + header_size + offset] ^= 0xFF
    snapshot.write_bytes(bytes(data))


def test_a_read_only_folder_never_fails_a_recall_or_a_purge(
    make_store, recall_snapshots, read_only, now
):
    store = make_store("s.db")
    secret = seeded(store, now)
    expected = ids(store.recall("alpha", tenant="t", now=now))
    (snapshot,) = recall_snapshots.rglob("*.idx")
    damage_postings(snapshot)
    read_only(snapshot.parent)
    again = make_store("s.db")
    assert ids(again.recall("alpha", tenant="t", now=now)) == expected  # rebuilt in memory
    assert store_index(again).opened["t"] == "built: snapshot damaged (main_docs)"
    with (
        pytest.warns(RuntimeWarning, match="may keep purged words"),
        again.commit(message="erase", now=now) as tx,
    ):
        tx.purge(secret)
    assert again.get(secret).status == "purged"
    assert secret not in ids(again.recall("alpha", tenant="t", now=now))


# -- 5. a snapshot that cannot be opened ----------------------------------------------------


def test_an_index_dir_that_is_a_file_means_no_snapshot(make_store, tmp_path, monkeypatch, now):
    plain = tmp_path / "plain-file"
    plain.write_text("not a folder")
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(plain))
    store = make_store("s.db")
    secret = seeded(store, now)
    expected = ids(store.recall("alpha", tenant="t", now=now))
    again = make_store("s.db")
    assert ids(again.recall("alpha", tenant="t", now=now)) == expected
    assert store_index(again).opened["t"] == "built: snapshot unreadable (Not a directory)"
    with make_store("s.db").commit(message="erase", now=now) as tx:
        tx.purge(secret)
    assert plain.read_text() == "not a folder"


OTHER_USER = """
    import json, sys
    import memcommit
    from memcommit.recall.index.live import store_index

    store = memcommit.open(sys.argv[1], **json.loads(sys.argv[2]))
    ctx = store.recall("alpha", tenant="t")
    print(json.dumps({"ids": [r.memory.id for r in ctx.rows], "opened": store_index(store).opened}))
"""


def test_another_user_who_cannot_open_the_snapshot_still_recalls(
    store_backend, request, monkeypatch, now
):
    """Snapshots are 0600: another user reading the same store builds its index in memory."""
    shared = Path(tempfile.mkdtemp(prefix="memcommit-shared-"))  # /tmp: others may enter it
    try:
        shared.chmod(0o777)  # the other user may write the store, not root's snapshots
        if store_backend == "sqlite":
            monkeypatch.delenv("MEMCOMMIT_INDEX_DIR")  # beside the file: shared/s.db.recall/
            target, options = str(shared / "s.db"), {}
        else:
            monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(shared / "cache"))
            target, options = request.getfixturevalue("store_target")
        with memcommit.open(target, **options) as store:
            seeded(store, now)
            expected = ids(store.recall("alpha", tenant="t"))
        (snapshot,) = shared.rglob("*.idx")
        assert snapshot.stat().st_mode & 0o777 == 0o600
        for path in shared.glob("s.db*"):
            if path.is_file():
                path.chmod(0o666)
        probe = python("import memcommit, numpy", user=True)
        if probe.returncode != 0:
            pytest.skip(f"uid 65534 cannot run this interpreter: {probe.stderr.strip()[-200:]}")
        done = python(OTHER_USER, target, json.dumps(options), user=True)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.splitlines()[-1])
        assert out["ids"] == expected
        assert out["opened"]["t"] == "built: snapshot unreadable (Permission denied)"
    finally:
        subprocess.run(["rm", "-rf", str(shared)], check=True)


# -- 6. one store, many spellings -----------------------------------------------------------


def test_every_spelling_of_a_sqlite_path_shares_the_folder_beside_it(tmp_path, monkeypatch, now):
    monkeypatch.delenv("MEMCOMMIT_INDEX_DIR")
    (tmp_path / "real").mkdir()
    (tmp_path / "link.db").symlink_to(tmp_path / "real" / "a.db")
    monkeypatch.chdir(tmp_path / "real")
    with memcommit.open("a.db") as relative:
        secret = seeded(relative, now)
        relative.recall("alpha", tenant="t", now=now)
    assert holding(tmp_path)
    with memcommit.open(tmp_path / "link.db") as other, other.commit(now=now) as tx:
        tx.purge(secret)  # the same file through a symlink, spelled absolutely
    assert holding(tmp_path) == []


def test_every_spelling_of_the_store_shares_one_cache_folder(
    store_target, tmp_path, monkeypatch, recall_snapshots, now
):
    """A relative and an absolute path; ``@localhost`` and ``@127.0.0.1?connect_timeout=7``."""
    target, options = store_target
    if target.startswith("postgresql://"):
        first = target.replace("@127.0.0.1", "@localhost")
        second = target + "?connect_timeout=7"
    else:
        monkeypatch.chdir(tmp_path)
        first, second = os.path.relpath(target), target
    with memcommit.open(first, **options) as store:
        secret = seeded(store, now)
        store.recall("alpha", tenant="t", now=now)
    assert holding(recall_snapshots)
    with memcommit.open(second, **options) as other, other.commit(now=now) as tx:
        tx.purge(secret)  # this object never recalled: it finds the folder by the identity
    assert holding(recall_snapshots) == []


# -- 7. several hosts -------------------------------------------------------------------------


def test_another_hosts_folder_drops_the_purged_words_at_its_next_catch_up(
    make_store, tmp_path, monkeypatch, now
):
    """Host B's folder is out of the purging host's reach; B drops the words when it catches up.

    Each host is a folder (MEMCOMMIT_INDEX_DIR when its store object first recalls).
    """
    host_a, host_b = tmp_path / "host-a", tmp_path / "host-b"
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(host_b))
    writer = make_store("s.db")
    secret = seeded(writer, now, tenant="t")
    seeded(writer, now, tenant="u", secret=False)
    seeded(writer, now, tenant="v", secret=False)
    make_store("s.db").recall("alpha", tenant="v", now=now)  # an earlier process on B: v
    running_t = make_store("s.db")  # a process on B with t open
    running_t.recall("alpha", tenant="t", now=now)
    running_u = make_store("s.db")  # a process on B with only u open
    running_u.recall("alpha", tenant="u", now=now)
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(host_a))
    purging = make_store("s.db")
    purging.recall("alpha", tenant="t", now=now)
    with purging.commit(message="erase", now=now) as tx:
        tx.purge(secret)
    assert holding(host_a) == []
    assert holding(host_b)  # another host's disk: out of reach until B catches up
    running_u.recall("alpha", tenant="u", now=now)  # catches up: t's snapshot is dropped
    assert holding(host_b) == []
    assert secret not in ids(running_t.recall("alpha", tenant="t", now=now))
    assert holding(host_b) == []
    monkeypatch.setenv("MEMCOMMIT_INDEX_DIR", str(host_b))
    fresh = make_store("s.db")
    assert secret not in ids(fresh.recall("alpha", tenant="t", now=now))
    assert holding(host_b) == []


# -- 7a. threads racing on the first use ----------------------------------------------------

RACE = """
    import json, sys, threading
    import memcommit

    store = memcommit.open(sys.argv[1], **json.loads(sys.argv[2]))
    with store.commit(message="warm up") as tx:  # commits are warm; recall is not loaded yet
        mine = [tx.add(f"alpha deploy {i}", tenant="t").id for i in range(8)]
    threads = 8
    start = threading.Barrier(threads)
    errors = []

    def first_use(i):
        start.wait()  # every thread's first use at the same moment
        try:
            if i % 2 == 0:
                with store.commit(message="purge") as tx:  # its hook loads recall's index
                    tx.purge(mine[i])
            elif i % 4 == 1:
                store.recall("alpha deploy", tenant="t")
            else:
                store.tenant("t").recall("launch", budget=memcommit.Words(5))
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    workers = [threading.Thread(target=first_use, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(json.dumps(errors))
"""


def test_threads_racing_on_the_first_recall_all_succeed(store_target, now):
    """2 processes x 8 threads, each thread's first use at once, 6 times over."""
    target, options = store_target
    with memcommit.open(target, **options) as store:
        seeded(store, now)
    command = [sys.executable, "-c", textwrap.dedent(RACE), target, json.dumps(options)]
    for _ in range(6):
        racing = [
            subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": SRC},
            )
            for _ in range(2)
        ]
        for proc in racing:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            assert json.loads(out.splitlines()[-1]) == []

"""Where recall reads from: a store (live index kept current by commits) or a list of memories.

A store gets one `StoreIndex` for its lifetime: tenants are opened on their
first recall, from their snapshot on disk (see `StoreIndex`) or with one
``find``, and every landed commit updates the tenants
already indexed (``on_commit``), so no query rebuilds anything. Commits made by
other processes or hosts (which ``on_commit`` never hears of) are caught up at
the next recall: it compares the store's ``head_seq`` with the last commit the
index has seen and applies ``diff`` in between. Reads ``as_of`` an earlier
commit, and plain lists of memories, get a throwaway index.

A snapshot's blocks are checked when first read, so damage can surface in the
middle of a recall or a commit's update: the tenant's index and snapshot are
then dropped, and the recall runs again on an index rebuilt from the store
(`rebuilt_when_damaged`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

from memcommit.errors import IndexDamaged, InvalidInput, NotFound, StoreClosed
from memcommit.model import Commit, Memory
from memcommit.recall.index import persist
from memcommit.recall.index.persist import SnapshotRefused, Stamp
from memcommit.recall.index.sections import Damage
from memcommit.recall.index.tenant import TenantIndex
from memcommit.store.protocols import CommitRef, ViewLike
from memcommit.store.store import Store, backing_store

Loader = Callable[[Sequence[str]], list[Memory]]  # memories by id, in the order asked


@dataclass
class Source:
    """One tenant's index, how to load its memories, and whether the tenant exists."""

    index: TenantIndex
    load: Loader
    known: bool


def _indexable(memory: Memory) -> bool:
    return memory.status != "purged"


def from_memories(memories: Iterable[Memory], tenant: str) -> Source:
    """A throwaway index over the memories of ``tenant`` in a plain list."""
    index = TenantIndex(tenant)
    mine: dict[str, Memory] = {}
    for memory in memories:
        if not isinstance(memory, Memory):
            raise InvalidInput("store_or_view", memory, "a list must hold memcommit Memory values")
        if memory.tenant == tenant and _indexable(memory):
            mine[memory.id] = memory
    index.put_many(mine.values())
    return Source(index, lambda ids: [mine[i] for i in ids], bool(mine))


#: Past this many changed memories, catching up drops the indexes (rebuilt on next use).
CATCH_UP_LIMIT = 20_000
#: A snapshot caught up by at least this many changed memories is written again.
RESAVE_AFTER = 1_000

#: (memories indexed so far, memories to index: None while pages of them remain to read)
Progress = Callable[[int, int | None], None]


class StoreIndex:
    """The live recall index of one store, updated by its commits; shared by its tenant views.

    A tenant is opened from its snapshot on disk when there is a sound one
    (`memcommit.recall.index.persist`), caught up with the commits since, and built
    from the store otherwise; a build or a large catch-up writes the snapshot
    again. ``opened[tenant]`` says how each tenant was opened (and why a
    snapshot was refused), which tests and tools can show.
    """

    def __init__(self, store: Store, *, progress: Progress | None = None) -> None:
        self._store = weakref.ref(store)  # the store owns this index, not the other way round
        self.tenants: dict[str, TenantIndex] = {}
        self.opened: dict[str, str] = {}
        self._damage: dict[str, Damage] = {}  # tenants opened from a snapshot: its blocks' state
        self.pending: list[str] = []  # memories of own commits, indexed at the next recall
        self.ready: list[Memory] = []  # versions own commits handed over, indexed likewise
        self.progress = progress
        self.directory = snapshot_dir(store)
        self.lock = threading.RLock()
        self.seen = store.head_seq  # every commit up to this one is in the indexes
        self.unsubscribe = store.on_commit(self._on_commit)

    @property
    def store(self) -> Store:
        """The store this index follows (it holds the index: gone only with its store)."""
        store = self._store()
        if store is None:
            raise StoreClosed("the store of this recall index was garbage-collected")
        return store

    def source(self, tenant: str) -> Source:
        """The tenant's index (opened on first use) and a loader reading the store."""
        with self.lock:
            self._flush()
            self._catch_up()
            index = self.tenants.get(tenant)
            damage = self._damage.get(tenant)
            if damage is not None and damage.section is not None:
                self._discard(tenant)
                index = self.tenants[tenant] = self._build(tenant, self.progress)
                self.opened[tenant] = f"built: snapshot damaged ({damage.section})"
            elif index is None:
                index = self.tenants[tenant] = self._open(tenant)
        known = len(index) > 0 or tenant in self.store.tenants()
        return Source(index, store_loader(self.store, tenant), known)

    def rebuild(self, tenant: str, progress: Progress | None = None) -> TenantIndex:
        """Build ``tenant``'s index from the store (and write its snapshot), whatever exists."""
        with self.lock:
            self._flush()
            self._catch_up()
            index = self.tenants[tenant] = self._build(tenant, progress or self.progress)
            self.opened[tenant] = "built"
            return index

    def save(self, tenant: str) -> Path | None:
        """Write the snapshot of ``tenant``'s index, caught up with the store; its path.

        None: nowhere to write, or the index was read from a damaged snapshot
        (both are dropped; the next recall rebuilds). The index is caught up
        with every writer's commits first, and again after writing while the
        store moved on: a snapshot never holds words another process purged
        (that process deleted the file; a state from before its purge must not
        bring it back).
        """
        with self.lock:
            try:
                return self._write(tenant)
            except IndexDamaged:
                self._discard(tenant)
                return None

    def _discard(self, tenant: str) -> None:
        """Drop ``tenant``'s index and its snapshot file (damaged: rebuilt when next used)."""
        self.tenants.pop(tenant, None)
        self._damage.pop(tenant, None)
        if self.directory is not None:
            (self.directory / snapshot_name(tenant)).unlink(missing_ok=True)

    def _write(self, tenant: str) -> Path | None:
        """`save`, letting IndexDamaged through to the caller."""
        with self.lock:
            self._flush()
            self._catch_up()
            while True:
                index = self.tenants.get(tenant)
                if index is None or self.directory is None or not self.seen:
                    return None
                path = self.directory / snapshot_name(tenant)
                written = self.seen
                first, current = _commit_ids(self.store, [1, written])
                try:
                    persist.write(
                        path, tenant, Stamp(first or "", written, current or ""), index.export()
                    )
                except OSError:  # derived data: a read-only place just means no snapshot
                    return None
                self._catch_up()
                if self.seen == written:
                    return path

    def _open(self, tenant: str) -> TenantIndex:
        """The tenant's index from its snapshot (caught up) if sound, else built anew."""
        try:
            loaded = self._load(tenant)
        except IndexDamaged as damaged:
            self._discard(tenant)
            loaded = f"built: snapshot damaged ({damaged.section})"
        if isinstance(loaded, str):
            self.opened[tenant] = loaded
            return self._build(tenant, self.progress)
        return loaded

    def _load(self, tenant: str) -> TenantIndex | str:
        """The index from the snapshot, caught up (and written again if far behind); else why not.

        Raises IndexDamaged when a block the catch-up or the writing reads is damaged.
        """
        store = self.store
        if self.directory is None or not self.seen:
            return "built: no snapshot place" if self.directory is None else "built: empty store"
        path = self.directory / snapshot_name(tenant)
        try:
            opened = persist.read(path, tenant, _commit_ids(store, [1])[0] or "")
        except SnapshotRefused as refused:
            return f"built: snapshot {refused.reason}"
        stamp = opened.stamp
        if stamp.seq > self.seen or stamp.commit != _commit_ids(store, [stamp.seq])[0]:
            return "built: snapshot from another history"
        try:
            index = TenantIndex.restore(tenant, opened.sections)
        except ValueError as unusable:  # written by a build with other columns
            return f"built: {unusable}"
        self._damage[tenant] = opened.damage
        ids: list[str] = []
        resave = False
        if stamp.seq < self.seen:
            changes = store.tenant(tenant).diff(stamp.seq, self.seen)
            ids = list(dict.fromkeys(c.memory_id for c in changes if c.memory_id))
            if len(ids) > CATCH_UP_LIMIT:
                return f"built: snapshot {len(ids)} memories behind"
            purged = _put(index, [m for m in store.find(ids=ids, live=False) if m.tenant == tenant])
            resave = purged or len(ids) >= RESAVE_AFTER  # a purge's words leave the file at once
        self.opened[tenant] = f"loaded, caught up {len(ids)} memories"
        if resave:
            self.tenants[tenant] = index
            self._write(tenant)
        return index

    def _build(self, tenant: str, progress: Progress | None) -> TenantIndex:
        """The tenant's index from its memories, read a page at a time (and its snapshot).

        Pages keep a build's memory to one page of memories beside the index.
        Commits landing between two pages are applied again by the next catch-up
        (they come after ``seen``), as for any other writer's commits.
        """
        self._damage.pop(tenant, None)
        index = TenantIndex(tenant)
        report = progress if progress is not None else terminal_progress()
        done, after = 0, None
        with index.bulk():
            while True:
                page = self.store.find(tenant=tenant, live=False, limit=BUILD_STEP, after=after)
                memories = [m for m in page if _indexable(m)]
                index.put_many(memories)
                done += len(memories)
                last = len(page) < BUILD_STEP
                if report is not None:
                    report(done, done if last else None)
                if last:
                    break
                after = page[-1].id
        self.tenants[tenant] = index
        if done:
            self.save(tenant)
        return index

    def _catch_up(self) -> None:
        """Apply the commits of other writers that landed since the last one seen."""
        head = self.store.head_seq
        if head == self.seen:
            return
        since, self.seen = self.seen, head  # before applying: a save it makes finds none left
        if not self.tenants:
            return
        try:
            ids = list(dict.fromkeys(c.memory_id for c in self.store.diff(since, head)))
            if len(ids) > CATCH_UP_LIMIT:
                self.tenants.clear()  # cheaper to open each tenant again when next asked
                self._damage.clear()
            else:
                self._apply([i for i in ids if i])
        except BaseException:
            self.seen = since  # applied again next time: putting a memory twice changes nothing
            raise

    def _on_commit(self, commit: Commit) -> None:
        """Note the commit's memories; they are indexed at the next recall.

        A commit of this Store hands over the versions it wrote, so catching
        up reads nothing; otherwise its ids are read then, in one read. A purge is
        applied at once (its words leave the snapshot now); so many pending
        changes that catching up costs more than opening again drop the indexes.
        """
        with self.lock:
            written = self.store.written(commit) if self.tenants else None
            if written is not None:  # this Store's own commit: its versions are at hand
                self.ready += written
            elif self.tenants:
                self.pending += [c.memory_id for c in commit.changes if c.memory_id]
            if len(self.pending) + len(self.ready) > CATCH_UP_LIMIT:
                self.tenants.clear()
                self._damage.clear()
                self.pending, self.ready = [], []
            elif any(change.op == "purge" for change in commit.changes):
                self._flush()
            if commit.seq == self.seen + 1:  # otherwise another writer's commits came between
                self.seen = commit.seq

    def _flush(self) -> None:
        """Index the memories of this store's own commits noted since the last recall.

        Versions a commit handed over go first; ids are read after them, so a
        read (always the newest version) is never overwritten by an older one.
        """
        ready, self.ready = self.ready, []
        pending, self.pending = self.pending, []
        self._put_all(ready)
        self._apply(pending)

    def _apply(self, ids: list[str]) -> None:
        """Put the current versions of ``ids`` into the indexes of tenants already indexed."""
        ids = list(dict.fromkeys(ids))
        with self.lock:
            store = self.store
            if not ids or not self.tenants:
                return
            found = {m.id: m for m in store.find(ids=ids, live=False)}  # trace ids: absent
            self._put_all([found[memory_id] for memory_id in ids if memory_id in found])

    def _put_all(self, memories: list[Memory]) -> None:
        """Put ``memories`` (in order: a later version wins) into the indexes of their tenants."""
        with self.lock:
            changed: dict[str, list[Memory]] = {}
            for memory in memories:
                if memory.tenant in self.tenants:
                    changed.setdefault(memory.tenant, []).append(memory)
            for tenant, memories in changed.items():
                try:
                    if _put(self.tenants[tenant], memories):
                        self._write(tenant)  # the purged memory's words leave the snapshot now
                except IndexDamaged:  # dropped with its snapshot; the next recall rebuilds
                    self._discard(tenant)


#: Memories read (and indexed) per page of a build, and between two progress reports.
BUILD_STEP = 10_000


def _put(index: TenantIndex, memories: list[Memory]) -> bool:
    """Index the current versions ``memories``; purged ones stop being documents.

    True when one was purged (its snapshot must be written again without it).
    """
    index.put_many(m for m in memories if _indexable(m))
    purged = [m.id for m in memories if not _indexable(m)]
    for memory_id in purged:
        index.remove(memory_id)
    return bool(purged)


def erase_purged(store: Store, commit: Commit) -> None:
    """After a commit that purged memories: no snapshot on disk keeps them.

    A tenant this process has indexed had its snapshot written again when the
    commit was applied; any other tenant's snapshot is deleted (rebuilt when
    next used). Connected to the store by the package top (``Store.connect_purge``).
    """
    directory = snapshot_dir(store)
    purged = [c.memory_id for c in commit.changes if c.op == "purge" and c.memory_id]
    if directory is None or not purged:
        return
    live = _live.get(store)
    for tenant in {m.tenant for m in store.find(ids=purged, live=False)}:
        if live is None or tenant not in live.tenants:
            (directory / snapshot_name(tenant)).unlink(missing_ok=True)


def _commit_ids(store: Store, seqs: list[int]) -> list[str | None]:
    """The ids of commits ``seqs`` (None where there is none), read without their changes."""
    found = {c.seq: c.id for c, _ in store.backend.commits(seqs=seqs, changes=False)}
    return [found.get(seq) for seq in seqs]


def snapshot_dir(store: Store) -> Path | None:
    """Where ``store``'s recall snapshots live, or None (an in-memory store keeps none).

    A SQLite store keeps them beside its file (``<file>.recall/``); any other
    store in the user's cache (``~/.cache/memcommit/recall/<hash of its
    target>/``). ``MEMCOMMIT_INDEX_DIR`` moves both under another directory.
    """
    target = str(getattr(store.backend, "target", "") or "")
    if not target or target == ":memory:" or target.startswith("file::memory:"):
        return None
    root = os.environ.get("MEMCOMMIT_INDEX_DIR")
    digest = hashlib.sha256(target.encode()).hexdigest()[:16]
    if root:
        return Path(root) / digest
    if type(store.backend).__name__ == "SQLiteBackend":
        return Path(target + ".recall")
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "memcommit" / "recall" / digest


def snapshot_name(tenant: str) -> str:
    """The snapshot file of ``tenant`` (named by a hash: tenant names are any text)."""
    return "tenant-" + hashlib.sha256(tenant.encode()).hexdigest()[:24] + ".idx"


def terminal_progress() -> Progress | None:
    """A rich progress bar on stderr when stderr is a terminal, else None.

    The bar appears once a build reads a second page of memories (a build of
    one page is over before a bar would help).
    """
    if not sys.stderr.isatty():
        return None
    from rich.progress import Progress as Bar

    bar = Bar(transient=True)
    task = bar.add_task("indexing memories for recall", total=None)
    shown = False

    def report(done: int, total: int | None) -> None:
        nonlocal shown
        if not shown:
            if total is not None:
                return
            bar.start()
            shown = True
        bar.update(task, completed=done, total=total)
        if total is not None:
            bar.stop()

    return report


def store_loader(store: ViewLike, tenant: str) -> Loader:
    """Loads one tenant's memories by id from ``store`` in one read, in the order asked.

    The read names the ids only (so the backend looks them up by primary key)
    and the tenant is checked here: another tenant's memory is never returned.
    """

    def load(ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        found = {m.id: m for m in store.find(ids=list(ids), live=False) if m.tenant == tenant}
        missing = next((i for i in ids if i not in found), None)
        if missing is not None:
            raise NotFound("id", missing)
        return [found[i] for i in ids]

    return load


_live: weakref.WeakKeyDictionary[Store, StoreIndex] = weakref.WeakKeyDictionary()
_live_lock = threading.Lock()


def store_index(store: ViewLike) -> StoreIndex:
    """The live index of ``store``, created (and subscribed to its commits) on first use.

    A tenant view leads to its store (``backing_store``), so every view of one store,
    and the store itself, share one index: each tenant is indexed once.
    """
    store = backing_store(store)
    with _live_lock:
        found = _live.get(store)
        if found is None:
            found = _live[store] = StoreIndex(store)
            weakref.finalize(store, found.unsubscribe)
        return found


def from_store(store: ViewLike, tenant: str, as_of: CommitRef | None) -> Source:
    """The tenant's source in ``store``: the live index, or a throwaway one ``as_of``."""
    if as_of is None:
        return store_index(store).source(tenant)
    memories = store.find(tenant=tenant, live=False, as_of=as_of)
    source = from_memories(memories, tenant)
    source.known = source.known or tenant in store.tenants(as_of=as_of)
    return source


Params = ParamSpec("Params")
Result = TypeVar("Result")


def rebuilt_when_damaged(recall: Callable[Params, Result]) -> Callable[Params, Result]:
    """``recall``, run once more when it read a damaged snapshot block.

    The damaged block marked its snapshot; the second run's `StoreIndex.source`
    drops that index and rebuilds it from the store, so the answer is the one a
    sound snapshot gives. A damaged index passed in directly raises again.
    """

    @functools.wraps(recall)
    def run(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return recall(*args, **kwargs)
        except IndexDamaged:
            return recall(*args, **kwargs)

    return run

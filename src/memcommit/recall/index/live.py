"""The live index of a store: each tenant's index opened once, kept current, kept on disk.

A store gets one `StoreIndex` for its lifetime (`store_index`): a tenant is
opened on its first recall, from its snapshot when there is a sound one
(`memcommit.recall.index.persist`) or built with paged ``find`` reads, and every
landed commit updates the tenants already open (``on_commit``), so no query
rebuilds anything. Commits of other processes or hosts (which ``on_commit``
never hears of) are caught up at the next recall: the store's ``head_seq`` is
compared with the last commit the index has seen and ``diff`` applied in between.

The store is read only through its published shape (`StoreLike`): commits,
reads, ``written`` for its own commits' versions, ``commit_id`` for the stamps,
and ``cache_dir`` for the folder, which the store's backend chooses and which is
named by the store's identity, not by how its target was spelled.

Purged words leave every snapshot file this host keeps: a purge rewrites the
snapshot of a tenant open in this process, deletes it otherwise, and sweeps the
leftovers of killed writers (`memcommit.recall.index.files`); a rewrite that
fails (a full disk) deletes the old snapshot instead of keeping it. Another
host's folder is out of reach: there the words go at that host's next catch-up,
when a process already running with the store recalls anything, or when a
process opens that tenant's snapshot (caught up from its stamp, and written
again at once because a purge is among the changes).

Derived data never makes a recall or a commit fail: a folder that is read-only,
full, unreadable or not a folder means snapshots are neither read nor kept, and
the index is built in memory.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from memcommit.errors import IndexDamaged, StoreClosed
from memcommit.model import Change, Commit, Memory
from memcommit.recall.index import files, persist, vectorfile
from memcommit.recall.index.cache import TenantCache
from memcommit.recall.index.persist import Stamp
from memcommit.recall.index.reopen import (
    Handed,
    holds_only,
    indexable,
    put_versions,
    read_pages,
    restore_snapshot,
)
from memcommit.recall.index.sections import Damage
from memcommit.recall.index.tenant import TenantIndex
from memcommit.store.protocols import StoreLike, ViewLike
from memcommit.store.store import backing_store

#: Past this many changed memories, catching up drops the indexes (rebuilt on next use);
#: a snapshot is rebuilt instead of caught up only past this many and past its own size
#: (reading back fewer memories than it holds costs less than reading every one).
CATCH_UP_LIMIT = 20_000
#: A snapshot caught up by at least this many changed memories is written again.
RESAVE_AFTER = 1_000
#: Memories read (and indexed) per page of a build, and between two progress reports.
BUILD_STEP = 10_000
#: A tenant with fewer memories keeps no snapshot file: building it from the store costs
#: a few milliseconds, about what reading a file does, and writes nothing to disk.
SNAPSHOT_MIN = 256

#: (memories indexed so far, memories to index: None while pages of them remain to read)
Progress = Callable[[int, int | None], None]


class StoreIndex:
    """The live recall index of one store, updated by its commits; shared by its tenant views.

    ``tenants`` holds the open tenants within ``budget`` bytes (`TenantCache`:
    the least recently recalled are let go first). ``opened[tenant]`` says how
    each open tenant was opened (and why a snapshot was refused), which tests
    and tools can show; ``progress`` is told of builds (the CLI draws it as a
    bar: `reporting`).
    """

    def __init__(self, store: StoreLike, *, budget: int, progress: Progress | None = None) -> None:
        self._store = weakref.ref(store)  # the store owns this index, not the other way round
        self.tenants: TenantCache[TenantIndex] = TenantCache(budget, self._evicted)
        self.opened: dict[str, str] = {}
        self._damage: dict[str, Damage] = {}  # tenants opened from a snapshot: its blocks' state
        self.pending: list[str] = []  # memories of own commits, indexed at the next recall
        self.ready: list[Memory] = []  # versions own commits handed over, indexed likewise
        self.progress = progress
        self._directory: Path | None = None
        self._placed = False  # the folder is chosen once the store has its first commit
        self.lock = threading.RLock()
        self.seen, self.seen_id = store.tip  # every commit up to this one is in the indexes
        self._noted = self.seen  # the newest own commit `_on_commit` took (each is taken once)
        #: tenant -> the newest commit its snapshot file holds every change of the tenant up to
        self.saved: dict[str, int] = {}
        store.on_commit(self._on_commit)  # (held by the store: nothing here holds the store)

    @property
    def store(self) -> StoreLike:
        """The store this index follows (it holds the index: gone only with its store)."""
        store = self._store()
        if store is None:
            raise StoreClosed("the store of this recall index was garbage-collected")
        return store

    @property
    def directory(self) -> Path | None:
        """This host's snapshot folder of the store (`index_dir`), None while there is none.

        Chosen at the first use after the store's first commit (its identity
        names the folder); the leftovers of killed writers are swept then.
        """
        if not self._placed and self.seen:
            self._directory = index_dir(self.store)
            self._placed = True
            if self._directory is not None:
                files.sweep(self._directory)
        return self._directory

    def index(self, tenant: str) -> TenantIndex:
        """The tenant's index, opened on first use and caught up with every writer's commits."""
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
            self.tenants.touch(tenant)
            self.tenants.charge(tenant)  # (what its last queries derived and keep)
            return index

    def _evicted(self, tenant: str) -> None:
        """The cache let ``tenant`` go: forget what was kept beside its index."""
        self._damage.pop(tenant, None)
        self.opened.pop(tenant, None)
        self.saved.pop(tenant, None)

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

    def keep_current(
        self, commit: Commit, tenants: list[str], written: Sequence[Memory] | None = None
    ) -> dict[str, int]:
        """Open ``tenants`` with ``commit`` (this store's; it wrote ``written``), save them."""
        with self.lock:
            self._on_commit(commit)
            versions = self.store.written(commit) if written is None else written
            return {t: self.keep(t, _handed(commit.seq, versions, t)) for t in tenants}

    def keep(self, tenant: str, handed: Handed | None = None) -> int:
        """Open ``tenant`` (``handed``: with them, unread), write its snapshot unless current."""
        with self.lock:
            if handed is not None and tenant not in self.tenants:  # (caught up by `index`)
                self.tenants[tenant] = self._open(tenant, handed)
            held = len(self.index(tenant))
            if self.saved.get(tenant) != self.seen:
                self.save(tenant)
            return held

    def _path(self, tenant: str) -> Path | None:
        directory = self.directory
        return None if directory is None else directory / snapshot_name(tenant)

    def _discard(self, tenant: str) -> None:
        """Drop ``tenant``'s index and its snapshot file (damaged: rebuilt when next used)."""
        self.tenants.pop(tenant, None)
        self._damage.pop(tenant, None)
        self.saved.pop(tenant, None)
        path = self._path(tenant)
        if path is not None:  # a read-only folder keeps them: refused again when next read
            for place in [path, *files.companions(path.parent, path.name)]:
                files.remove(place)

    def _write(self, tenant: str, *, erasing: bool = False) -> Path | None:
        """`save`, letting IndexDamaged through. ``erasing``: the index no longer holds words
        the file on disk may (a purge): a write that fails deletes that file, not keeps it."""
        with self.lock:
            self._flush()
            self._catch_up()
            while True:
                index = self.tenants.get(tenant)
                path = self._path(tenant)
                if path is None or not self.seen:
                    return None
                small = index is not None and len(index) < SNAPSHOT_MIN  # rebuilt from the store
                if index is None or small:  # (or let go, by the budget, before it was written)
                    if erasing:
                        files.erase(path.parent, [path.name])
                    elif small:  # any older file goes
                        files.drop([path, *files.companions(path.parent, path.name)])
                    return None
                written, first = self.seen, self.store.commit_id(1)
                stamp = Stamp(first or "", written, self.seen_id or "")  # (the commit it saw)
                guard = files.Guard(_unpurged_since(self.store, written), exclusive=erasing)
                try:
                    persist.write(path, tenant, stamp, index.export(), guard=guard)
                    vectorfile.write_beside(path, index, stamp, erasing=erasing, guard=guard)
                except files.Superseded:  # a purge landed meanwhile: its words go first
                    self._catch_up()
                    continue
                except OSError:  # derived data: a full or read-only place just means no snapshot
                    if erasing:
                        files.erase(path.parent, [path.name])
                    return None
                # again only if a purge landed meanwhile (it may have deleted the file replaced)
                if not self._catch_up() or self.seen == written:
                    self.saved[tenant] = written
                    return path

    def _open(self, tenant: str, handed: Handed | None = None) -> TenantIndex:
        """The tenant's index from its snapshot (caught up) if sound, else built anew.

        ``handed`` (`keep_current`) stands in for reading its versions: to catch
        up a snapshot one commit behind, or build a tenant holding only them."""
        if handed is not None and handed.seq != self.seen:
            handed = None  # commits of other writers came after it: read as usual
        try:
            loaded = self._load(tenant, handed)
        except IndexDamaged as damaged:
            self._discard(tenant)
            loaded = f"built: snapshot damaged ({damaged.section})"
        if isinstance(loaded, str):
            self.opened[tenant] = loaded
            if handed is not None and holds_only(self.store, tenant, handed):
                self.opened[tenant] = f"{loaded}; indexed from the commit that wrote it"
                self._damage.pop(tenant, None)
                return _built_from(tenant, handed.memories)
            return self._build(tenant, self.progress)
        return loaded

    def _load(self, tenant: str, handed: Handed | None = None) -> TenantIndex | str:
        """The index from the snapshot, caught up (and written again if far behind); else why not.

        A snapshot one commit behind ``handed`` takes its versions, unread. Raises
        IndexDamaged when a block the catch-up or the writing reads is damaged.
        """
        store = self.store
        path = self._path(tenant)
        if path is None:
            return "built: no snapshot place" if self.seen else "built: empty store"
        restored = restore_snapshot(store, path, tenant, self.seen)
        if isinstance(restored, str):
            return restored
        index, opened = restored
        self._damage[tenant] = opened.damage
        index.dense_file = vectorfile.Beside(path, tenant, opened.stamp, opened.damage)
        caught = _caught_up(store, index, opened.stamp.seq, self.seen, handed)
        if isinstance(caught, str):
            return caught
        ids, purged = caught
        self.opened[tenant] = f"loaded, caught up {len(ids)} memories"
        if not ids:  # the file is this index (only other tenants committed): `keep` leaves it be
            self.saved[tenant] = self.seen
        if purged or len(ids) >= RESAVE_AFTER:  # a purge's words leave the file at once
            self.tenants[tenant] = index
            self._write(tenant, erasing=purged)
        return index

    def _build(self, tenant: str, progress: Progress | None) -> TenantIndex:
        """The tenant's index from its memories, read a page at a time (and its snapshot).

        Pages keep a build's memory to one page of memories beside the index.
        Commits landing between two pages are applied again by the next catch-up
        (they come after ``seen``), as for any other writer's commits.
        """
        self._damage.pop(tenant, None)
        index, done = read_pages(self.store, tenant, progress, BUILD_STEP)
        if done < SNAPSHOT_MIN:  # kept in memory as a snapshot would hold it: a few arrays
            self.tenants[tenant] = index = index.compacted()
            path = self._path(tenant)
            if path is not None:
                files.remove(path)  # (an older snapshot: this one is rebuilt from the store)
            return index
        self.tenants[tenant] = index
        self.save(tenant)
        return index

    def _catch_up(self) -> bool:
        """Apply the commits of other writers that landed since the last one seen; whether
        one of them purged.

        Their purges also delete this host's snapshots of tenants not open here. A commit
        it had seen that is gone (a server crash lost it before it was durable, and the
        next commit took its seq; a restore) lets every index go: reopened when next asked.
        """
        head, head_id = self.store.tip
        if (head, head_id) == (self.seen, self.seen_id):
            return False
        if head <= self.seen or self.store.commit_id(self.seen) != self.seen_id:
            _start_over(self)
            self.seen, self.seen_id = head, head_id
            return False
        since = self.seen, self.seen_id
        self.seen, self.seen_id = head, head_id  # before applying: a save it makes finds none left
        try:
            changes = self.store.tenant_changes(since[0], head)
            mine = [c.memory_id for t, c in changes if c.memory_id and t in self.tenants]
            ids = list(dict.fromkeys(mine))  # (other tenants' memories are not read)
            if len(ids) > CATCH_UP_LIMIT:
                self._drop_all()  # cheaper to open each tenant again when next asked
            _erase_elsewhere(self, changes)  # (after the clear: it erases theirs too)
            self._apply(ids)  # (nothing once cleared: no tenant is open)
        except BaseException:
            self.seen, self.seen_id = since  # applied again next time: a second put is no change
            raise
        return any(change.op == "purge" for _, change in changes)

    def _drop_all(self) -> list[str]:
        """Let every tenant's index go (reopened when next asked); their snapshots' names."""
        dropped = [snapshot_name(tenant) for tenant in self.tenants]
        self.tenants.clear()
        self._damage.clear()
        self.saved.clear()
        self.pending, self.ready = [], []
        return dropped

    def _on_commit(self, commit: Commit) -> None:
        """Note the commit's memories of the tenants held; they are indexed at the next recall.

        A commit of this Store hands over the versions it wrote, so catching
        up reads nothing; otherwise its ids are read then, in one read. A purge is
        applied at once (its words leave the snapshot now); so many pending
        changes that catching up costs more than opening again drop the indexes.
        """
        with self.lock:
            if commit.seq <= self._noted:  # (`keep_current` may hand it over before its turn)
                return
            self._noted = commit.seq
            if commit.seq <= self.seen:  # caught up past it (a hook recalled first): its
                return  # memories were read then, as new as its versions or newer
            written = self.store.written(commit) if self.tenants else None
            if written is not None:  # own commit: its versions at hand (others' read when opened)
                self.ready += [m for m in written if m.tenant in self.tenants]
            elif self.tenants:
                self.pending += [c.memory_id for c in commit.changes if c.memory_id]
            purges = any(change.op == "purge" for change in commit.changes)
            if len(self.pending) + len(self.ready) > CATCH_UP_LIMIT:
                dropped = self._drop_all()
                if purges and self.directory is not None:  # not written again: must go
                    files.erase(self.directory, dropped)
            elif purges:
                self._flush()
            if commit.seq == self.seen + 1:  # otherwise another writer's commits came between
                self.seen, self.seen_id = commit.seq, commit.id

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
        """Put ``memories`` (in order: a later version wins) into the indexes of their tenants.

        Every tenant is put before a purged one's snapshot is written: writing catches
        up first, and may read a newer version of a memory of a tenant still to be put
        here, which the older one in ``memories`` must not then replace.
        """
        with self.lock:
            changed: dict[str, list[Memory]] = {}
            for memory in memories:
                if memory.tenant in self.tenants:
                    changed.setdefault(memory.tenant, []).append(memory)
            purged = []
            for tenant, memories in changed.items():
                try:
                    if put_versions(self.tenants[tenant], memories):
                        purged.append(tenant)
                except IndexDamaged:  # dropped with its snapshot; the next recall rebuilds
                    self._discard(tenant)
            for tenant in purged:  # (a tenant let go meanwhile has its file erased instead)
                try:
                    self._write(tenant, erasing=True)  # the purged words leave the file now
                except IndexDamaged:
                    self._discard(tenant)
            for tenant in changed:  # charged last: charging may let other tenants go
                self.tenants.charge(tenant)


def _caught_up(
    store: StoreLike, index: TenantIndex, seq: int, seen: int, handed: Handed | None
) -> tuple[list[str], bool] | str:
    """Catch ``index`` (a snapshot of commit ``seq``) up to commit ``seen``: the ids put and
    whether one was purged; else why it is rebuilt instead. A snapshot one commit behind
    ``handed`` takes its versions, unread."""
    tenant = index.tenant
    if handed is not None and seq == handed.seq - 1:
        return list(dict.fromkeys(m.id for m in handed.memories)), put_versions(
            index, handed.memories
        )
    if seq >= seen:
        return [], False
    changes = store.tenant(tenant).diff(seq, seen)
    ids = list(dict.fromkeys(c.memory_id for c in changes if c.memory_id))
    if len(ids) > max(CATCH_UP_LIMIT, len(index)):
        return f"built: snapshot {len(ids)} memories behind, it holds {len(index)}"
    return ids, put_versions(
        index, [m for m in store.find(ids=ids, live=False) if m.tenant == tenant]
    )


def _erase_elsewhere(live: StoreIndex, changes: Iterable[tuple[str | None, Change]]) -> None:
    """Delete this host's snapshots of the tenants not open in ``live`` that ``changes`` (each
    with its tenant) purged from. Open tenants are written again when the purge is applied."""
    purged = {t for t, c in changes if c.op == "purge" and c.memory_id and t is not None}
    directory = live.directory if purged else None
    if directory is None:
        return
    files.erase(directory, [snapshot_name(t) for t in sorted(purged) if t not in live.tenants])


def _start_over(live: StoreIndex) -> None:
    """A commit ``live`` saw is gone: every index goes, and every snapshot of this host's
    folder (what changed since, a purge among it, cannot be told; each is rebuilt)."""
    live._drop_all()
    directory = live.directory
    if directory is not None:
        files.erase(directory, [n for n in files.names(directory) if n.endswith(".idx")])


def _unpurged_since(store: StoreLike, seq: int) -> Callable[[], bool]:
    """Whether no purge landed after commit ``seq``: a snapshot of the store as of ``seq``
    then holds no word a purge erased (asked as its file is about to replace the old)."""

    def unpurged() -> bool:
        head, _ = store.tip
        changes = store.tenant_changes(seq, head) if head > seq else []
        return not any(change.op == "purge" for _, change in changes)

    return unpurged


def _built_from(tenant: str, memories: list[Memory]) -> TenantIndex:
    """The index of a tenant whose every memory is among ``memories`` (versions in order).

    The current version of each, in id order, as `StoreIndex._build` reads them from the store.
    """
    current = {memory.id: memory for memory in memories}
    found = [current[memory_id] for memory_id in sorted(current)]
    index = TenantIndex(tenant)
    with index.bulk():
        index.put_many(m for m in found if indexable(m))
    return index.compacted() if len(index) < SNAPSHOT_MIN else index


def erase_purged(store: StoreLike, commit: Commit) -> None:
    """After a commit that purged memories: no snapshot file on this host keeps them.

    A tenant this process has open had its snapshot written again when the
    commit was applied; any other tenant's snapshot is deleted (rebuilt when
    next used), and the leftovers of killed writers are swept. Connected to
    the store by the package top (``Store.connect_purge``).
    """
    purged = [c.memory_id for c in commit.changes if c.op == "purge" and c.memory_id]
    live = _live.get(store)
    directory = (live.directory if live is not None else None) or index_dir(store)
    if directory is None or not purged:
        return
    tenants = {m.tenant for m in store.find(ids=purged, live=False)}
    open_here = set() if live is None else set(live.tenants)
    files.erase(directory, [snapshot_name(t) for t in tenants if t not in open_here])


def _handed(seq: int, versions: Sequence[Memory] | None, tenant: str) -> Handed | None:
    """What commit ``seq`` wrote into ``tenant``, when its versions are at hand."""
    return None if versions is None else Handed(seq, [m for m in versions if m.tenant == tenant])


def keep_current(
    store: StoreLike, commit: Commit, tenants: list[str], written: Sequence[Memory] | None = None
) -> dict[str, int]:
    """The writer's upkeep (`memcommit.upkeep`): ``tenants``' snapshots brought up to ``commit``;
    how many memories each holds.

    ``written``: the versions the commit wrote (``store.written(commit)``), if
    already at hand. A store that keeps no snapshot (in memory) is left alone.
    """
    live = store_index(store)
    if live.directory is None:
        return {}
    return live.keep_current(commit, tenants, written)


def index_dir(store: StoreLike) -> Path | None:
    """This host's folder for ``store``'s recall snapshots, or None (an in-memory store keeps none).

    The store's backend chooses it (``store.cache_dir("recall")``): beside a
    SQLite file (``<file>.recall/``), in the user's cache for PostgreSQL
    (``~/.cache/memcommit/recall/<key>/``), named by the store's identity.
    ``MEMCOMMIT_INDEX_DIR`` moves every store's folder under another directory.
    """
    return store.cache_dir("recall", root=os.environ.get("MEMCOMMIT_INDEX_DIR") or None)


def snapshot_name(tenant: str) -> str:
    """The snapshot file of ``tenant`` (named by a hash: tenant names are any text)."""
    return "tenant-" + hashlib.sha256(tenant.encode()).hexdigest()[:24] + ".idx"


_live: weakref.WeakKeyDictionary[StoreLike, StoreIndex] = weakref.WeakKeyDictionary()
_live_lock = threading.Lock()


def store_index(store: ViewLike) -> StoreIndex:
    """The live index of ``store``, created (and subscribed to its commits) on first use.

    A tenant view leads to its store (``backing_store``), so every view of one store,
    and the store itself, share one index: each tenant is indexed once. Its cache
    takes the store's ``recall_cache_bytes`` as it is now (it may be set on a running
    store; the next charge lets tenants go to fit).
    """
    whole = backing_store(store)
    with _live_lock:
        found = _live.get(whole)
        if found is None:
            found = _live[whole] = StoreIndex(whole, budget=whole.recall_cache_bytes)
        found.tenants.budget = whole.recall_cache_bytes
        return found


@contextmanager
def reporting(store: ViewLike, progress: Progress | None) -> Iterator[None]:
    """Tell ``progress`` of the index builds of ``store`` while the block runs.

    The library draws nothing: the CLI passes its progress bar's callback here.
    """
    live = store_index(store)
    before, live.progress = live.progress, progress
    try:
        yield
    finally:
        live.progress = before

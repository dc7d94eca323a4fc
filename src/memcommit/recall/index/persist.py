"""Recall index snapshots on disk: one file per tenant, mapped on open, written atomically.

A snapshot is derived data: deleting it loses nothing (the index is rebuilt
from the store). Each file is stamped with what it reflects, so a fresh process
can trust it or refuse it:

- the format version and the tenant it holds;
- the store's identity (the id of its first commit: random, so another store's
  snapshot copied here does not match) and the seq and id of the newest commit
  it reflects (a store rolled back or rewritten past that commit does not match);
- a random token of the write, which its vector files carry (another process's
  snapshot of the same commit holds its documents in another order);
- a CRC-32 of the header (its two sizes included), checked at open, and a
  CRC-32 of every block of every array (16 KiB; a file may say another size,
  a vector file's are 8 KiB), checked when the block is first read. Every byte
  before the arrays is checked at open: the magic and format by value, the
  sizes and the header by the header CRC (a size is checked against the file's
  length before anything is read by it).

Why blocks, not one checksum checked at open: at a million memories a snapshot
is some 300 MB. Checking all of it costs more than the first recall itself and
brings the whole file into the process's memory, while a recall reads a small
part (its terms' postings, ten ids, the columns it filters on). Each block is
checked before its first use instead (`memcommit.recall.index.sections`), so damage
anywhere is still never used: a block that fails raises IndexDamaged, and the
index is rebuilt from the store (`memcommit.recall.index.live`); a recall that met
it runs again on the rebuilt index, and only an explanation built after its
recall returned can see the error itself (the next recall rebuilds). The work
moves rather than vanishes: a block is checked by the first query that reads it,
and the columns and forward lists by the process's first write.

Layout: ``MAGIC``, format (u32), header CRC-32 (u32), header size (u64), JSON
size (u64); the header: JSON (stamp, then each array's name, dtype, length,
offset and first block), then the CRC-32 of every block (u32 each), padded to
64 bytes; then the arrays, each at a 64-byte boundary. Strings are arrays too
(UTF-8 blobs with offsets, `memcommit.recall.index.blobs`). Arrays are read straight
from a private (copy-on-write) mapping of the file: opening a snapshot reads
its header and nothing else.
"""

from __future__ import annotations

import dataclasses
import json
import mmap
import os
import secrets
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from memcommit.recall.index import files
from memcommit.recall.index.sections import BLOCK, Damage, Section, block_crcs
from memcommit.recall.index.snapshot import Exported

MAGIC = b"MCRECALL"
FORMAT = 7  # 4: CRC-32 per block, strings as blobs, sorted terms, session links; 5: CRC of
# sizes; 6: each document's version (its stored vector's); 7: each write's token
_PREFIX = struct.Struct("<8sIIQQ")  # magic, format, header crc, header size, JSON size
_SIZES = struct.Struct("<QQ")  # the prefix's last two fields, which the header CRC covers
_ALIGN = 64


def _token() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True)
class Stamp:
    """What a snapshot reflects: a store (its first commit's id) up to commit ``seq``.

    ``token`` names one write (random, new for each stamp made): two processes at
    the same commit write snapshots of one stamp but of their own document order,
    and a vector file is read only beside the very snapshot it was written with
    (`memcommit.recall.index.vectorfile`), never another's of the same commit.
    """

    store: str
    seq: int
    commit: str
    token: str = field(default_factory=_token)


class SnapshotRefused(Exception):
    """A snapshot not to use (missing, foreign, damaged, old format); ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _padded(size: int) -> int:
    return -size % _ALIGN


def _header_crc(header: bytes, text_size: int) -> int:
    """The CRC-32 of the header's two sizes, then of the header itself."""
    return zlib.crc32(header, zlib.crc32(_SIZES.pack(len(header), text_size)))


def write(
    path: Path,
    tenant: str,
    stamp: Stamp,
    data: Exported,
    block: int = BLOCK,
    guard: files.Guard = files.ANY,
) -> int:
    """Write the snapshot of ``tenant`` at ``path`` atomically; returns its size in bytes.

    The file is written beside ``path`` under a temporary name, flushed, then
    renamed over it if ``guard`` lets it: readers see the old snapshot or the new
    one, never a mix (`memcommit.recall.index.files`, which also sweeps what a
    killed writer left).
    """
    arrays = {name: np.ascontiguousarray(values) for name, values in sorted(data.arrays.items())}
    listed: list[list[object]] = []
    crcs: list[int] = []
    offset = 0
    for name, values in arrays.items():
        listed.append([name, values.dtype.str, len(values), offset, len(crcs)])
        crcs += block_crcs(values, block)
        offset += values.nbytes + _padded(values.nbytes)
    stamped = {"tenant": tenant, **dataclasses.asdict(stamp)}
    sizes = {"block": block, "blocks": len(crcs), "size": offset}
    text = json.dumps({**stamped, **sizes, "arrays": listed}).encode()
    table = np.array(crcs, dtype="<u4").tobytes()
    header = text + table
    header += b"\0" * _padded(_PREFIX.size + len(header))
    crc = _header_crc(header, len(text))

    def parts() -> Iterator[bytes | memoryview]:
        yield _PREFIX.pack(MAGIC, FORMAT, crc, len(header), len(text))
        yield header
        for values in arrays.values():
            yield values.data.cast("B")
            yield b"\0" * _padded(values.nbytes)

    return files.write(path, parts(), guard)


@dataclass(frozen=True)
class Opened:
    """A snapshot as read: its stamp, its arrays (unchecked yet) and their shared `Damage`."""

    stamp: Stamp
    sections: dict[str, Section]
    damage: Damage


def read(path: Path, tenant: str, store: str, block: int = BLOCK) -> Opened:
    """The snapshot of ``tenant`` of store ``store`` at ``path``; else SnapshotRefused.

    Only the header is read and checked here; each array is a `Section` of a
    private mapping of the file, checked block by block when first read.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; the mapping outlives it
    except FileNotFoundError:
        raise SnapshotRefused("missing") from None
    with handle:
        meta, header, text_size = _header(handle)
        if meta["tenant"] != tenant:
            raise SnapshotRefused(f"holds tenant {meta['tenant']!r}")
        if meta["store"] != store:
            raise SnapshotRefused("belongs to another store")
        base = _PREFIX.size + len(header)
        if meta["block"] != block:
            raise SnapshotRefused(f"blocks of {meta['block']} bytes, this version checks {block}")
        if os.fstat(handle.fileno()).st_size < base + meta["size"]:
            raise SnapshotRefused("truncated")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    crcs = np.frombuffer(header, dtype="<u4", count=meta["blocks"], offset=text_size).tolist()
    damage = Damage(str(path))
    sections = {}
    for name, dtype, length, offset, first in meta["arrays"]:
        array = np.frombuffer(mapped, dtype=np.dtype(dtype), count=length, offset=base + offset)
        blocks = -(-array.nbytes // block)
        sections[name] = Section(name, array, crcs[first : first + blocks], damage, block)
    stamp = Stamp(meta["store"], meta["seq"], meta["commit"], meta["token"])
    return Opened(stamp, sections, damage)


def described(path: Path) -> dict[str, Any] | None:
    """The checked header of the file at ``path`` (its key as ``"tenant"``, stamp, arrays as
    ``[name, dtype, length, offset, first block]``), or None when it is refused."""
    try:
        with open(path, "rb") as handle:
            return _header(handle)[0]
    except (OSError, SnapshotRefused):
        return None


def _header(handle: BinaryIO) -> tuple[dict[str, Any], bytes, int]:
    """The header's JSON, the header's bytes and the JSON's size; SnapshotRefused when the
    prefix or the header fails its checks (magic, format, sizes, CRC)."""
    prefix = handle.read(_PREFIX.size)
    if len(prefix) < _PREFIX.size:
        raise SnapshotRefused("truncated")
    magic, version, crc, header_size, text_size = _PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise SnapshotRefused("not a recall snapshot")
    if version != FORMAT:
        raise SnapshotRefused(f"format {version}, this version reads {FORMAT}")
    if header_size > os.fstat(handle.fileno()).st_size - _PREFIX.size:
        raise SnapshotRefused("truncated")  # (a damaged size reads nothing)
    header = handle.read(header_size)
    if len(header) < header_size:
        raise SnapshotRefused("truncated")
    if _header_crc(header, text_size) != crc:
        raise SnapshotRefused("checksum mismatch")
    meta: dict[str, Any] = json.loads(header[:text_size])
    return meta, header, text_size

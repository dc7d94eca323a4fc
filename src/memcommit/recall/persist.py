"""Recall index snapshots on disk: one file per tenant, mapped on open, written atomically.

A snapshot is derived data: deleting it loses nothing (the index is rebuilt
from the store). Each file is stamped with what it reflects, so a fresh process
can trust it or refuse it:

- the format version and the tenant it holds;
- the store's identity (the id of its first commit: random, so another store's
  snapshot copied here does not match) and the seq and id of the newest commit
  it reflects (a store rolled back or rewritten past that commit does not match);
- a CRC-32 of everything after the stamp's first bytes (a damaged file does not match).

Layout: ``MAGIC``, format (u32), CRC-32 (u32), header length (u64), the header
(JSON: stamp, then each array's dtype, length and offset, and each string
list's offset, size and encoding: newline-joined, or JSON when a string is empty
or holds a newline), then the arrays, each at a 64-byte boundary. Arrays
are read straight from a private (copy-on-write) mapping of the file: opening
a snapshot costs its checksum and its string lists, not a copy of its postings.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memcommit.recall.index import Exported

MAGIC = b"MCRECALL"
FORMAT = 3  # 3: the speaker column
_PREFIX = struct.Struct("<8sIIQ")  # magic, format, crc, header length
_ALIGN = 64
_CHUNK = 1 << 24


@dataclass(frozen=True)
class Stamp:
    """What a snapshot reflects: a store (its first commit's id) up to commit ``seq``."""

    store: str
    seq: int
    commit: str


class SnapshotRefused(Exception):
    """A snapshot not to use (missing, foreign, damaged, old format); ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _padded(size: int) -> int:
    return -size % _ALIGN


def write(path: Path, tenant: str, stamp: Stamp, data: Exported) -> int:
    """Write the snapshot of ``tenant`` at ``path`` atomically; returns its size in bytes.

    The file is written beside ``path`` under a temporary name, flushed, then
    renamed over it: readers see the old snapshot or the new one, never a mix.
    """
    blobs: list[tuple[str, bytes | np.ndarray]] = []
    arrays, strings = [], []
    offset = 0
    for name, values in sorted(data.arrays.items()):
        values = np.ascontiguousarray(values)
        arrays.append([name, values.dtype.str, len(values), offset])
        blobs.append((name, values))
        offset += values.nbytes + _padded(values.nbytes)
    for name, texts in sorted(data.strings.items()):
        lines = all(isinstance(t, str) and t and "\n" not in t for t in texts)
        encoded = ("\n".join(texts) if lines else json.dumps(texts, ensure_ascii=False)).encode()
        strings.append([name, offset, len(encoded), "lines" if lines else "json"])
        blobs.append((name, encoded))
        offset += len(encoded) + _padded(len(encoded))
    header = json.dumps(
        {
            "tenant": tenant,
            "store": stamp.store,
            "seq": stamp.seq,
            "commit": stamp.commit,
            "arrays": arrays,
            "strings": strings,
        }
    ).encode()
    header += b" " * _padded(_PREFIX.size + len(header))
    crc = zlib.crc32(header)
    for _, blob in blobs:
        raw = blob.data.cast("B") if isinstance(blob, np.ndarray) else blob
        crc = zlib.crc32(raw, crc)
        crc = zlib.crc32(b"\0" * _padded(len(raw)), crc)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(_PREFIX.pack(MAGIC, FORMAT, crc, len(header)))
            out.write(header)
            for _, blob in blobs:
                raw = blob.data.cast("B") if isinstance(blob, np.ndarray) else blob
                out.write(raw)
                out.write(b"\0" * _padded(len(raw)))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path.stat().st_size


def _texts(raw: bytes, encoding: str) -> list[str]:
    """A string list as written: newline-joined (the fast common case) or JSON."""
    if encoding == "json":
        return list(json.loads(raw))
    return raw.decode().split("\n") if raw else []


def read(path: Path, tenant: str, store: str) -> tuple[Stamp, Exported]:
    """The snapshot of ``tenant`` of store ``store`` at ``path``, checked; else SnapshotRefused.

    The checksum is computed by reading the file (page cache, not this
    process's memory); the arrays are then views of a private mapping.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; the mapping outlives it
    except FileNotFoundError:
        raise SnapshotRefused("missing") from None
    with handle:
        prefix = handle.read(_PREFIX.size)
        if len(prefix) < _PREFIX.size:
            raise SnapshotRefused("truncated")
        magic, version, crc, header_size = _PREFIX.unpack(prefix)
        if magic != MAGIC:
            raise SnapshotRefused("not a recall snapshot")
        if version != FORMAT:
            raise SnapshotRefused(f"format {version}, this version reads {FORMAT}")
        computed = 0
        while chunk := handle.read(_CHUNK):
            computed = zlib.crc32(chunk, computed)
        if computed != crc:
            raise SnapshotRefused("checksum mismatch")
        handle.seek(_PREFIX.size)
        header: dict[str, Any] = json.loads(handle.read(header_size))  # its bytes passed the CRC
        if header["tenant"] != tenant:
            raise SnapshotRefused(f"holds tenant {header['tenant']!r}")
        if header["store"] != store:
            raise SnapshotRefused("belongs to another store")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    base = _PREFIX.size + header_size
    arrays = {
        name: np.frombuffer(mapped, dtype=np.dtype(dtype), count=length, offset=base + offset)
        for name, dtype, length, offset in header["arrays"]
    }
    strings = {
        name: _texts(mapped[base + offset : base + offset + size], encoding)
        for name, offset, size, encoding in header["strings"]
    }
    stamp = Stamp(header["store"], header["seq"], header["commit"])
    return stamp, Exported(arrays, strings)

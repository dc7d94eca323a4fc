"""Every byte of a recall snapshot's header is checked (issue 24, item 1).

The sizes in the file's prefix (bytes 16-31) were outside the header CRC: one
flipped bit there made every recall of the tenant raise MemoryError,
JSONDecodeError or UnicodeDecodeError, forever. Now any flipped bit before
the arrays refuses the file: recall answers exactly as from a fresh build, and
the file is written again, sound.
"""

from __future__ import annotations

import os
import re

from memcommit.recall import recall
from memcommit.recall.index import persist
from memcommit.recall.index.live import index_dir, snapshot_name, store_index

PREFIX = 32  # magic, format, header CRC, header size, JSON size
WORDS = ["alpha", "beta", "gamma", "deploy", "deployed", "cache", "pool", "logs"]
REFUSALS = {"not a recall snapshot", "checksum mismatch", "truncated"}


def fill(store, now):
    with store.commit(message="fill", now=now) as tx:
        for i in range(30):
            words = [WORDS[(i * 5 + j * 3) % len(WORDS)] for j in range(1 + i % 4)]
            tx.add(" ".join(words), id=f"m{i}", tenant="t", session=f"s{i % 3}")


def written(data: bytes) -> bytes:
    """A snapshot file without what differs between two writes of one index: the write's
    token (`persist.Stamp`) and the header CRC that covers it."""
    data = re.sub(rb'"token": "[0-9a-f]{16}"', b'"token": ""', data)
    return data[:12] + bytes(4) + data[16:]


def answer(store, now):
    ctx = recall(store, "alpha deploy logs", tenant="t", now=now, max_records=4)
    return [m.id for m in ctx.selected], [
        (r.memory.id, r.stage, r.cosine, r.score, r.outcome, r.reason) for r in ctx.rows
    ]


def test_a_flipped_bit_anywhere_in_the_prefix_is_refused_and_the_snapshot_rebuilt(make_store, now):
    store = make_store("s.db")
    fill(store, now)
    expected = answer(store, now)
    path = index_dir(store) / snapshot_name("t")
    sound = path.read_bytes()
    for bit in range(PREFIX * 8):
        damaged = bytearray(sound)
        damaged[bit // 8] ^= 1 << bit % 8
        path.write_bytes(bytes(damaged))
        again = make_store("s.db")
        assert answer(again, now) == expected, bit
        opened = store_index(again).opened["t"]
        reason = opened.removeprefix("built: snapshot ")
        assert reason in REFUSALS or reason.startswith("format "), (bit, opened)
        rebuilt = path.read_bytes()  # built, then written again: the same file but its token
        assert written(rebuilt) == written(sound) and rebuilt != bytes(damaged), bit
        again.close()


def test_a_flipped_bit_anywhere_in_the_header_is_refused_at_open(make_store, now):
    """Every bit of the JSON, the blocks' CRC table and the padding, one at a time."""
    store = make_store("s.db")
    fill(store, now)
    answer(store, now)
    path = index_dir(store) / snapshot_name("t")
    sound = path.read_bytes()
    header_size = int.from_bytes(sound[16:24], "little")
    assert header_size > 1000  # a real header: dozens of arrays listed
    identity = store.log()[-1].id
    fd = os.open(path, os.O_RDWR)
    try:
        for bit in range(PREFIX * 8, (PREFIX + header_size) * 8):
            place, original = bit // 8, sound[bit // 8]
            os.pwrite(fd, bytes([original ^ 1 << bit % 8]), place)
            try:
                persist.read(path, "t", identity)
            except persist.SnapshotRefused as refused:
                assert refused.reason == "checksum mismatch", bit
            else:
                raise AssertionError(f"bit {bit} flipped, the snapshot was still read")
            os.pwrite(fd, bytes([original]), place)
    finally:
        os.close(fd)
    assert persist.read(path, "t", identity).stamp.seq == 1  # sound again: it reads

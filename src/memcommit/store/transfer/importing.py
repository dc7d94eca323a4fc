"""Import: a JSON Lines export checked line by line against its trailer, loaded all or nothing."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from memcommit.errors import InvalidInput
from memcommit.store.backends.base import Backend
from memcommit.store.store import Store
from memcommit.store.transfer.format import RECORD_TYPES, Progress, Summary, backend_of
from memcommit.store.transfer.loader import Loader
from memcommit.store.verify import Witness, against


def load(
    backend: Backend,
    items: Iterable[dict[str, Any]],
    *,
    progress: Progress | None = None,
    expect: Witness | str | None = None,
) -> Summary:
    """Write exported records into the empty store behind ``backend``, all or nothing.

    Every hash is recomputed as the rows are written: a commit whose hash is not
    the exported one is refused, naming its line; ``expect`` (a witness) refuses
    a history behind it or forked from it.
    """
    expected = None if expect is None else Witness.parse(expect, field="expect")
    with filling(backend):
        return written(backend, items, progress=progress, expected=expected)


@contextlib.contextmanager
def filling(backend: Backend) -> Iterator[Backend]:
    """One write transaction on the new, empty store behind ``backend``: what is written
    inside lands when the block ends, and nothing of it if the block raises."""
    head = backend.commits(limit=1)
    if head:
        seq = head[0][0].seq
        raise InvalidInput(
            "store", backend.target, f"holds {seq} commit(s): import only into a new, empty store"
        )
    backend.begin()
    try:
        yield backend
    except BaseException:
        backend.rollback()
        raise
    backend.commit()


def written(
    backend: Backend,
    items: Iterable[dict[str, Any]],
    *,
    progress: Progress | None = None,
    expected: Witness | None = None,
) -> Summary:
    """`load` inside the caller's open `filling` of ``backend``: the records written, checked."""
    loader = Loader(backend, progress)
    for number, record in enumerate(items, start=1):
        loader.take(number, record)
    summary = loader.finish()
    problems = backend.check()
    if problems:
        raise InvalidInput("input", problems[0], "the records do not make a consistent store")
    unwitnessed = against(backend, expected) if expected is not None else []
    if unwitnessed:
        raise InvalidInput("expect", str(expected), str(unwitnessed[0]))
    return summary


def import_jsonl(
    store: Store,
    source: IO[str],
    *,
    progress: Progress | None = None,
    expect: Witness | str | None = None,
) -> Summary:
    """Load a JSON Lines export from ``source`` into the empty ``store``; returns the counts.

    The rows go in below the Store, so ``on_commit`` hooks (and indexes built on
    them, like recall's) do not hear of them: import into a freshly opened store.
    ``expect``: the witness the export must reach (see `load`).
    """
    return load(backend_of(store), _parsed(source), progress=progress, expect=expect)


def _parsed(source: IO[str]) -> Iterator[dict[str, Any]]:
    """The records of an export file, each line checked against the trailer's digest and counts.

    The trailer is checked when it is reached, before `load` commits anything; a
    file that ends without one, or goes on after it, is refused naming the line.
    """
    digest = hashlib.sha256()
    counts = dict.fromkeys(RECORD_TYPES, 0)
    number = 0
    lines = iter(source)
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {number}", line[:80], f"is not JSON: {exc.msg}") from None
        if isinstance(record, dict) and record.get("type") == "trailer":
            _check_trailer(number, record, digest.hexdigest(), counts)
            extra = next(lines, None)
            if extra is not None:
                raise InvalidInput(f"line {number + 1}", extra[:80], "follows the trailer")
            return
        digest.update(line.encode("utf-8", "surrogatepass"))
        if isinstance(record, dict) and record.get("type") in counts:
            counts[record["type"]] += 1
        yield record
    raise InvalidInput(
        f"line {number + 1}", "", "the export ends without its trailer: the file was cut short"
    )


def _check_trailer(
    number: int, trailer: dict[str, Any], digest: str, counts: dict[str, int]
) -> None:
    """InvalidInput naming the trailer's line when the lines before it are not what it lists."""
    if trailer.get("lines") != number - 1:
        raise InvalidInput(
            f"line {number}: lines", trailer.get("lines"), f"but {number - 1} lines precede it"
        )
    if "vector" not in (trailer.get("counts") or {}) and not counts["vector"]:
        counts = {k: n for k, n in counts.items() if k != "vector"}  # written before format 4
    if trailer.get("counts") != counts:
        raise InvalidInput(f"line {number}: counts", trailer.get("counts"), f"but found {counts}")
    if trailer.get("sha256") != digest:
        raise InvalidInput(
            f"line {number}: sha256",
            trailer.get("sha256"),
            "does not match the lines before it: the file was edited or reordered",
        )

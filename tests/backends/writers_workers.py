"""Writers run in separate processes by the PostgreSQL writers tests (importable by spawn).

Each writer reports what it was told about every commit it tried, so the test can
hold the store to it: "landed" (with the seq), "absent" (`Unavailable` saying it
did not land), "unknown" (`Unavailable` saying it cannot tell) or another error.
"""

from __future__ import annotations

import time
from typing import Any

import memcommit
from memcommit.errors import Conflict, MemcommitError, Unavailable

Outcome = tuple[str, str, int | str]  # (key, what the writer was told, seq or the error)


def told(exc: MemcommitError) -> str:
    """What an error from a commit says about it: "absent", "unknown", or the error's class."""
    if isinstance(exc, Unavailable):
        return "absent" if "did not land" in str(exc) else "unknown"
    return type(exc).__name__


def commit_outcomes(
    target: str,
    worker: int,
    tenant: str,
    count: int,
    barrier: Any,
    acked: Any = None,
    hold: float = 0.0,
    ordered: bool = False,
) -> list[Outcome]:
    """Try ``count`` single-memory commits on ``tenant``; what each one was told.

    ``acked`` (a shared counter), when given, counts the commits told "landed" as
    they are told, so a test that kills this process knows how many it heard of.
    ``hold`` seconds are spent inside each commit's block, as an agent's own code
    runs between its statements. ``ordered``: the block asks for its seq first, so
    it holds the writers' lock and its transaction open throughout (else it only
    adds, and the server orders it as it lands).
    """
    out: list[Outcome] = []
    with memcommit.open(target) as store:
        view = store.tenant(tenant)
        barrier.wait(60)
        for i in range(count):
            key = f"w{worker}-{i}"
            try:
                with view.commit(message=key, author=f"writer-{worker}") as tx:
                    if ordered:
                        assert tx.pending.seq > 0
                    made = tx.add(f"writer {worker} note {i}", key=key)
                    time.sleep(hold)
            except MemcommitError as exc:
                out.append((key, told(exc), str(exc)))
                continue
            assert tx.result is not None
            # the memory the block was given carries the commit it landed in
            assert (made.created_commit, made.created_at) == (tx.result.seq, tx.result.time)
            out.append((key, "landed", tx.result.seq))
            if acked is not None:
                with acked.get_lock():
                    acked.value += 1
    return out


def race_updates(target: str, memory_id: str, worker: int, rounds: int, barrier: Any) -> list:
    """``rounds`` times: read the memory's version, update it expecting that version.

    Returns ("won", new version) or ("conflict", expected, actual) per round.
    """
    out: list[tuple[Any, ...]] = []
    with memcommit.open(target) as store:
        barrier.wait(60)
        for i in range(rounds):
            seen = store.get(memory_id).version
            try:
                with store.commit(message=f"rival {worker} round {i}") as tx:
                    new = tx.update(
                        memory_id, expected_version=seen, content=f"{worker} over {seen} ({i})"
                    )
            except Conflict as exc:
                out.append(("conflict", exc.expected, exc.actual))
                continue
            out.append(("won", new.version))
    return out

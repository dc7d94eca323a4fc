"""Many agents, one memory: agent processes commit to one PostgreSQL store at once.

    python examples/fleet.py                         # the local server, a throwaway schema
    python examples/fleet.py --agents 8 --turns 100 --postgres postgresql://host/db

Each agent is its own process serving its own user (a tenant). Every turn it commits
what it learned about its user as one memory, and a note to the team's shared
tenant, which every agent writes at once. Meanwhile a recall service, one more
process, keeps asking each user's memory a question. Nobody coordinates: the server
orders the commits as they land.

At the end the store is checked the way a skeptical operator would:
- every commit landed exactly once, and the log's seqs run 1, 2, 3... without a gap;
- each user holds exactly their own memories;
- no recall ever returned another user's memory;
- ``verify()`` derives every commit's hash again, back to the first.

The schema is dropped at the end unless ``--keep`` is given.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import sys
import time
import uuid
from typing import Any

import memcommit

TEAM = "team"
QUESTION = "which service do I own and when do I deploy"


def user(number: int) -> str:
    return f"user-{number}"


def agent(url: str, number: int, turns: int, start: Any, results: Any) -> None:
    """One agent's turns: a fact about its user, then a note to the team."""
    with memcommit.open(url) as store:
        mine, team = store.tenant(user(number)), store.tenant(TEAM)
        start.wait()
        began = time.perf_counter()
        for turn in range(turns):
            with mine.commit(message=f"agent {number}: turn {turn}") as tx:
                tx.add(
                    f"{user(number)} owns service s{number}-{turn} and deploys it"
                    f" on day {turn % 7 + 1} of the week",
                    key=f"service-{turn}",
                )
            with team.commit(message=f"agent {number}: note {turn}") as tx:
                tx.add(f"agent {number} finished turn {turn} for {user(number)}", kind="event")
        results.put(time.perf_counter() - began)


def recall_service(url: str, agents: int, start: Any, done: Any, results: Any) -> None:
    """Recall in every user's tenant until the agents finish; count what it saw of
    another tenant (it must stay 0)."""
    recalls = foreign = 0
    with memcommit.open(url) as store:
        start.wait()
        while not done.is_set() or recalls < agents:
            for number in range(agents):
                context = store.tenant(user(number)).recall(QUESTION, max_records=5)
                foreign += sum(memory.tenant != user(number) for memory in context)
                recalls += 1
    results.put((recalls, foreign))


def run(base: str, agents: int, turns: int, keep: bool) -> int:
    """The fleet on a new schema of ``base``: agents and the recall service, then the checks."""
    schema = f"fleet_{uuid.uuid4().hex[:12]}"
    url = f"{base}{'&' if '?' in base else '?'}schema={schema}"
    memcommit.open(url).close()  # the schema and its tables, before the agents start
    spawn = multiprocessing.get_context("spawn")
    start, done, results = spawn.Barrier(agents + 2, timeout=120), spawn.Event(), spawn.Queue()
    workers = [spawn.Process(target=agent, args=(url, n, turns, start, results), name=f"agent {n}")
               for n in range(agents)]  # fmt: skip
    workers.append(spawn.Process(target=recall_service, name="the recall service",
                                 args=(url, agents, start, done, results)))  # fmt: skip
    try:
        for worker in workers:
            worker.start()
        start.wait()
        began = time.perf_counter()
        seconds = _collect(results, workers, agents)
        wall = time.perf_counter() - began
        done.set()
        (recalls, foreign), *_ = _collect(results, workers, 1)
        for worker in workers:
            worker.join()
        return report(url, agents, turns, wall, max(seconds), recalls, foreign)
    except ChildFailed as failed:
        print(f"FAILED: {failed}")
        return 1
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
        if keep:
            print(f"kept: schema {schema}: {url}")
        else:
            _drop(base, schema)
            print(f"dropped: schema {schema}")


class ChildFailed(Exception):
    """An agent or the recall service ended with an error (its traceback is on stderr)."""


def _collect(results: Any, workers: list[Any], count: int) -> list[Any]:
    """The next ``count`` results the processes put, or ChildFailed once one of them died."""
    found: list[Any] = []
    while len(found) < count:
        try:
            found.append(results.get(timeout=0.2))
        except queue.Empty:
            dead = [w.name for w in workers if w.exitcode not in (None, 0)]
            if dead:
                raise ChildFailed(f"{', '.join(dead)} exited with an error") from None
    return found


def report(
    url: str, agents: int, turns: int, wall: float, slowest: float, recalls: int, foreign: int
) -> int:
    """Print what the fleet did and check it; 0 when every check holds, 1 otherwise."""
    commits = 2 * agents * turns
    rate = commits / wall
    print(f"{agents} agents x {turns} turns: {commits:,} commits in {wall:.2f} s"
          f" ({rate:,.0f} commits/s; the slowest agent took {slowest:.2f} s)")  # fmt: skip
    print(f"recall service: {recalls:,} recalls while the agents wrote")
    failures = []
    with memcommit.open(url) as store:
        seqs = sorted(commit.seq for commit in store.log())
        if seqs != list(range(1, commits + 1)):
            failures.append(f"the log holds {len(seqs)} commits, not seqs 1..{commits} once each")
        for number in range(agents):
            held = store.tenant(user(number)).find()
            if len(held) != turns or any(m.tenant != user(number) for m in held):
                failures.append(f"{user(number)} holds {len(held)} memories, not {turns}")
        if len(store.tenant(TEAM).find()) != agents * turns:
            failures.append(f"the team tenant does not hold {agents * turns} notes")
        if foreign:
            failures.append(f"recalls returned {foreign} memories of another user")
        verified = store.verify()
        if not verified.ok:
            failures.append(f"verify: {verified.first}")
    print(f"verify: {verified.commits:,} commits and {verified.versions:,} versions re-derived,"
          f" {'ok' if verified.ok else 'FAILED'}")  # fmt: skip
    for failure in failures:
        print(f"FAILED: {failure}")
    if not failures:
        print(f"log: seqs 1..{commits}, each commit once; each user holds only their own"
              " memories; no recall crossed tenants")  # fmt: skip
    return 1 if failures else 0


def _drop(base: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _positive(text: str) -> int:
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {number}")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default=os.environ.get(
        "MEMCOMMIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"))  # fmt: skip
    parser.add_argument("--agents", type=_positive, default=4)
    parser.add_argument("--turns", type=_positive, default=100)
    parser.add_argument("--keep", action="store_true", help="keep the schema; print its URL")
    args = parser.parse_args(argv)
    try:
        return run(args.postgres, args.agents, args.turns, args.keep)
    except memcommit.errors.Unavailable as exc:
        print(f"no PostgreSQL to run on: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

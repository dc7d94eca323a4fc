"""Time poolsplit.retrieve_pools on 100,000 memories against a straightforward implementation.

The peer is the obvious reading of the spec (the shape of poolsplit 0.1.0):
every pool filters the whole list, scores every candidate, re-tokenizes the
message for every entry and sorts all candidates. Both run on the same data in
the same process; the script prints the median of several runs of each and
checks that they select exactly the same entries.

    .venv/bin/python benchmarks/poolsplit_bench.py [--entries 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
from datetime import datetime, timedelta, timezone

from poolsplit import Pool, retrieve_pools

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
TYPES = ("fact", "event", "procedure", "skill", "growth", "decision", "correction", "preference")
PROJECTS = ("api", "web", "infra", "mobile", "data", None)
TAGS = ("deploy", "auth", "billing", "search", "latency", "docs", "testing", "ux", "oncall", "db")
POOLS = [
    Pool("corrections", max_tokens=300, max_entries=5, types=("correction", "preference")),
    Pool("facts", max_tokens=900, max_entries=12, types=("fact", "decision")),
    Pool("skills", max_tokens=500, max_entries=6, types=("skill", "procedure")),
    Pool("growth", max_tokens=300, max_entries=4, types=("growth",)),
    Pool("anything", max_tokens=700, max_entries=10),
]


def vocabulary(rng: random.Random) -> list[str]:
    """About 2,000 made-up words plus common English filler (stop words included)."""
    syllables = ["ka", "lo", "mi", "ne", "ro", "ta", "vi", "zu", "pe", "sa", "do", "re", "xi"]
    made_up = {"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(2500)}
    filler = ["the", "and", "for", "with", "that", "this", "from", "into", "user", "team"]
    return sorted(made_up) + filler * 20


def make_entries(count: int, seed: int = 7) -> tuple[list[dict], dict]:
    """Mixed-type memories (some always-scope, some archived or superseded) and a context."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    entries = []
    for n in range(count):
        entry = {
            "id": f"m{n:06d}",
            "content": " ".join(rng.choices(words, k=rng.randint(8, 40))),
            "created": (NOW - timedelta(minutes=rng.randint(0, 200 * 24 * 60))).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
            "tags": rng.sample(TAGS, rng.randint(0, 3)),
            "project": rng.choice(PROJECTS),
            "base_priority": rng.choice((3, 5, 5, 7, 9)),
        }
        kind = rng.choice((*TYPES, None))
        if kind is not None:
            entry["type"] = kind
        if rng.random() < 0.002:
            entry["scope"] = "always"
        if rng.random() < 0.05:
            entry["status"] = "archived"
        elif rng.random() < 0.02:
            entry["superseded_by"] = f"m{rng.randrange(count):06d}"
        if rng.random() < 0.3:
            entry["token_count"] = rng.randint(10, 80)
        entries.append(entry)
    context = {
        "project": "api",
        "tags": ["deploy", "latency"],
        "message": " ".join([*rng.choices(words[:2000], k=10), "the", "deploy"]),
    }
    return entries, context


# ── the peer: a straightforward implementation ─────────────────────────────

STOP_WORD_TEXT = (
    "the and for are but not you all can her was one our out day has had his how man new now "
    "old see two way who did its let put say she too use that this with from they them then "
    "than have will your what when were been into some more very just over only"
)
STOP = set(STOP_WORD_TEXT.split())


def plain_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in STOP}


def plain_score(entry: dict, context: dict, now: datetime) -> float:
    score = float(entry.get("base_priority", 5))
    days = 0.0
    created = entry.get("created") or ""
    if isinstance(created, str) and created:
        try:
            then = datetime.fromisoformat(created.rstrip("Z")).replace(tzinfo=None)
            days = max(0.0, (now.replace(tzinfo=None) - then).total_seconds() / 86400.0)
        except ValueError:
            days = 0.0
    score *= max(0.3, 1.0 - (days / 90.0) * 0.7)
    tags = set(entry.get("tags") or [])
    if tags:
        score *= 1.0 + (len(tags & set(context.get("tags") or [])) / len(tags)) * 0.5
    project = entry.get("project")
    if project is not None:
        score *= 1.5 if project == context.get("project") else 0.5
    message = context.get("message") or ""
    if message:
        mine, theirs = plain_words(message), plain_words(str(entry.get("content", "")))
        if mine and theirs:
            overlap = len(mine & theirs) / len(mine)
            if overlap > 0.15:
                score *= 1.0 + overlap * 1.5
    return score


def plain_cost(entry: dict) -> int:
    count = entry.get("token_count")
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return count
    return max(1, len(str(entry.get("content", ""))) // 4)


def plain_retrieve_pools(entries: list[dict], pools: list[Pool], context: dict, now: datetime):
    taken: set[int] = set()
    result = {}
    for pool in pools:
        candidates = [
            e
            for e in entries
            if id(e) not in taken
            and e.get("status", "active") == "active"
            and not e.get("superseded_by")
            and (pool.types is None or e.get("type", "note") in pool.types)
        ]
        always = [e for e in candidates if e.get("scope") == "always"]
        rest = [e for e in candidates if e.get("scope") != "always"]
        keyed = sorted(
            (-plain_score(e, context, now), e.get("created") or "", e.get("id") or "", i)
            for i, e in enumerate(rest)
        )
        chosen, used = [], 0
        for *_, i in keyed:
            if len(chosen) >= pool.max_entries:
                break
            cost = plain_cost(rest[i])
            if used + cost <= pool.max_tokens:
                chosen.append(rest[i])
                used += cost
        result[pool.name] = always + chosen
        taken.update(id(e) for e in result[pool.name])
    return result


# ── timing ──────────────────────────────────────────────────────────────────


def medians(fn, runs: int) -> tuple[float, float, object]:
    """Median wall-clock and CPU seconds of ``runs`` calls (CPU time is steadier on a busy
    machine), and the last result."""
    wall, cpu, result = [], [], None
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    entries, context = make_entries(args.entries)
    ours, ours_cpu, selected = medians(
        lambda: retrieve_pools(entries, POOLS, context, now=NOW), args.runs
    )
    peer, peer_cpu, expected = medians(
        lambda: plain_retrieve_pools(entries, POOLS, context, NOW), args.runs
    )

    def ids(result):
        return {name: [e["id"] for e in chosen] for name, chosen in result.items()}

    same = ids(selected) == ids(expected)
    always = sum(1 for chosen in selected.values() for e in chosen if e.get("scope") == "always")
    print(f"poolsplit bench: {args.entries:,} entries, {len(POOLS)} pools, {args.runs} runs each")
    print(f"  {'implementation':<34}{'median wall':>12}{'median CPU':>12}")
    print(f"  {'poolsplit.retrieve_pools':<34}{ours:>11.3f}s{ours_cpu:>11.3f}s")
    print(f"  {'straightforward (full sort)':<34}{peer:>11.3f}s{peer_cpu:>11.3f}s")
    print(
        f"  speed-up {peer / ours:.1f}x wall, {peer_cpu / ours_cpu:.1f}x CPU; "
        f"identical selections: {'yes' if same else 'NO'}"
    )
    for name, chosen in selected.items():
        print(f"    {name:<12} {len(chosen):>4} entries")
    print(f"  always-scope entries loaded: {always}")
    if not same:
        raise SystemExit("selections differ")


if __name__ == "__main__":
    main()

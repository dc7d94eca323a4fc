"""A literal, unoptimised reading of the poolsplit spec, for differential tests.

Scores every candidate in every pool, tokenizes the message for every entry and
sorts the whole candidate list: slow and obvious, so it is easy to trust.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

STOP_WORD_TEXT = (
    "the and for are but not you all can her was one our out day has had his how man new now "
    "old see two way who did its let put say she too use that this with from they them then "
    "than have will your what when were been into some more very just over only"
)
STOP = set(STOP_WORD_TEXT.split())


def words(text):
    """Significant words: lowercased [a-z0-9]+ longer than 2, minus stop words."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in STOP}


def age_days(created, now):
    """Days since created, 0 for missing/unparseable/future; offsets dropped."""
    if not isinstance(created, str) or not created:
        return 0.0
    try:
        then = datetime.fromisoformat(created.rstrip("Z")).replace(tzinfo=None)
    except ValueError:
        return 0.0
    return max(0.0, (now.replace(tzinfo=None) - then).total_seconds() / 86400.0)


def score(entry, context, *, now=None):
    """The default scorer, factor by factor in the spec's order."""
    context = context or {}
    now = now or datetime.now(timezone.utc)
    value = float(entry.get("base_priority", 5))
    value *= max(0.3, 1.0 - (age_days(entry.get("created"), now) / 90.0) * 0.7)
    entry_tags = set(entry.get("tags") or [])
    if entry_tags:
        shared = entry_tags & set(context.get("tags") or [])
        value *= 1.0 + (len(shared) / len(entry_tags)) * 0.5
    if entry.get("project") is None:
        value *= 1.0
    elif entry.get("project") == context.get("project"):
        value *= 1.5
    else:
        value *= 0.5
    message = context.get("message") or ""
    if message:
        message_words = words(message)
        entry_words = words(str(entry.get("content", "")))
        if message_words and entry_words:
            overlap = len(entry_words & message_words) / len(message_words)
            if overlap > 0.15:
                value *= 1.0 + overlap * 1.5
    return value


def cost(entry, counter):
    """token_count when a positive int, else the counter over the content."""
    count = entry.get("token_count")
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return count
    return counter(str(entry.get("content", "")))


def counter(text):
    return max(1, len(text) // 4)


def active(entry):
    return entry.get("status", "active") == "active" and not entry.get("superseded_by")


def retrieve(entries, pool, context=None, *, scorer=score, now=None, token_counter=counter):
    """One pool: filter, split, always first, full sort, greedy skip-and-continue."""
    candidates = [e for e in entries if active(e)]
    if pool.types is not None:
        candidates = [e for e in candidates if e.get("type", "note") in pool.types]
    always = [e for e in candidates if e.get("scope") == "always"]
    rest = [e for e in candidates if e.get("scope") != "always"]
    ranked = sorted(
        range(len(rest)),
        key=lambda i: (
            -scorer(rest[i], context, now=now),
            rest[i].get("created") or "",
            rest[i].get("id") or "",
            i,
        ),
    )
    chosen, used = [], 0
    for i in ranked:
        if len(chosen) >= pool.max_entries:
            break
        c = cost(rest[i], token_counter)
        if used + c <= pool.max_tokens:
            chosen.append(rest[i])
            used += c
    return always + chosen


def retrieve_pools(entries, pools, context=None, *, scorer=score, now=None, token_counter=counter):
    """Pools in order; whatever an earlier pool took (by identity) is gone for later ones."""
    taken, result = set(), {}
    for pool in pools:
        left = [e for e in entries if id(e) not in taken]
        result[pool.name] = retrieve(
            left, pool, context, scorer=scorer, now=now, token_counter=token_counter
        )
        taken.update(id(e) for e in result[pool.name])
    return result

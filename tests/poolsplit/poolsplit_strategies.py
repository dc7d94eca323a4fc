"""hypothesis strategies for poolsplit: small vocabularies so scores, costs and keys tie often."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import strategies as st

from poolsplit import Pool

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
TYPES = ("fact", "skill", "growth", "correction")
WORDS = ("deploy", "rollback", "cache", "the", "and", "api", "db", "log", "logs", "blog")

contents = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
created = st.sampled_from(
    [
        "2026-06-01T12:00:00Z",
        "2026-05-31T00:00:00",
        "2026-05-01T08:30:00+02:00",
        "2026-03-01",
        "2025-01-01T00:00:00Z",
        "2026-07-01",
        "garbage",
        "",
    ]
)

entries = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "id": st.sampled_from(["m1", "m2", "m3", "m4", "m5", ""]),
            "type": st.sampled_from(TYPES),
            "scope": st.sampled_from(["always", "shared", "session"]),
            "content": contents,
            "tags": st.lists(st.sampled_from("abcd"), max_size=3),
            "project": st.sampled_from(["api", "web", None]),
            "created": created,
            "token_count": st.one_of(st.integers(-2, 30), st.sampled_from([True, 2.5, "7"])),
            "base_priority": st.sampled_from([1, 3, 5, 5, 8, 2.5]),
            "status": st.sampled_from(["active", "active", "archived"]),
            "superseded_by": st.sampled_from([None, "", "m9"]),
        },
    ),
    max_size=40,
)

contexts = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "message": contents,
            "tags": st.lists(st.sampled_from("abcd"), max_size=3),
            "project": st.sampled_from(["api", "web", None]),
        },
    ),
)

type_sets = st.one_of(st.none(), st.lists(st.sampled_from((*TYPES, "note")), max_size=3).map(tuple))


@st.composite
def pool_lists(draw, max_pools=4):
    """Pools with distinct names, caps from zero to generous."""
    count = draw(st.integers(1, max_pools))
    return [
        Pool(
            f"pool{n}",
            draw(st.integers(0, 120)),
            draw(st.integers(0, 8)),
            draw(type_sets),
        )
        for n in range(count)
    ]

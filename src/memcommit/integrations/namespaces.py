"""Namespaces (tuples of labels) as memcommit scopes, and namespace matching.

A namespace ``("user_1", "memories")`` is the scope ``"user_1.memories"``: labels
hold no "." (LangGraph refuses them), so the join is undone by a split and two
namespaces never share a scope. Matching is by whole labels, exactly: no label
is a pattern, except that ``"*"`` in a listing condition stands for any one label.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memcommit.errors import InvalidInput

SEPARATOR = "."
WILDCARD = "*"


def scope_of(namespace: Sequence[str]) -> str:
    """The memcommit scope that holds ``namespace``'s items."""
    labels = tuple(namespace)
    if not labels:
        raise InvalidInput("namespace", labels, "must hold at least one label")
    for label in labels:
        if not isinstance(label, str) or not label or SEPARATOR in label:
            raise InvalidInput("namespace", labels, f"label {label!r} must be text without '.'")
    return SEPARATOR.join(labels)


def namespace_of(scope: str) -> tuple[str, ...]:
    """The namespace a scope written by `scope_of` stands for."""
    return tuple(scope.split(SEPARATOR))


def has_prefix(namespace: tuple[str, ...], prefix: Sequence[str]) -> bool:
    """True when ``namespace`` starts with every label of ``prefix`` (literal labels)."""
    return namespace[: len(prefix)] == tuple(prefix)


def matches(namespace: tuple[str, ...], path: Sequence[str], *, at_end: bool) -> bool:
    """True when ``path`` matches the start (or, with ``at_end``, the end) label by label.

    ``"*"`` in ``path`` matches any one label; every other label must be equal.
    """
    if len(path) > len(namespace):
        return False
    lined_up = namespace[len(namespace) - len(path) :] if at_end else namespace[: len(path)]
    return all(want in (WILDCARD, have) for have, want in zip(lined_up, path, strict=True))


def listing(
    namespaces: Iterable[tuple[str, ...]], *, max_depth: int | None, limit: int, offset: int
) -> list[tuple[str, ...]]:
    """Distinct namespaces (cut to ``max_depth`` labels), sorted, then one page of them."""
    if max_depth is not None:
        namespaces = (ns[:max_depth] for ns in namespaces)
    return sorted(set(namespaces))[offset : offset + limit]

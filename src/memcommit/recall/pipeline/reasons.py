"""Why a memory is not in the context: every exclusion reason, once, in pipeline order.

A `Reason` is a ``str``, equal to the string rows show (``Reason.TOO_OLD ==
"too_old"``). A scope filter's reason carries its filter ``code``, the small
integer `memcommit.recall.pipeline.filters.apply` gives each document (1, 2, ... in the
order the filters apply; 0 means it passed them, and is the code of every
reason decided after them). Packing's two reasons are poolsplit's own outcomes:
poolsplit depends on nothing, so it keeps its constants and these take their
values from them.
"""

from __future__ import annotations

from enum import Enum

import poolsplit


class Reason(str, Enum):
    """One reason a memory is left out of the context (the filters' carry their code)."""

    _value_: str
    code: int

    def __new__(cls, value: str, code: int = 0) -> Reason:
        member = str.__new__(cls, value)
        member._value_ = value
        member.code = code
        return member

    # printed as the string rows show, as `enum.StrEnum` does (Python 3.11+ only)
    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)

    #: Another tenant's record: listed by the workbench's teaching table, never by recall.
    OTHER_TENANT = "other_tenant"
    # the scope filters, in the order they apply (see `memcommit.recall.pipeline.filters`)
    OTHER_KIND = "other_kind", 1  # not among the kinds asked for (or a pool draws from)
    OTHER_SCOPE = "other_scope", 2
    PREVIOUS_SESSION = "previous_session", 3
    TOO_OLD = "too_old", 4
    SUPERSEDED = "superseded", 5  # a newer memory with the same key still holds
    NO_LONGER_HOLDS = "no_longer_holds", 6
    ARCHIVED = "archived", 7
    OTHER_TIER = "other_tier", 8
    # ranking: passed the filters, but the scorer gave it no score
    NO_LEXICAL_MATCH = "no_lexical_match"
    # packing
    OVER_BUDGET = poolsplit.OVER_BUDGET
    OVER_RECORD_LIMIT = poolsplit.OVER_RECORD_LIMIT
    CLAIMED_BY_POOL = "claimed_by_pool"  # an earlier pool had already selected it


#: The scope filters' reasons by code: a document filtered with code c is ``FILTERS[c - 1]``.
FILTERS = tuple(sorted((reason for reason in Reason if reason.code), key=lambda r: r.code))

#: The reasons recall gives, in pipeline order, as the strings rows show
#: (``other_tenant`` is never shown to a tenant).
REASONS = tuple(reason.value for reason in Reason if reason is not Reason.OTHER_TENANT)

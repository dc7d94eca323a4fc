"""PostgreSQL errors as ours: a lost connection is `Unavailable`, the rest `BackendError`."""

from __future__ import annotations

import psycopg
from psycopg_pool import PoolTimeout

from memcommit.errors import BackendError, Unavailable
from memcommit.store.backends import sql as common

#: SQLSTATEs of a lost or refused connection (class 08, and the server shutting a session).
_GONE = ("08", "57P01", "57P02", "57P03")


def translated(exc: BaseException) -> BackendError:
    """The memcommit error for a psycopg (or pool) error."""
    if isinstance(exc, PoolTimeout):
        return Unavailable(f"postgresql: no connection to the server: {exc}")
    state = getattr(exc, "sqlstate", None)
    gone = isinstance(exc, psycopg.InterfaceError) or (
        isinstance(exc, psycopg.OperationalError) and (state is None or state.startswith(_GONE))
    )
    text = str(exc).strip() or type(exc).__name__
    return Unavailable(f"postgresql: {text}") if gone else BackendError(f"postgresql: {text}")


mapped = common.translating((psycopg.Error, PoolTimeout), lambda _, exc: translated(exc))


def lost(exc: BaseException, conn: psycopg.Connection) -> bool:
    """True when ``exc`` came from a connection that is now unusable (worth one more try)."""
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError) and conn.closed

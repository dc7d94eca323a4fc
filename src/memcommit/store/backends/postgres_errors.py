"""PostgreSQL errors as ours: a lost connection is `Unavailable`, the rest `BackendError`;
text the connection's encoding cannot carry is `InvalidInput`."""

from __future__ import annotations

import psycopg
from psycopg_pool import PoolTimeout

from memcommit.errors import BackendError, InvalidInput, MemcommitError, Unavailable
from memcommit.store.backends import sql as common

#: SQLSTATEs of a lost or refused connection (class 08, and the server shutting a session).
_GONE = ("08", "57P01", "57P02", "57P03")
#: The SQLSTATE of a write in a read-only transaction (``read_only=True``, or a read replica).
_READ_ONLY = "25006"


def translated(exc: BaseException) -> BackendError:
    """The memcommit error for a psycopg (or pool) error."""
    if isinstance(exc, PoolTimeout):
        return Unavailable(f"postgresql: no connection to the server: {exc}")
    state = getattr(exc, "sqlstate", None)
    gone = isinstance(exc, psycopg.InterfaceError) or (
        isinstance(exc, psycopg.OperationalError) and (state is None or state.startswith(_GONE))
    )
    text = str(exc).strip() or type(exc).__name__
    if state == _READ_ONLY:
        text = f"the store is open read-only (read_only=True, or a replica): {text}"
    return Unavailable(f"postgresql: {text}") if gone else BackendError(f"postgresql: {text}")


def unencodable(exc: UnicodeEncodeError) -> InvalidInput:
    """Text the connection's ``client_encoding`` cannot carry (psycopg encodes a value as it
    sends it, so nothing of the call was sent): the setting is what to change."""
    bad = exc.object[exc.start : exc.end]
    return InvalidInput(
        "client_encoding",
        exc.encoding,
        f"cannot carry {bad!r}; open the store with client_encoding=UTF8 (the default)",
    )


def _translated(_: object, exc: Exception) -> MemcommitError:
    return unencodable(exc) if isinstance(exc, UnicodeEncodeError) else translated(exc)


mapped = common.translating((psycopg.Error, PoolTimeout, UnicodeEncodeError), _translated)


def lost(exc: BaseException, conn: psycopg.Connection) -> bool:
    """True when ``exc`` came from a connection that is now unusable (worth one more try).

    A session ended in the middle of a pipeline leaves psycopg's connection open but
    unusable, with an error that has no SQLSTATE: that counts as lost too.
    """
    if not isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return False
    state = exc.sqlstate
    return conn.closed or state is None or state.startswith(_GONE)

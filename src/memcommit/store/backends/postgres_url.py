"""A ``postgresql://`` target: the libpq URL and its schema, and the URL shown in messages."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from memcommit.errors import InvalidInput

DEFAULT_SCHEMA = "memcommit"
_SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}\Z")


def split_target(target: str, schema: str | None, connect_timeout: float) -> tuple[str, str]:
    """(libpq conninfo URL, schema) from a ``postgresql://`` target and the open() options.

    ``?schema=`` is ours, not libpq's, so it is taken out of the URL; a
    ``connect_timeout`` is added unless the URL sets one, so an unreachable
    server fails the open instead of hanging it.
    """
    try:
        parts = urlsplit(target)
    except ValueError as exc:  # e.g. "postgresql://[bad/db": an unclosed IPv6 bracket
        masked = re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", target)
        raise InvalidInput("target", masked, f"is not a valid URL ({exc})") from None
    params = parse_qsl(parts.query, keep_blank_values=True)
    named = [value for key, value in params if key == "schema"]
    if len(set(named)) > 1 or (named and schema is not None and named[0] != schema):
        raise InvalidInput(
            "schema", schema or named, "the URL and the option name different schemas"
        )
    chosen = schema if schema is not None else (named[0] if named else DEFAULT_SCHEMA)
    if not isinstance(chosen, str) or not _SCHEMA_NAME.match(chosen):
        raise InvalidInput(
            "schema", chosen, "must be 1-63 letters, digits or _, not starting with a digit"
        )
    if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, int | float):
        raise InvalidInput("connect_timeout", connect_timeout, "must be a number of seconds")
    if not 0 < connect_timeout <= 3600:
        raise InvalidInput("connect_timeout", connect_timeout, "must be between 0 and 3600 seconds")
    kept = [(key, value) for key, value in params if key != "schema"]
    if not any(key == "connect_timeout" for key, _ in kept):
        kept.append(("connect_timeout", str(max(1, round(connect_timeout)))))
    return urlunsplit(parts._replace(query=urlencode(kept, quote_via=quote))), chosen


def shown(conninfo: str) -> str:
    """The URL without its password (in the address or a ``?password=``), for messages."""
    parts = urlsplit(conninfo)
    params = parse_qsl(parts.query, keep_blank_values=True)
    if any(key == "password" for key, _ in params):
        masked = [(key, "***" if key == "password" else value) for key, value in params]
        parts = parts._replace(query=urlencode(masked, quote_via=quote, safe="*"))
    if parts.password is not None:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    return urlunsplit(parts)

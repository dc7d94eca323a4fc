"""Bearer tokens for the served MCP server: each one opens exactly one tenant's memory.

A token is ``mct_<id>_<secret>``: 16 hex digits naming it (shown by `Tokens.list`,
used to revoke it) and 64 hex digits of secret (256 random bits). The store
keeps only the SHA-256 digest of the whole token, in the store-wide state
namespace ``tokens`` under its id, beside its tenant, label and times; the
token itself is printed once, when it is made, and never stored or logged.
A fast hash is the right one here: a 256-bit random secret cannot be guessed
from its digest, so a slow password hash would only slow every request.

Token records are state, not commits: they are who may reach the memory, not
memory. Like all state they travel with `memcommit export` and `migrate`, so
a copied store keeps its tokens, and no tenant view can read them (a view's
state is its own namespace).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from memcommit.errors import InvalidInput, NotFound
from memcommit.store import StoreLike

#: The store-wide state namespace of the token records.
NAMESPACE = "tokens"
PREFIX = "mct_"
_SHAPE = re.compile(r"mct_(?P<id>[0-9a-f]{16})_[0-9a-f]{64}")
#: Compared against when no record matches, so a miss costs what a hit costs.
_NO_DIGEST = "0" * 64


@dataclass(frozen=True)
class TokenInfo:
    """What the store knows of a token: never the token itself."""

    id: str
    tenant: str
    label: str | None
    created: datetime
    revoked: datetime | None = None


@dataclass(frozen=True)
class IssuedToken:
    """A token just made: ``token`` is the secret to hand to one host, shown this once."""

    token: str
    info: TokenInfo


def digest(token: str) -> str:
    """The SHA-256 of a token, as stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _moment(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(timezone.utc)
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise InvalidInput("now", now, "must be a timezone-aware datetime")
    return now


def _info(token_id: str, record: dict[str, Any]) -> TokenInfo:
    revoked = record.get("revoked")
    return TokenInfo(
        id=token_id,
        tenant=record["tenant"],
        label=record.get("label"),
        created=datetime.fromisoformat(record["created"]),
        revoked=None if revoked is None else datetime.fromisoformat(revoked),
    )


class Tokens:
    """The bearer tokens of one store: made, listed, revoked, and checked on every request."""

    def __init__(self, store: StoreLike) -> None:
        self.store = store

    def create(
        self, tenant: str, *, label: str | None = None, now: datetime | None = None
    ) -> IssuedToken:
        """A new token for ``tenant`` (which may have no memories yet); only its digest is kept."""
        if not isinstance(tenant, str) or not tenant.strip():
            raise InvalidInput("tenant", tenant, "must be a non-empty tenant name")
        if label is not None and (not isinstance(label, str) or not 0 < len(label) <= 200):
            raise InvalidInput("label", label, "must be text of 1 to 200 characters")
        token_id = secrets.token_hex(8)
        token = f"{PREFIX}{token_id}_{secrets.token_hex(32)}"
        record = {
            "tenant": tenant,
            "label": label,
            "digest": digest(token),
            "created": _moment(now).isoformat(),
            "revoked": None,
        }
        self.store.state_set(NAMESPACE, token_id, record)
        return IssuedToken(token=token, info=_info(token_id, record))

    def list(self, *, tenant: str | None = None) -> list[TokenInfo]:
        """Every token (revoked ones too), or those of ``tenant``, by creation time."""
        found = [_info(key, r) for key, r in self.store.state_items(NAMESPACE).items()]
        found = [t for t in found if tenant is None or t.tenant == tenant]
        return sorted(found, key=lambda t: (t.created, t.id))

    def revoke(self, token_id: str, *, now: datetime | None = None) -> TokenInfo:
        """Revoke a token by id: no request carrying it is served from now on.

        Revoking a revoked token keeps its first revocation time.
        """
        record = self._record(token_id)
        if record is None:
            raise NotFound("token_id", token_id)
        if record.get("revoked") is None:
            record = {**record, "revoked": _moment(now).isoformat()}
            self.store.state_set(NAMESPACE, token_id, record)
        return _info(token_id, record)

    def check(self, token: str) -> TokenInfo | None:
        """The token presented, with the tenant it opens; None if malformed, unknown or revoked.

        The digests are compared in constant time.
        """
        shape = _SHAPE.fullmatch(token) if isinstance(token, str) else None
        if shape is None:
            return None
        record = self._record(shape["id"])
        stored = _NO_DIGEST if record is None else str(record["digest"])
        if not hmac.compare_digest(stored, digest(token)) or record is None:
            return None
        return None if record.get("revoked") is not None else _info(shape["id"], record)

    def _record(self, token_id: str) -> dict[str, Any] | None:
        if not isinstance(token_id, str) or not re.fullmatch(r"[0-9a-f]{16}", token_id):
            raise InvalidInput("token_id", token_id, "must be a token id: 16 hex digits")
        record = self.store.state_get(NAMESPACE, token_id)
        return None if record is None else dict(record)

"""The canonical encoding of memory versions and commits, and the SHA-256 chain over them.

Encoding 1 (docs/verification.md is its specification). Every text below is a
JSON array written compactly (no spaces) with ASCII-only string escapes, which
is what Python's ``json.dumps(value, separators=(",", ":"))`` writes:

- a version's **body** is ``[salt, content, tags, metadata]``: the three fields
  purge erases, as stored (tags and metadata are their stored JSON texts), after
  16 random bytes in hex. Its hash is the SHA-256 of those bytes, in hex.
- a version's **digest** is the SHA-256 of ``["memcommit-version/1", <every
  other stored field in the versions table's column order>, body hash]``; times
  are UTC ISO 8601 with microseconds (``2026-11-01T12:00:00.000000+00:00``), the
  ``always`` flag is true or false, numbers are as Python's ``repr`` writes them.
- a commit's **hash** is the SHA-256 of the header ``["memcommit-commit/1",
  parent's hash, seq, id, parent id, time, author, message, changes text]``
  followed by the 64 hex digits of the digest of every version the commit wrote,
  in the order of its changes.

Purge erases a version's body and its salt and keeps the body hash (``erased``):
the digest still verifies, and without the salt the hash confirms no guess of
what was erased. The encoders are compiled from the column table (`tables.MEMORY`),
as `rows.Rows` compiles its row codecs, so a new column is covered by itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, get_args, get_type_hints

from memcommit.model import KINDS, STATUSES, TIERS, Memory
from memcommit.store.records import to_text

#: The version of the canonical encoding; stored in the chain record (`CHAIN_STATE`).
FORMAT = 1
VERSION_TAG = "memcommit-version/1"
COMMIT_TAG = "memcommit-commit/1"
#: The fields purge erases: a version's body, hashed apart from the rest with a salt.
BODY = ("content", "tags", "metadata")
#: Where a store records its chain: ``{"format": 1, "sealed_upto": N}``, N being the
#: newest commit that was hashed by the migration (0: every commit hashed as written).
CHAIN_STATE = ("memcommit", "chain")

_quote: Callable[[str], str] = getattr(json.encoder, "c_encode_basestring_ascii", None) or (
    json.encoder.py_encode_basestring_ascii
)
_compact = json.JSONEncoder(separators=(",", ":")).encode
_sha = hashlib.sha256


def _scalar(value: Any) -> str:
    """A non-string value as JSON: null, a bool, an int, a float (``repr``)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    return repr(value)


def salts(n: int) -> list[str]:
    """``n`` fresh salts (16 random bytes each, in hex), from one read of the OS source."""
    raw = os.urandom(16 * n).hex()
    return [raw[i : i + 32] for i in range(0, 32 * n, 32)]


def _kinds() -> dict[str, str]:
    """Each Memory field's JSON shape, from its annotation: str, int, float, bool, or other."""
    kinds = {}
    for name, hint in get_type_hints(Memory).items():
        args = set(get_args(hint)) or {hint}
        optional = type(None) in args
        (base,) = args - {type(None)} if len(args - {type(None)}) == 1 else (object,)
        shape = {str: "str", int: "int", float: "float", bool: "bool"}.get(base, "other")
        kinds[name] = ("o" if optional else "") + shape
    return kinds


#: The fields whose every value is a word of a fixed vocabulary, as the write side checks:
#: no character of theirs needs escaping, so it quotes them as they are.
_WORDS = {"kind": KINDS, "status": STATUSES, "tier": TIERS}
assert all(re.fullmatch("[a-z_]+", w) for words in _WORDS.values() for w in words), "a word"
#: The times every version being written carries (its commit's, and its first commit's):
#: never None, and `to_text`'s ISO text needs no escaping either.
_STAMPS = ("created_at", "updated_at")

#: Where a version's digest text holds its commit's seq and time, in a text a server completes
#: once it has ordered the commit (`Encoders.template_head`): control characters, which the
#: ASCII-only encoding never writes raw (it escapes them), so nothing else matches them.
SEQ_MARK = "\x01"
TIME_MARK = "\x02"
#: The fields of a new memory's first version that are its commit's, as a template marks
#: them: f-string parts writing the marks (escaped for the f-string's source).
_SEQ_PART = SEQ_MARK.encode("unicode_escape").decode()
_TIME_PART = '"' + TIME_MARK.encode("unicode_escape").decode() + '"'
_MARKS = {
    "created_commit": _SEQ_PART,
    "updated_commit": _SEQ_PART,
    "created_at": _TIME_PART,
    "updated_at": _TIME_PART,
}
#: Those fields, in column order.
COMMIT_FIELDS = tuple(_MARKS)

#: A field's encoding as an f-string part, from a value of a known shape (the write side:
#: the Memory fields are checked), by the shape `_kinds` gives it.
_TYPED = {
    "str": "{{q({v})}}",
    "ostr": '{{("null" if {v} is None else q({v}))}}',
    "int": "{{{v}}}",
    "oint": '{{("null" if {v} is None else {v})}}',
    "float": "{{{v}!r}}",
    "bool": '{{("true" if {v} else "false")}}',
}


class Encoders:
    """``body_hash`` and ``version_digest`` over stored values, compiled for one dialect.

    ``times_are_text``: the dialect stores times as `to_text` already (SQLite); otherwise
    a stored time is a datetime (PostgreSQL). Both read back exactly what they wrote, so
    a version's digest is the same computed from its row as written or as read.

    Two spellings of the same encoding: ``head`` takes any stored value as it comes (a
    string is always quoted, so a value of the wrong type, as an attacker may store it,
    never encodes like a right one), ``typed_head`` trusts each field's type (a version
    being written: its fields were checked) and is faster: it quotes without escaping
    what never needs it (a word of `_WORDS`, the ISO text of a time of `_STAMPS`).
    ``body`` and both heads are f-string texts over the field names, for `rows.Rows` to
    compile into its encoders.
    """

    def __init__(self, columns: Sequence[Any], *, times_are_text: bool) -> None:
        head = [c for c in columns if c.field not in BODY]
        self.head_fields = tuple(c.field for c in head)
        self.body_fields = BODY
        kinds = _kinds()

        def generic(c: Any) -> str:
            v = c.field
            if c.codec == "time":
                text = v if times_are_text else f"to_text({v})"
                return f'{{("null" if {v} is None else q({text}))}}'
            if c.codec == "flag":
                return f'{{("true" if {v} else "false")}}'
            return (
                f'{{("null" if {v} is None else q({v}) if {v}.__class__ is str'
                f" else {v} if {v}.__class__ is int else scalar({v}))}}"
            )

        def typed(c: Any) -> str:
            shape, v = kinds[c.field], c.field
            if shape == "str" and v in _WORDS:
                return f'"{{{v}}}"'
            if v in _STAMPS:
                return f'"{{{v if times_are_text else f"to_text({v})"}}}"'
            if c.codec in ("time", "flag") or shape not in _TYPED:
                return generic(c)
            return _TYPED[shape].format(v=v)

        def text(parts: str) -> str:
            return f'f\'["{VERSION_TAG}",' + parts + ',"{body}"]\''

        def marked(c: Any) -> str:
            mark = _MARKS.get(c.field)
            return typed(c) if mark is None else mark

        self.body = "f'[\"{salt}\",{q(content)},{q(tags)},{q(metadata)}]'"
        self.head = text(",".join(generic(c) for c in head))
        self.typed_head = text(",".join(typed(c) for c in head))
        #: ``typed_head`` with the fields its commit fills in as `SEQ_MARK` and `TIME_MARK`:
        #: the text a server completes once it has ordered the commit (`template`).
        self.template_head = text(",".join(marked(c) for c in head))
        args = ", ".join(self.head_fields)
        source = (
            "def body_hash(salt, content, tags, metadata):\n"
            f"    return sha({self.body}.encode()).hexdigest()\n"
            f"def version_digest(body, {args}):\n"
            f"    return sha({self.head}.encode()).hexdigest()\n"
        )
        exec(compile(source, "<memcommit seals>", "exec"), self.namespace)
        #: The hash of a version's body: ``body_hash(salt, content, tags, metadata)``.
        self.body_hash: Callable[[str, str, str, str], str] = self.namespace["body_hash"]
        #: A version's digest: ``version_digest(body_hash, *head values in column order)``.
        self.version_digest: Callable[..., str] = self.namespace["version_digest"]

    #: What the encoders' texts call: compile them with these names in scope.
    namespace: ClassVar[dict[str, Any]] = {
        "sha": _sha,
        "q": _quote,
        "scalar": _scalar,
        "to_text": to_text,
    }


def commit_header(
    parent_hash: str | None,
    seq: int,
    commit_id: str,
    parent: str | None,
    time_text: str,
    author: str,
    message: str,
    changes: str,
) -> bytes:
    """The canonical header of a commit, the first bytes its hash covers."""
    return _compact(
        [COMMIT_TAG, parent_hash, seq, commit_id, parent, time_text, author, message, changes]
    ).encode()


def commit_hash(header: bytes, digests: Iterable[str]) -> str:
    """The hash of a commit: its header, then the digest of each version it wrote, in order."""
    h = _sha(header)
    for digest in digests:
        h.update(digest.encode())
    return h.hexdigest()


class Sealer:
    """The hash of one commit being written: fed the version digests as their rows are made.

    ``add`` takes one digest or several concatenated (the hash covers the concatenation).
    """

    def __init__(self, header: bytes) -> None:
        self._h = _sha(header)
        self._hash: str | None = None

    def add(self, digest: str) -> None:
        self._h.update(digest.encode())

    @property
    def hash(self) -> str:
        """The commit's hash (once every version was added)."""
        if self._hash is None:
            self._hash = self._h.hexdigest()
        return self._hash


def wrote(changes: Sequence[Sequence[Any]]) -> list[tuple[str, int]]:
    """The (id, version) of every version a commit wrote, in order, from its parsed changes."""
    return [(item[1], item[2]) for item in changes if item[1] is not None and item[2] is not None]

"""Use counts and small state, through the store's API: tier bookkeeping kept beside the commits."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memcommit.errors import InvalidInput, NotFound
from memcommit.model import Usage
from memcommit.store import validate as v
from memcommit.store.api_part import ApiPart, reading
from memcommit.store.backends.base import MemoryQuery


class UsesAndState(ApiPart):
    """`record_uses`, `usage` and the JSON values kept by (namespace, key)."""

    def record_uses(
        self, ids: Iterable[str], *, state: Mapping[tuple[str, str], Any] | None = None
    ) -> dict[str, Usage]:
        """Count one use of each id (repeats count again), one logical tick per use.

        No new memory version is written: uses are bookkeeping for the tiers.
        ``state`` ({(namespace, key): JSON value}) is stored as `state_set` would,
        in the same transaction: counters kept beside the uses land with them. A
        value may be a callable instead, from the stored value (None if none) to
        the new one, called inside the write: concurrent increments are never lost.
        """
        counted = v.names("ids", ids)
        if counted is None:
            raise InvalidInput("ids", ids, "must be a list of memory ids")
        if not isinstance(state, Mapping | None) or any(
            not isinstance(name, tuple) or len(name) != 2 for name in state or ()
        ):
            raise InvalidInput("state", state, "must map (namespace, key) pairs to JSON values")
        writes = [
            (
                self._namespace(namespace),
                v.text("key", key),
                value if callable(value) else v.json_value("value", value),
            )
            for (namespace, key), value in (state or {}).items()
        ]
        self._require(set(counted))
        with self._core.writing() as backend:
            for namespace, key, text in writes:
                if callable(text):  # an update of the stored value, under the write lock
                    old = backend.state_get(namespace, key)
                    text = v.json_value("value", text(None if old is None else json.loads(old)))
                backend.state_set(namespace, key, text)
            return backend.record_uses(counted)

    @reading
    def usage(self, ids: Iterable[str] | None = None) -> dict[str, Usage]:
        """Use counts by id (every counted memory when ``ids`` is None)."""
        ids = v.names("ids", ids)
        found = self._core.backend.usage(ids)
        if self._only is not None and found:
            mine = self._core.backend.memories(MemoryQuery(ids=list(found), tenant=self._only))
            keep = {m.id for m in mine}
            found = {k: u for k, u in found.items() if k in keep}
        return found

    @reading
    def state_get(self, namespace: str, key: str, default: Any = None) -> Any:
        """The JSON value stored under (namespace, key), or ``default``."""
        text = self._core.backend.state_get(self._namespace(namespace), v.text("key", key))
        return default if text is None else json.loads(text)

    def state_set(self, namespace: str, key: str, value: Any) -> None:
        """Store a JSON value under (namespace, key); it survives reopening.

        A namespace is text without "/". A tenant view's state is its own: no
        other view reads or writes it, whatever the names.
        """
        ns = self._namespace(namespace)
        v.text("key", key)
        text = v.json_value("value", value)
        with self._core.writing() as backend:
            backend.state_set(ns, key, text)

    def state_delete(self, namespace: str, key: str) -> None:
        """Remove the value under (namespace, key), if any: state a caller keeps bounded."""
        ns = self._namespace(namespace)
        v.text("key", key)
        with self._core.writing() as backend:
            backend.state_delete(ns, key)

    def _namespace(self, namespace: str) -> str:
        """The stored namespace: a view's is ``tenant:<name>/<namespace>``, one per pair.

        Namespaces hold no "/" (`validate.namespace`), so the last "/" splits the
        stored name back into its tenant and namespace: no view reaches another's.
        """
        v.namespace(namespace)
        return namespace if self._only is None else f"tenant:{self._only}/{namespace}"

    @reading
    def _require(self, ids: set[str]) -> None:
        """NotFound for the first id that is not a memory this API can see."""
        backend = self._core.backend
        if self._only is None:  # existence alone: no row is decoded
            found = set(backend.versions(list(ids)))
        else:
            found = {m.id for m in backend.memories(MemoryQuery(ids=list(ids), tenant=self._only))}
        missing = ids - found
        if missing:
            raise NotFound("ids", sorted(missing)[0])

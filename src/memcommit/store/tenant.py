"""`TenantView`: the store's API restricted to one tenant, for every read and write.

The workbench, the CLI and the MCP server work through views, so a bug in them
cannot show one tenant another's memories: the restriction is in the queries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcommit.store.operations import StoreApi
from memcommit.store.protocols import CommitRef, StoreLike

if TYPE_CHECKING:
    from memcommit.store.core import Core


class TenantView(StoreApi):
    """Reads see only ``name``'s memories; writes create and change only them.

    No public attribute leads out of the tenant: code handed a view (the MCP
    server, the workbench) cannot reach the whole store through it.
    """

    def __init__(self, store: StoreLike, core: Core, name: str) -> None:
        self._store = store
        self._core = core
        self._only = name

    @property
    def name(self) -> str:
        """The tenant this view is restricted to."""
        return self._only  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"<memcommit.TenantView {self._only!r} of {self._store!r}>"

    def tenants(self, *, as_of: CommitRef | None = None) -> list[str]:
        """Just this view's tenant, if it has any memory (as of ``as_of``)."""
        return [t for t in self._store.tenants(as_of=as_of) if t == self._only]

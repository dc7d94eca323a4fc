"""Storage backends, chosen by the target's URL scheme.

`base` is the narrow protocol a backend implements; `sql` is what the SQL
backends share; `sqlite` and `postgres` are the built-in backends, each one
module; `migrations/<backend>/` holds their numbered schema scripts. A new
backend is one module that implements `base.Backend` and calls
``register(scheme, factory)``; `open_backend` picks it by the target's scheme.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.store.backends.base import Backend

BackendFactory = Callable[..., Backend]
_registry: dict[str, BackendFactory] = {}


def register(scheme: str, factory: BackendFactory) -> None:
    """Make ``scheme://...`` targets open with ``factory(target, **options)``."""
    _registry[scheme] = factory


def scheme_of(target: str) -> str:
    """``postgresql://x`` -> "postgresql"; plain paths and ":memory:" -> "sqlite"."""
    head, sep, _ = target.partition("://")
    if not sep:
        return "sqlite"
    return "postgresql" if head == "postgres" else head


def open_backend(target: Any, **options: Any) -> Backend:
    """The backend for ``target``, chosen by its scheme; loads built-in modules on demand."""
    if hasattr(target, "__fspath__"):
        target = str(target.__fspath__())
    if not isinstance(target, str) or not target:
        raise InvalidInput("target", target, "must be a file path, ':memory:' or a URL")
    if "\x00" in target:  # no file system or libpq takes one; refused before any backend sees it
        raise InvalidInput("target", target, "must not contain a NUL character")
    scheme = scheme_of(target)
    if scheme not in _registry:
        _load_builtin(scheme)
    if scheme not in _registry:
        known = ", ".join(sorted({*_registry, *_BUILTIN}))
        raise InvalidInput("target", target, f"unknown scheme {scheme!r}; known: {known}")
    factory = _registry[scheme]
    _check_options(scheme, factory, options)
    return factory(target, **options)


def _check_options(scheme: str, factory: BackendFactory, options: dict[str, Any]) -> None:
    """InvalidInput naming the first option ``factory`` does not take (after the target)."""
    try:
        params = list(inspect.signature(factory).parameters.values())[1:]
    except (TypeError, ValueError):  # a factory that cannot be inspected checks for itself
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    known = [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for name, value in options.items():
        if name not in known:
            raise InvalidInput(
                name, value, f"is not an option of the {scheme} backend; known: {', '.join(known)}"
            )


#: Built-in backend modules, imported the first time their scheme is asked for, and the
#: extra (pyproject's optional dependencies) that installs what each needs.
_BUILTIN = {
    "sqlite": ("memcommit.store.backends.sqlite", None),
    "postgresql": ("memcommit.store.backends.postgres", "postgres"),
}


def _load_builtin(scheme: str) -> None:
    found = _BUILTIN.get(scheme)
    if found is None:
        return
    module, extra = found
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module or extra is None:
            reason = f"the {scheme} backend is not available in this install"
        else:
            reason = f"the {scheme} backend needs {exc.name}: pip install 'memcommit[{extra}]'"
        raise InvalidInput("target", scheme, reason) from exc

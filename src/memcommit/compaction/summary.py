"""What a summarizer returned: checked as JSON, bounded in size, rendered as text.

``summarize`` is the one path from a plug-in's output to a summary memory, for
compaction, merging and mid-term consolidation alike. A summary memory keeps the
summarizer's data as JSON in its metadata and a readable rendering as its
content: recall ranks on ``content``, so the words of the task and of the key
lines must be there, and opaque ids must not be (they would only dilute the
lexical match).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from memcommit import inputs
from memcommit.errors import InvalidInput

#: Default bound on one summary, in bytes of UTF-8 JSON (and of rendered text).
MAX_BYTES = 64 * 1024

#: How deep a summary sits where it is stored: ``metadata["summary"]`` of its memory.
KEPT_AT = 1


def to_json(value: Any, max_bytes: int = MAX_BYTES) -> str:
    """``value`` as canonical JSON text, after checking it is JSON, not empty and not huge.

    JSON here is what the store keeps in a memory's metadata, checked by the
    store's own rule (`memcommit.inputs.check_json`) at the depth the summary
    will sit: a summary accepted here is never refused by the commit that
    stores it.
    """
    inputs.check_json("summary", value, depth=KEPT_AT)
    if value is None or value == "" or (isinstance(value, (Mapping, list, tuple)) and not value):
        raise InvalidInput("summary", value, "is empty; a summary must say something")
    text = json.dumps(value, ensure_ascii=False, sort_keys=False, allow_nan=False)
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise InvalidInput("summary", f"{size} bytes", f"is larger than max_bytes={max_bytes}")
    return text


def _is_id_key(key: str) -> bool:
    """Keys holding opaque ids, left out of the rendered text."""
    return key in ("id", "ids") or key.endswith(("_id", "_ids"))


def _inline(value: Any) -> str:
    """A scalar, a flat list or a flat mapping on one line."""
    if isinstance(value, Mapping):
        return ", ".join(
            f"{k} {_inline(v)}" for k, v in value.items() if not _is_id_key(k) and v is not None
        )
    if isinstance(value, (list, tuple)):
        return ", ".join(_inline(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _render_into(lines: list[str], data: Mapping[str, Any], indent: str) -> None:
    """Append ``key: value`` lines for ``data``; lists become bullet lines."""
    for key, value in data.items():
        if key == "task" or _is_id_key(key) or value is None or value in ("", [], {}):
            continue
        if isinstance(value, (list, tuple)):
            lines.append(f"{indent}{key}:")
            lines.extend(f"{indent}- {_inline(item)}" for item in value)
        elif isinstance(value, Mapping) and any(isinstance(v, Mapping) for v in value.values()):
            lines.append(f"{indent}{key}:")
            _render_into(lines, value, indent + "  ")
        else:
            lines.append(f"{indent}{key}: {_inline(value)}")


#: Fields of an outline (or folded) summary that stay in metadata only: times and
#: counts would add tokens a query never asks for, and dilute the lexical match.
_METADATA_ONLY = ("task", "status", "statuses", "steps", "runs", "started", "ended", "first",
                  "last", "seconds", "kinds", "lines", "errors", "omitted")  # fmt: skip


def _render_outline(data: Mapping[str, Any]) -> list[str]:
    """An outline or folded summary: task, how it went, prose fields, key lines, errors."""
    text = [str(data["task"])] if data.get("task") else []
    statuses = data.get("statuses")
    if isinstance(statuses, Mapping) and statuses:
        text.append(", ".join(f"{n} {status}" for status, n in statuses.items()))
    elif data.get("status"):
        steps = data.get("steps")
        plural = "" if steps == 1 else "s"
        text.append(f"{data['status']}" + (f" after {steps} step{plural}" if steps else ""))
    text += [
        str(value)
        for key, value in data.items()
        if key not in _METADATA_ONLY and not _is_id_key(key) and isinstance(value, str) and value
    ]
    text += [f"- {_inline(line)}" for line in data["lines"]]
    errors = data.get("errors")
    for error in errors if isinstance(errors, list) else ():
        if isinstance(error, Mapping) and "step" in error:
            text.append(f"error at step {error['step']}: {_inline(error.get('error', ''))}")
        else:
            text.append(f"error: {_inline(error)}")
    return text


def render(data: Any) -> str:
    """The text a summary memory carries as ``content``: the task first, then the rest.

    A string is used as it is. An outline-shaped mapping (one with ``lines``)
    gives its task, how it went, any prose, the key lines and the errors; its
    times and counts stay in metadata. Any other mapping gives its ``task`` first
    and every other field (ids left out) as ``key: value`` or bullet lines.
    """
    if isinstance(data, str):
        return data.strip()
    if not isinstance(data, Mapping):
        return _inline(data)
    if isinstance(data.get("lines"), list):
        return "\n".join(_render_outline(data))
    lines = [str(data["task"])] if data.get("task") else []
    _render_into(lines, data, "")
    return "\n".join(lines)


class UnusableSummary(Exception):
    """A summarizer (or merger) raised, or gave a summary that cannot be stored."""


def summarizer_name(summarizer: Callable[..., Any]) -> str:
    """A readable name for a plug-in: the function's or the class's (through partials)."""
    while isinstance(summarizer, functools.partial):
        summarizer = summarizer.func
    return getattr(summarizer, "__name__", None) or type(summarizer).__name__


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _checked(
    data: Any, *, max_bytes: int = MAX_BYTES, content_bytes: int | None = None
) -> tuple[str, Any]:
    """``data`` as (readable content, normalized JSON data); InvalidInput if it cannot be kept.

    The content is what recall ranks on, so it must say something, hold no NUL,
    and fit both ``max_bytes`` and the store's own bound on content.
    """
    data = json.loads(to_json(data, max_bytes))
    content = render(data)
    if not content.strip():
        raise InvalidInput("summary", data, "renders to no text, so recall could not find it")
    if "\x00" in content:
        raise InvalidInput("summary", content, "renders with a NUL character")
    size = len(content.encode("utf-8"))
    limit = max_bytes if content_bytes is None else min(max_bytes, content_bytes)
    if size > limit:
        raise InvalidInput("summary", f"{size} bytes", f"renders larger than {limit} bytes")
    return content, data


def summarize(
    make: Callable[[], Any], *, max_bytes: int = MAX_BYTES, content_bytes: int | None = None
) -> tuple[str, Any]:
    """Call a summarizer (``make()``, say a partial over a trace) and keep what it gives.

    The one path by which compaction, merging and mid-term consolidation turn a
    plug-in's output into a summary memory: readable ``content`` and the JSON
    ``data`` for metadata. Any failure, of the plug-in or of its output, becomes
    UnusableSummary saying why, for the caller to report instead of raising.
    """
    try:
        data = make()
    except Exception as exc:  # a plug-in may fail any way; its input is just left as is
        raise UnusableSummary(f"{summarizer_name(make)} raised {_describe(exc)}") from exc
    try:
        return _checked(data, max_bytes=max_bytes, content_bytes=content_bytes)
    except Exception as exc:  # odd objects can fail while being checked, too
        raise UnusableSummary(f"unusable summary: {exc}") from exc

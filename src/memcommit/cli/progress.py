"""Progress bars (rich, on stderr) for work that can take longer than a second.

A bar shows only to a person watching: never with ``--json``, never when
stdout is not a terminal (a pipe, a file, a test), so scripts read clean output.
Each bar is handed to the library as the callback it takes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def shown(as_json: bool) -> bool:
    """Whether to draw bars: a person at a terminal, not a script asking for JSON."""
    return not as_json and sys.stdout.isatty()


def _bar(*, quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=quiet,
    )


@contextmanager
def progress_bar(label: str, *, as_json: bool) -> Iterator[Callable[[int, int | None], None]]:
    """One bar, as a ``progress(done, total)`` callback (a total of None: still counting)."""
    bar = _bar(quiet=not shown(as_json))
    task = bar.add_task(label, total=None)

    def update(done: int, total: int | None) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update


@contextmanager
def phase_bars(
    labels: dict[str, str], *, as_json: bool
) -> Iterator[Callable[[str, int, int], None]]:
    """A bar per phase, as a ``progress(phase, done, total)`` callback."""
    bar = _bar(quiet=not shown(as_json))
    tasks: dict[str, int] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(labels.get(phase, phase), total=total)
        bar.update(tasks[phase], completed=done, total=total)

    with bar:
        yield update

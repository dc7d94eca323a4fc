"""Growable numpy columns and string code tables, the storage of the recall index.

A column hands out views of its current buffer; growing allocates a new buffer,
so a view taken before stays valid (it just stops seeing later appends).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

#: Microsecond sentinels for "no time": before and after every real instant.
NO_START = np.iinfo(np.int64).min
NO_END = np.iinfo(np.int64).max

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def to_micros(moment: datetime | None, missing: int) -> int:
    """Exact microseconds since the epoch (naive times count as UTC); ``missing`` for None."""
    if moment is None:
        return missing
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return (moment - _EPOCH) // _MICROSECOND


def iso_micros(micros: int) -> str:
    """A fixed-width UTC ISO-8601 string that sorts like the instant it names."""
    if micros == NO_START:
        return ""
    return (_EPOCH + timedelta(microseconds=int(micros))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Column:
    """An append-only (and overwritable) numpy array with amortized growth."""

    __slots__ = ("data", "size")

    def __init__(self, dtype: type | str, capacity: int = 256) -> None:
        self.data = np.zeros(capacity, dtype=dtype)
        self.size = 0

    def _reserve(self, extra: int) -> None:
        needed = self.size + extra
        if needed > len(self.data):
            grown = np.zeros(max(needed, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown

    def append(self, value: object) -> None:
        """Add one value at the end."""
        if self.size == len(self.data):
            self._reserve(1)
        self.data[self.size] = value
        self.size += 1

    def extend(self, values: Sequence[Any] | np.ndarray) -> None:
        """Add several values at the end."""
        count = len(values)
        self._reserve(count)
        self.data[self.size : self.size + count] = values
        self.size += count

    def view(self) -> np.ndarray:
        """The filled part (a view: valid after later appends, but blind to them)."""
        return self.data[: self.size]

    def replace(self, values: np.ndarray) -> None:
        """Drop the content and hold ``values`` instead."""
        self.data = np.array(values, dtype=self.data.dtype)
        self.size = len(self.data)

    def adopt(self, values: np.ndarray) -> None:
        """Hold ``values`` as they are (no copy: a loaded snapshot's mapped array).

        The first append copies them into a buffer of this column's own.
        """
        self.data = values
        self.size = len(values)

    def __len__(self) -> int:
        return self.size


class Codes:
    """Dense integer codes for strings (or other hashables); None is always -1."""

    __slots__ = ("codes", "values")

    def __init__(self) -> None:
        self.codes: dict[Hashable, int] = {}
        self.values: list[Hashable] = []

    def code(self, value: Hashable | None) -> int:
        """The code of ``value``, assigning the next one on first sight."""
        if value is None:
            return -1
        found = self.codes.get(value)
        if found is None:
            found = self.codes[value] = len(self.values)
            self.values.append(value)
        return found

    def get(self, value: Hashable | None) -> int | None:
        """The code of ``value`` if it was ever seen (-1 for None), else None."""
        if value is None:
            return -1
        return self.codes.get(value)

    @classmethod
    def of(cls, values: Sequence[Hashable]) -> Codes:
        """A table whose codes are the positions of ``values`` (distinct)."""
        table = cls()
        table.values = list(values)
        table.codes = {value: code for code, value in enumerate(table.values)}
        return table

"""Growable numpy columns and string code tables, the storage of the recall index.

A column hands out views of its current buffer; growing allocates a new buffer,
so a view taken before stays valid (it just stops seeing later appends). A
column or code table restored from a snapshot reads its section (checked) or
decodes its strings only when first used.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from memcommit.recall.index.sections import Section
from memcommit.recall.index.sizes import ENTRY, OBJECT, SLOT, array_bytes

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


#: Microseconds of 1000-01-01 and 10000-01-01: numpy writes years in between as strftime does.
_FOUR_DIGIT_YEARS = (
    int((datetime(1000, 1, 1, tzinfo=timezone.utc) - _EPOCH) // timedelta(microseconds=1)),
    int(
        (datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc) - _EPOCH)
        // timedelta(microseconds=1)
    ),
)


def iso_micros_many(micros: np.ndarray) -> list[str]:
    """`iso_micros` of many instants, formatted by numpy at once (the same strings)."""
    low, high = _FOUR_DIGIT_YEARS
    plain = (micros >= low) & (micros <= high)
    found = np.datetime_as_string(np.where(plain, micros, 0).astype("datetime64[us]"), unit="us")
    return [
        f"{text}Z" if ok else iso_micros(int(value))
        for text, ok, value in zip(found.tolist(), plain.tolist(), micros.tolist(), strict=True)
    ]


class Column:
    """An append-only (and overwritable) numpy array with amortized growth."""

    __slots__ = ("_data", "_stored", "size")

    def __init__(self, dtype: type | str, capacity: int = 0) -> None:
        self._data = np.zeros(capacity, dtype=dtype)
        self._stored: Section | None = None  # adopted, not checked yet
        self.size = 0

    @property
    def data(self) -> np.ndarray:
        """The whole buffer (the filled part is ``data[:size]``)."""
        if self._stored is not None:
            self._data, self._stored = self._stored.whole(), None
        return self._data

    @data.setter
    def data(self, values: np.ndarray) -> None:
        self._data, self._stored = values, None

    def _reserve(self, extra: int) -> None:
        needed = self.size + extra
        if needed > len(self.data):  # (reading ``data`` checks an adopted section)
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
        """Add several values at the end (one value is stored as a scalar: a commit's usual)."""
        count, size = len(values), self.size
        data = self._data if self._stored is None else self.data
        if size + count > len(data):
            self._reserve(count)
            data = self._data
        if count == 1:
            data[size] = values[0]
        else:
            data[size : size + count] = values
        self.size = size + count

    def view(self) -> np.ndarray:
        """The filled part (a view: valid after later appends, but blind to them)."""
        return self.data[: self.size]

    def view_or_section(self) -> np.ndarray | Section:
        """`view`, or the adopted section itself while it is not checked yet (no check now)."""
        return self._stored if self._stored is not None else self.view()

    def replace(self, values: np.ndarray) -> None:
        """Drop the content and hold ``values`` instead."""
        self.data = np.array(values, dtype=self.data.dtype)
        self.size = len(self.data)

    def adopt(self, values: Section) -> None:
        """Hold a snapshot's section as it is (mapped, not copied), checked when first read.

        The first append copies it into a buffer of this column's own.
        """
        self._stored = values
        self.size = len(values)

    def __len__(self) -> int:
        return self.size

    def nbytes(self) -> int:
        """What the column holds in memory: its buffer, or the section it adopted."""
        held = self._stored.array if self._stored is not None else self._data
        return OBJECT + array_bytes(held)


class Codes:
    """Dense integer codes for strings (or other hashables); None is always -1."""

    __slots__ = ("_codes", "_load", "_values")

    def __init__(self) -> None:
        self._codes: dict[Hashable, int] = {}
        self._values: list[Hashable] = []
        self._load: Callable[[], Sequence[Hashable]] | None = None  # decoded on first use

    @property
    def codes(self) -> dict[Hashable, int]:
        """Value -> code."""
        if self._load is not None:
            self._decode()
        return self._codes

    @property
    def values(self) -> list[Hashable]:
        """Code -> value."""
        if self._load is not None:
            self._decode()
        return self._values

    def _decode(self) -> None:
        load, self._load = self._load, None
        if load is not None:
            self._values = list(load())
            self._codes = {value: code for code, value in enumerate(self._values)}

    def code(self, value: Hashable | None) -> int:
        """The code of ``value``, assigning the next one on first sight."""
        if value is None:
            return -1
        codes = self.codes
        found = codes.get(value)
        if found is None:
            found = codes[value] = len(self._values)
            self._values.append(value)
        return found

    def nbytes(self) -> int:
        """What the table holds in memory (nothing per value while not decoded yet)."""
        return OBJECT + len(self._values) * (ENTRY + SLOT)

    def get(self, value: Hashable | None) -> int | None:
        """The code of ``value`` if it was ever seen (-1 for None), else None."""
        if value is None:
            return -1
        return self.codes.get(value)

    @classmethod
    def of(cls, values: Sequence[Hashable]) -> Codes:
        """A table whose codes are the positions of ``values`` (distinct)."""
        return cls.later(lambda: values)

    @classmethod
    def later(cls, load: Callable[[], Sequence[Hashable]]) -> Codes:
        """A table of the values ``load`` gives (codes are positions), called on first use."""
        table = cls()
        table._load = load
        return table

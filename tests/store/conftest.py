"""Fixtures of the store tests: a fresh store with a ticking clock."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest


class TickingClock:
    """Deterministic "now": starts at ``start`` and moves one second per reading."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def clock(now):
    return TickingClock(now)


@pytest.fixture
def store(make_store, clock):
    return make_store(clock=clock)

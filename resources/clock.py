"""The one clock: every timestamp in catlas comes from here (virtual under CATLAS_NOW)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class VirtualClock:
    """A frozen clock that only moves when told to: the demo and tests live weeks in seconds."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("a virtual clock needs an aware UTC instant")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return self._now  # one attribute read: atomic, the lock guards the writes

    def set(self, instant: datetime) -> None:
        with self._lock:
            self._now = instant.astimezone(UTC)

    def advance(self, delta: timedelta) -> datetime:
        with self._lock:
            self._now += delta
            return self._now


def clock_for(frozen: datetime | None) -> Clock:
    return VirtualClock(frozen) if frozen is not None else SystemClock()

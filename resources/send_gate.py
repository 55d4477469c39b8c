"""The last check before a request's bytes leave: is it still on its politeness slot?

A request waits for its booked start slot, then still has to get a connection: a new one
takes turns of the event loop, and on a busy machine those can come long after the
wake-up, so the bytes would reach the site just before another worker's next slot. The
governor states the latest instant the request may still leave (`send_by`); the transport
checks it once the connection is ready, when only a synchronous write is left, and a
request past it raises `SlotMissed` without sending, to book a new slot instead.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# Per task: the request being sent in this task, wall-clock seconds (slots are wall clock).
_SEND_BY: ContextVar[float | None] = ContextVar("catlas_send_by", default=None)


class SlotMissed(Exception):
    """The request's connection was ready too late; nothing was sent."""

    def __init__(self, late_s: float) -> None:
        super().__init__(f"start slot missed by {late_s:.3f} s")
        self.late_s = late_s


@contextmanager
def send_by(deadline: float | None) -> Iterator[None]:
    """Requests sent inside must leave before `deadline` (None: no bound)."""
    token = _SEND_BY.set(deadline)
    try:
        yield
    finally:
        _SEND_BY.reset(token)


def check() -> None:
    """Raise `SlotMissed` when this task's request is past its `send_by` instant."""
    deadline = _SEND_BY.get()
    if deadline is not None and (late := time.time() - deadline) > 0:
        raise SlotMissed(late)

"""The event loop a fetching command runs on: uvloop where it is installed, else asyncio's.

A tick's lane is Python from end to end, and part of it is the event loop's own
bookkeeping: handles, timers, the selector and the socket transports. uvloop does that
work in C (libuv): 1,000 conditional fetches through the Fetcher cost 8 % less CPU on it,
with the transport and everything else unchanged (bench/README.md). Its loop is asyncio's
interface, so nothing else knows which one runs. Where it cannot be imported (a platform
it is not built for), asyncio's own loop runs the same code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor, or None for asyncio's default."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop  # type: ignore[no-any-return]


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the loop of `loop_factory()` (Ctrl+C handled as by asyncio)."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)

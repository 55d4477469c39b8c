"""Every parse of one response has a time bound (`CATLAS_PARSE_TIMEOUT_S`).

`observe` is pure and CPU-bound; a pathological page (megabytes of markup, a diff that
goes quadratic) could hold a parser for minutes. The bound interrupts it between two
Python steps: by SIGALRM in an observe-pool process (its main thread runs the parse), by
an asynchronous exception when the parse runs in a thread. The sensor then fails alone,
as PARSING with a message naming the bound; the pool and the tick go on.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from catlas_assets.domain.observe import Observed, observe
from catlas_assets.domain.vocabulary import FailureClass


class ParseTimeout(BaseException):
    """Raised into a parse that ran out of time (BaseException: no parser's `except
    Exception` can swallow it)."""


def observe_within(seconds: float, **arguments: Any) -> Observed:
    """`observe(**arguments)`, or a PARSING failure when it takes longer than `seconds`."""
    try:
        with time_limit(seconds):
            return observe(**arguments)
    except ParseTimeout:
        pass
    detail = f"parsing took longer than {seconds:g}s (CATLAS_PARSE_TIMEOUT_S): stopped"
    fetched = replace(
        arguments["fetched"], failure_class=FailureClass.PARSING, failure_detail=detail
    )
    return observe(**{**arguments, "fetched": fetched})  # a failure: decided without a parse


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ParseTimeout into the body once it has run `seconds`."""
    if threading.current_thread() is threading.main_thread():
        with _alarm(seconds):
            yield
    else:
        with _async_exception(seconds):
            yield


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def _expired(_signum: int, _frame: object) -> None:
        raise ParseTimeout

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def _async_exception(seconds: float) -> Iterator[None]:
    target = threading.get_ident()
    lock = threading.Lock()
    running = [True]

    def _expired() -> None:
        with lock:  # never into the thread once the body has left
            if running[0]:
                _raise_in(target, ParseTimeout)

    timer = threading.Timer(seconds, _expired)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            running[0] = False
        timer.cancel()


def _raise_in(thread_id: int, kind: Callable[[], BaseException] | type[BaseException]) -> None:
    # CPython delivers it at the thread's next bytecode boundary, like a signal.
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(kind))

"""SQLite's writers wait in a queue instead of polling for the write lock.

SQLite has one writer at a time, and a `BEGIN IMMEDIATE` that finds the file locked sleeps
in SQLite's busy handler (1 ms, then longer, up to 100 ms a try) however soon the holder
commits. With two processes committing groups of runs (a tick's lanes), a third of their
commit time went to those sleeps. A writer that enters the queue first waits for the one
before it and wakes the moment it ends: a re-entrant thread lock within a process, then an
advisory `flock` on `<file>.writers.lock` across processes (released by the kernel when a
process dies, even by kill -9).

The queue orders writers; SQLite's own lock still protects the file. A writer that does not
enter the queue (a plain transaction that writes) meets the busy timeout as before, and when
the lock file cannot be created (a read-only folder) the queue is the thread lock alone.

A writer that must not wait (an event loop committing on its own thread) asks with
`held(wait=False)`: it gets the queue at once or `WriterBusy`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

_forked = threading.Lock()  # one thread of a forked child starts its queues afresh


class WriterBusy(Exception):
    """Another writer holds the state file's write lock (asked with `wait=False`)."""


class WriterQueue:
    def __init__(self, database: Path | None) -> None:
        """`database`: the SQLite file, or None (in memory: one process, the thread lock)."""
        self._path = f"{database.resolve()}.writers.lock" if database is not None else None
        self._start()

    def _start(self) -> None:
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        # A child forked from this process shares its open lock file, and with it the lock,
        # and may inherit the thread lock held: it starts afresh (the descriptor stays the
        # parent's business).
        self._pid = os.getpid()

    @contextlib.contextmanager
    def held(self, *, wait: bool = True) -> Iterator[None]:
        """The queue's turn; with `wait=False`, now or `WriterBusy`."""
        if self._pid != os.getpid():
            with _forked:
                if self._pid != os.getpid():
                    self._start()
        if not self._threads.acquire(blocking=wait):
            raise WriterBusy("another thread of this process is writing")
        try:
            if self._depth == 0:
                self._lock_file(wait)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._unlock_file()
        finally:
            self._threads.release()

    def _lock_file(self, wait: bool) -> None:
        fd = self._file()
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WriterBusy("another process is writing") from None

    def _unlock_file(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _file(self) -> int | None:
        if self._fd is None and self._path is not None:
            try:
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError:
                self._path = None  # no lock file here: the thread lock alone
        return self._fd

    def close(self) -> None:
        if self._fd is not None and self._pid == os.getpid():
            with self._threads:
                os.close(self._fd)
                self._fd = None

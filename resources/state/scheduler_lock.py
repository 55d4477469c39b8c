"""One scheduler per embedded SQLite state file; none needed on PostgreSQL.

SQLite serialises writers on one machine, so a second scheduler on the same file only
competes for the write lock; it is refused up front instead, with `BlockingIOError` naming
the file. The lock is an advisory `flock` on `<file>.scheduler.lock`, re-entrant within a
process (a daemon holds it while its ticks run), released when the process ends (even by
kill -9). PostgreSQL is the scale-out path: several schedulers share it through claims.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import make_url

from catlas_assets.errors import StorageError

_held: dict[str, list[int]] = {}  # lock path -> [fd, holders in this process]
_guard = threading.Lock()


def sqlite_path(database_url: str) -> Path | None:
    """The SQLite file of a state URL; None for PostgreSQL or an in-memory database."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


@contextmanager
def scheduler_lock(database_url: str) -> Iterator[None]:
    """Hold the scheduler lock of a SQLite state file (no-op for PostgreSQL)."""
    path = sqlite_path(database_url)
    if path is None:
        yield
        return
    lock_path = str(path.resolve()) + ".scheduler.lock"
    _acquire(path, lock_path)
    try:
        yield
    finally:
        _release(lock_path)


def _acquire(path: Path, lock_path: str) -> None:
    with _guard:
        entry = _held.get(lock_path)
        if entry is not None:
            entry[1] += 1
            return
        try:
            if not path.parent.is_dir():
                # Nothing to protect yet, and creating folders here would be a write.
                path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a file in the way, a read-only or virtual file system
            raise StorageError(
                f"cannot create the scheduler lock {lock_path}: {exc.strerror}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise BlockingIOError(
                errno.EWOULDBLOCK,
                f"the state store {path.resolve()} is held by another scheduler{holder}",
                str(path.resolve()),
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _held[lock_path] = [fd, 1]


def _release(lock_path: str) -> None:
    with _guard:
        entry = _held[lock_path]
        entry[1] -= 1
        if entry[1] == 0:
            del _held[lock_path]
            fcntl.flock(entry[0], fcntl.LOCK_UN)
            os.close(entry[0])


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""

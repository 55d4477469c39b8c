"""SQLite's writers queue for the write lock: across threads, processes and forks."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from resources.state.store import BUSY_TIMEOUT_MS, StateStore
from resources.state.writer_queue import WriterBusy, WriterQueue


@contextmanager
def _other_open_file(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        yield fd
    finally:
        os.close(fd)


def _is_locked(path: Path) -> bool:
    """Whether another open file of this process is refused the lock (flock is per open
    file, so a test can ask from the inside)."""
    with _other_open_file(path) as fd:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False


def test_the_queue_holds_the_lock_file_until_its_outermost_writer_ends(tmp_path: Path) -> None:
    queue = WriterQueue(tmp_path / "state.db")
    lock = tmp_path / "state.db.writers.lock"
    with queue.held():
        assert _is_locked(lock)
        with queue.held():  # re-entrant: a nested writer neither waits nor lets go
            assert _is_locked(lock)
        assert _is_locked(lock)
    assert not _is_locked(lock)
    queue.close()


def _take_after(queue: WriterQueue, trying: object, released: object, answer: object) -> None:
    trying.set()  # type: ignore[attr-defined]
    with queue.held():
        answer.put(released.is_set())  # type: ignore[attr-defined]


def test_a_writer_of_a_forked_process_waits_for_the_parents_turn(tmp_path: Path) -> None:
    """The child inherits the parent's queue (and its open lock file): it still queues."""
    queue = WriterQueue(tmp_path / "state.db")
    with queue.held():
        pass  # the lock file is open in the parent before the fork
    context = multiprocessing.get_context("fork")
    trying, released, answer = context.Event(), context.Event(), context.Queue()
    with queue.held():
        child = context.Process(target=_take_after, args=(queue, trying, released, answer))
        child.start()
        assert trying.wait(30)
        # The child is on its way to the lock; it must not get it while this turn lasts.
        child.join(0.3)
        assert child.is_alive()
        released.set()
    assert answer.get(timeout=30) is True  # it had the lock only after the parent let go
    child.join(30)
    assert child.exitcode == 0
    queue.close()


def test_threads_of_one_process_take_turns(tmp_path: Path) -> None:
    queue = WriterQueue(tmp_path / "state.db")
    inside = 0
    most = 0
    guard = threading.Lock()

    def write() -> None:
        nonlocal inside, most
        for _ in range(200):
            with queue.held():
                with guard:
                    inside += 1
                    most = max(most, inside)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1
    queue.close()


def test_without_a_lock_file_the_queue_is_the_thread_lock(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "state.db"
    queue = WriterQueue(missing)
    with queue.held(), queue.held():
        pass
    assert not missing.parent.exists()  # nothing was created on the way


def test_the_stores_write_transactions_take_the_queue(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = StateStore.open(f"sqlite:///{db}")
    lock = tmp_path / "state.db.writers.lock"
    try:
        with store.transaction(write_lock=True):
            assert _is_locked(lock)
        assert not _is_locked(lock)
        with store.transaction():  # a reader does not queue
            assert not _is_locked(lock)
    finally:
        store.close()


def _hold_until(queue: WriterQueue, holding: object, release: object) -> None:
    with queue.held():
        holding.set()  # type: ignore[attr-defined]
        release.wait(30)  # type: ignore[attr-defined]


def test_a_writer_that_must_not_wait_is_told_when_the_queue_is_taken(tmp_path: Path) -> None:
    queue = WriterQueue(tmp_path / "state.db")
    lock = tmp_path / "state.db.writers.lock"
    context = multiprocessing.get_context("fork")
    holding, release = context.Event(), context.Event()
    other = context.Process(target=_hold_until, args=(queue, holding, release))
    other.start()
    try:
        assert holding.wait(30)
        with pytest.raises(WriterBusy, match="another process"), queue.held(wait=False):
            pass
    finally:
        release.set()
        other.join(30)
    # Another thread of this process holding it: busy too, and nothing is left held after.
    thread_holding, thread_release = threading.Event(), threading.Event()
    thread = threading.Thread(target=_hold_until, args=(queue, thread_holding, thread_release))
    thread.start()
    assert thread_holding.wait(30)
    with pytest.raises(WriterBusy, match="another thread"), queue.held(wait=False):
        pass
    thread_release.set()
    thread.join(30)
    with queue.held(wait=False):  # free now: taken at once
        assert _is_locked(lock)
    assert not _is_locked(lock)
    queue.close()


def _busy_timeout(store: StateStore) -> int:
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one())


def test_a_transaction_that_must_not_wait_meets_a_writer_outside_the_queue(
    tmp_path: Path,
) -> None:
    """A plain SQLite writer holds the file: the transaction is refused at once (the busy
    timeout would wait 30 s), the connection keeps its busy timeout, and once the file is
    free the same call writes."""
    db = tmp_path / "state.db"
    store = StateStore.open(f"sqlite:///{db}")
    outsider = sqlite3.connect(db, isolation_level=None)
    try:
        assert _busy_timeout(store) == BUSY_TIMEOUT_MS
        outsider.execute("BEGIN IMMEDIATE")
        with (
            pytest.raises(WriterBusy, match="another writer"),
            store.transaction(write_lock=True, wait=False),
        ):
            pass
        assert not _is_locked(tmp_path / "state.db.writers.lock")  # the queue let go
        assert _busy_timeout(store) == BUSY_TIMEOUT_MS
        outsider.execute("COMMIT")
        with store.transaction(write_lock=True, wait=False) as conn:
            conn.exec_driver_sql("CREATE TABLE written (x INTEGER)")
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM written").scalar_one() == 0
    finally:
        outsider.close()
        store.close()

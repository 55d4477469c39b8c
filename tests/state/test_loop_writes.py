"""A state write from an event loop: on the loop when SQLite's lock is free, else in a thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from resources.state import loop_writes
from resources.state.loop_writes import write_from_loop
from resources.state.store import StateStore
from resources.state.writer_queue import WriterBusy


class _Writer:
    """A write that finds the lock taken its first `busy` tries; records each try."""

    def __init__(self, busy: int) -> None:
        self.busy = busy
        self.tries: list[tuple[bool, bool]] = []  # (wait, on the loop's thread)
        self.loop_thread = threading.get_ident()

    def __call__(self, wait: bool) -> str:
        self.tries.append((wait, threading.get_ident() == self.loop_thread))
        if not wait and len(self.tries) <= self.busy:
            raise WriterBusy("taken")
        return "written"


def _write(store: StateStore, busy: int) -> _Writer:
    writer = _Writer(busy)
    assert asyncio.run(write_from_loop(store, writer)) == "written"
    return writer


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_free_lock_is_written_on_the_loop_and_a_brief_wait_retried_there(
    store: StateStore,
) -> None:
    assert _write(store, busy=0).tries == [(False, True)]
    assert _write(store, busy=3).tries == [(False, True)] * 4  # a few ms: still on the loop


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_lock_taken_past_the_patience_is_waited_for_in_a_thread(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loop_writes, "PATIENCE_S", 0.02)
    tries = _write(store, busy=10**6).tries
    assert tries[-1] == (True, False)  # waiting, in a thread
    assert all(t == (False, True) for t in tries[:-1])
    assert len(tries) >= 3  # tried again on the loop meanwhile


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_writes_in_a_thread(store: StateStore) -> None:
    assert _write(store, busy=0).tries == [(True, False)]

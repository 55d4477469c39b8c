"""How catlas starts helper processes (parsers, lanes): cores, a fork, or one fork server.

Forking a worker's own process is safe only while it runs no other thread (a lock another
thread held at the fork stays held in the child for ever), and then it is the cheapest
start: the child has everything imported already. Otherwise (a daemon's periodic tasks, a
Dagster run, the parser pool's helpers) helpers start from a fork server that has the
sensor pipeline imported: a clean process, cheap to start from once it runs (its own
start costs about 0.7 s of imports). One preload for every kind of helper: the fork server
is one per process.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import threading
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess

# The lanes module imports the whole pipeline (the parsers' `observe` included).
PRELOAD = ["catlas_assets.services.lanes"]


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def per_core(setting: int, cap: int, cpus: int | None = None) -> int:
    """Helpers for a `-1` (automatic) setting: one per core, at most `cap`, none on one
    core; a setting of 0 or more is taken as it is."""
    if setting >= 0:
        return setting
    cpus = cpus if cpus is not None else available_cpus()
    return 0 if cpus <= 1 else min(cpus, cap)


def start_method() -> str:
    """ "fork" while this process runs one thread and no event loop, else "forkserver"."""
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    alone = threading.active_count() == 1 and not in_loop
    return "fork" if alone and "fork" in multiprocessing.get_all_start_methods() else "forkserver"


def worker_context(method: str = "forkserver") -> BaseContext:
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(PRELOAD)
    return context


def how_it_ended(process: BaseProcess) -> str:
    """A helper process's end in words: its exit code or the signal that killed it."""
    code = process.exitcode
    if code is None:
        return "still running"
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"


def portable(exc: BaseException) -> BaseException:
    """`exc` as it can cross to another process (its own type when it pickles)."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(" ".join(f"{type(exc).__name__}: {exc}".split())[:500])
    return exc

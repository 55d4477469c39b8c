"""How catlas starts helper processes (parsers, lanes): cores, and one fork server.

Helper processes start from a fork server that has the sensor pipeline imported: a clean
process (forking a worker's own process, with its threads, is not safe) that is cheap to
start from. One preload for every kind of helper: the fork server is one per process.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.context import ForkServerContext

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


def worker_context() -> ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context

"""The pure core (`observe`) in worker processes, so that a tick uses every core.

The event loop of a worker fetches, archives and commits; parsing a page (normalize,
extract, fingerprint, diff) is CPU work that would hold the loop, so it runs in a process
pool: `observe` takes data and returns data, both picklable. What needs no parse —
a 304, a failure, a postponement, a redirect off the domain, the bytes of the last 200 —
is decided in the loop's own process (sending it would cost more than deciding it).

`CATLAS_OBSERVE_WORKERS` sets the pool: -1 (the default) is one parser process per core, at
most 8 (what one loop keeps busy: past that, more worker processes scale further — several
`catlas schedule` processes on PostgreSQL). The loop itself waits on the network most of a
first pass, so it shares a core with a parser rather than keep one to itself: on 2 cores
two parsers did 1.2× the pages of one. On one core there is no pool. 0 parses in the
loop's process, one page at a time in one thread: parsing holds the interpreter lock,
so more parser threads add no speed, only starve the loop (a request then leaves long after
its politeness slot).
Worker processes start from the fork server of `worker_processes` (a clean process:
forking the loop's process, with its threads, is not safe). Each one watches the process
that made it and exits when that one is gone: a worker killed with SIGKILL cannot shut its
pool down, and its parsers would otherwise wait on their queue for ever.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from catlas_assets.domain.observe import Observed, needs_parse, observe
from catlas_assets.services.parse_time_limit import observe_within
from catlas_assets.services.worker_processes import per_core, worker_context
from resources.process_alive import alive

if TYPE_CHECKING:  # imported with the first pool: a lane or `workers=0` never needs it
    from concurrent.futures import ProcessPoolExecutor

MAX_AUTO_WORKERS = 8
# How often a parser process looks whether the process that made it still exists.
OWNER_CHECK_S = 0.5


def pool_size(setting: int, cpus: int | None = None) -> int:
    """Parser processes for `CATLAS_OBSERVE_WORKERS` (-1: automatic) on `cpus` cores."""
    return per_core(setting, MAX_AUTO_WORKERS, cpus)


def _watch_owner(owner: int) -> None:
    """In a parser process: exit at once when `owner` (the worker) has died."""

    def watch() -> None:
        while alive(owner):
            time.sleep(OWNER_CHECK_S)
        os._exit(0)  # nothing to flush: a parser holds no state of its own

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()


class ObservePool:
    def __init__(self, workers: int, parse_timeout_s: float) -> None:
        self.workers = workers
        self.parse_timeout_s = parse_timeout_s
        self._executor: ProcessPoolExecutor | None = None
        self._thread: ThreadPoolExecutor | None = None

    def _executor_now(self, method: str = "forkserver") -> ProcessPoolExecutor:
        if self._executor is None:
            from concurrent.futures import ProcessPoolExecutor

            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=worker_context(method),
                initializer=_watch_owner,
                initargs=(os.getpid(),),
            )
        return self._executor

    def start_forked(self) -> None:
        """Start the parser processes now, as forks of this process: only while it runs one
        thread (a lane, before its event loop starts), and the cheapest start there is."""
        if self.workers > 0 and self._executor is None:
            # A forking pool starts every process at its first call, before its own thread.
            self._executor_now("fork").submit(int).result()

    async def observe(self, **arguments: Any) -> Observed:
        """`observe(**arguments)`, in a worker process when the answer needs a parse."""
        if not needs_parse(arguments["sensor"], arguments["fetched"]):
            return observe(**arguments)
        loop = asyncio.get_running_loop()
        if self.workers == 0:
            # In a thread: a large page's parse does not hold up the loop (signals, deadline).
            if self._thread is None:
                self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="catlas-parse")
            call = functools.partial(observe_within, self.parse_timeout_s, **arguments)
            return await loop.run_in_executor(self._thread, call)
        call = functools.partial(_observe_in_worker, self.parse_timeout_s, **arguments)
        observed, body_keys = await loop.run_in_executor(self._executor_now(), call)
        for key in body_keys:
            observed.objects[key] = arguments["fetched"].body
        return observed

    def close(self) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = None
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


def _observe_in_worker(parse_timeout_s: float, **arguments: Any) -> tuple[Observed, list[str]]:
    """`observe_within` in a pool process. The response body, archived as it came, is not
    sent back (the loop's process has it): the keys it is archived under are."""
    observed = observe_within(parse_timeout_s, **arguments)
    body = arguments["fetched"].body
    body_keys = [key for key, data in observed.objects.items() if data is body]
    for key in body_keys:
        observed.objects[key] = b""
    return observed, body_keys

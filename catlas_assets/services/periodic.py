"""The periodic tasks of the scheduler (spec: `services/periodic`), each under a lease.

Both fronts run them through `run_task`: the `catlas schedule` daemon (APScheduler, cron
in `settings.tz`) and the Dagster schedules. The lease in the state store makes sure that,
with several daemons or with Dagster schedules enabled too, a task never runs twice at
once, nor twice in the same period (`min_gap_s`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from catlas_assets.errors import CatlasError
from catlas_assets.services.compaction import compact_all
from catlas_assets.services.onboarding import onboard_pending
from catlas_assets.services.runtime import Runtime
from resources.process_alive import local_worker_gone
from resources.state.crawl_stats import sweep_stale_claims
from resources.state.leases import Leases


@dataclass(frozen=True)
class Cadence:
    """How often a periodic task runs: every `every_s` seconds, or hourly at `minute`.

    The one declaration both fronts read: the daemon as an APScheduler interval or cron
    trigger, the Dagster schedules as the cron string `cron()`.
    """

    every_s: int | None = None
    minute: int | None = None

    def __post_init__(self) -> None:
        if (self.every_s is None) == (self.minute is None):
            raise ValueError("a cadence is either every_s or minute")

    def cron(self) -> str:
        if self.minute is not None:
            return f"{self.minute} * * * *"
        every_min, rest = divmod(self.every_s or 0, 60)
        if rest or not 0 < every_min < 60 or 60 % every_min:
            # A cron step must divide the hour to keep an even cadence across hours.
            raise ValueError(f"every {self.every_s} s has no cron equivalent")
        return f"*/{every_min} * * * *"


@dataclass(frozen=True)
class TaskSpec:
    name: str
    run: Callable[[Runtime], str]
    ttl_s: int  # a holder that dies frees the task after this long
    min_gap_s: int  # no second run within this long of the last completed one
    cadence: Cadence | None = None  # None: triggered by its front, not by the clock


@dataclass(frozen=True)
class TaskResult:
    name: str
    ran: bool
    detail: str


def _stale_claims(runtime: Runtime) -> str:
    swept = sweep_stale_claims(
        runtime.store.engine,
        now=runtime.clock.now(),
        claim_timeout_s=runtime.settings.claim_timeout_s,
    )
    return f"released {swept} stale claim(s)"


def _compaction(runtime: Runtime) -> str:
    return compact_all(runtime).summary()


def _repair(runtime: Runtime) -> str:
    from catlas_assets.services.repair import repair_pass  # repair imports the pipeline

    result = repair_pass(runtime)
    return result.report.summary_line if result.report else "repair: nothing done"


def _budgets_reset(runtime: Runtime) -> str:
    reset = runtime.domain_budgets.reset_day(runtime.clock.now())
    return f"{reset} domain budget(s) reset for the new day"


def _onboarding(runtime: Runtime) -> str:
    return f"onboarding batch: {onboard_pending(runtime).report.summary_line}"


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("stale_claim_sweep", _stale_claims, ttl_s=600, min_gap_s=60, cadence=Cadence(300)),
        TaskSpec(
            "lake_compaction", _compaction, ttl_s=3600, min_gap_s=1800, cadence=Cadence(minute=10)
        ),
        # Spec: repair every 30 min (the Dagster `repair` job's schedule reads the same cadence).
        TaskSpec("repair", _repair, ttl_s=1800, min_gap_s=1500, cadence=Cadence(1800)),
        # Every 4 ticks in the daemon (spec); the `pending_companies` sensor in Dagster.
        TaskSpec("onboarding", _onboarding, ttl_s=1800, min_gap_s=0),
        # Daily, from the Dagster schedule (sensors_dag/maintenance.py); the daemon relies on
        # the lazy reset at each domain's first request of a day.
        TaskSpec("budgets_reset", _budgets_reset, ttl_s=600, min_gap_s=3600),
    )
}

# Not a task of the daemon (it has no UI to plot figures in): how often the Dagster
# schedule materializes the `crawl_stats` asset.
CRAWL_STATS_CADENCE = Cadence(900)


def cadence_of(name: str) -> Cadence:
    """The cadence task `name` declares (a ValueError for a task its front triggers)."""
    cadence = TASKS[name].cadence
    if cadence is None:
        raise ValueError(f"periodic task {name} has no cadence: its front triggers it")
    return cadence


def run_task(runtime: Runtime, name: str, *, holder: str | None = None) -> TaskResult:
    """Run one periodic task if its lease is free; otherwise say who has it."""
    spec = TASKS[name]
    leases = Leases(runtime.store.engine)
    holder = holder or runtime.worker
    now = runtime.clock.now()
    if not leases.acquire(name, holder, now=now, ttl_s=spec.ttl_s, min_gap_s=spec.min_gap_s):
        lease = leases.get(name) or {}
        who = lease.get("holder") or lease.get("last_holder") or "another worker"
        return TaskResult(name, False, f"skipped: held or recently done by {who}")
    completed = False
    try:
        detail = spec.run(runtime)
        completed = True
    finally:
        leases.release(name, holder, now=runtime.clock.now(), completed=completed)
    return TaskResult(name, True, detail)


@contextmanager
def leased(
    runtime: Runtime, name: str, *, wait_s: float = 600.0, poll_s: float = 1.0
) -> Iterator[None]:
    """Hold task `name`'s lease while the body runs, waiting for it if another holds it.

    For work that must run when asked (a Dagster materialization) yet must never overlap
    the same task elsewhere (a daemon's periodic run).
    """
    spec = TASKS[name]
    leases = Leases(runtime.store.engine)
    holder = runtime.worker
    give_up = time.monotonic() + wait_s
    while not leases.acquire(name, holder, now=runtime.clock.now(), ttl_s=spec.ttl_s):
        held_by = str((leases.get(name) or {}).get("holder") or "")
        if local_worker_gone(held_by):
            # Its holder was killed (kill -9 of a reprocess): no one will release it.
            leases.release(name, held_by, now=runtime.clock.now(), completed=False)
            continue
        if time.monotonic() >= give_up:
            raise CatlasError(f"task {name} is still held by {held_by}")
        time.sleep(poll_s)
    completed = False
    try:
        yield
        completed = True
    finally:
        leases.release(name, holder, now=runtime.clock.now(), completed=completed)

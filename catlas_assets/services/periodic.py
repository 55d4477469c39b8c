"""The periodic tasks of the scheduler (spec: `services/periodic`), each under a lease.

Both fronts run them through `run_task`: the `catlas schedule` daemon (APScheduler, cron
in `settings.tz`) and the Dagster schedules. The lease in the state store makes sure that,
with several daemons or with Dagster schedules enabled too, a task never runs twice at
once, nor twice in the same period (`min_gap_s`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from catlas_assets.errors import CatlasError
from catlas_assets.services.runtime import Runtime
from resources.state.crawl_stats import sweep_stale_claims
from resources.state.leases import Leases


@dataclass(frozen=True)
class TaskSpec:
    name: str
    run: Callable[[Runtime], str]
    ttl_s: int  # a holder that dies frees the task after this long
    min_gap_s: int  # no second run within this long of the last completed one
    # How the daemon triggers it: an interval in seconds, or a cron minute each hour.
    every_s: int | None = None
    cron_minute: int | None = None


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
    from catlas_assets.services.compaction import compact_all

    results = compact_all(runtime)
    merged = sum(1 for r in results if r.files_before > 1)
    return f"{len(results)} partition(s) checked, {merged} compacted"


def _optional(module: str, function: str) -> Callable[[Runtime], object] | None:
    """A service another part of catlas provides, if it is installed in this build."""
    try:
        found = getattr(importlib.import_module(module), function, None)
    except ImportError:
        return None
    return found if callable(found) else None


def onboarding_hook() -> Callable[[Runtime], object] | None:
    return _optional("catlas_assets.services.onboarding", "onboard_pending")


def repair_hook() -> Callable[[Runtime], object] | None:
    return _optional("catlas_assets.services.repair", "repair_pass")


def _onboarding(runtime: Runtime) -> str:
    hook = onboarding_hook()
    if hook is None:
        return "onboarding is not available in this build"
    return f"onboarding batch: {_summary(hook(runtime))}"


def _repair(runtime: Runtime) -> str:
    hook = repair_hook()
    if hook is None:
        return "repair is not available in this build"
    return f"repair pass: {_summary(hook(runtime))}"


def _summary(result: object) -> str:
    """The verdict line of what a hook returned (a report, or something holding one)."""
    report = getattr(result, "report", result)
    return str(getattr(report, "summary_line", report))


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("stale_claim_sweep", _stale_claims, ttl_s=600, min_gap_s=60, every_s=300),
        TaskSpec("lake_compaction", _compaction, ttl_s=3600, min_gap_s=1800, cron_minute=10),
        # Every 4 ticks in the daemon (spec); on its own schedule in Dagster.
        TaskSpec("onboarding", _onboarding, ttl_s=1800, min_gap_s=0),
        TaskSpec("repair", _repair, ttl_s=1800, min_gap_s=1500, every_s=1800),
    )
}


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
        if time.monotonic() >= give_up:
            lease = leases.get(name) or {}
            raise CatlasError(f"task {name} is still held by {lease.get('holder')}")
        time.sleep(poll_s)
    completed = False
    try:
        yield
        completed = True
    finally:
        leases.release(name, holder, now=runtime.clock.now(), completed=completed)

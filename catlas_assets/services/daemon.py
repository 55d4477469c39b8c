"""The `catlas schedule` daemon: ticks every `scheduler_tick_s`, periodic tasks beside them.

The main thread runs the ticks (so a signal reaches the tick in progress through the shared
RunControl); APScheduler runs the periodic tasks in its own threads, interval and cron
triggers in `settings.tz`, each task under a lease (services/periodic.py). The daemon's
whole lifetime is one run of kind `daemon` with its own verdict; each tick is a run too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from apscheduler.schedulers.background import BackgroundScheduler

from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import RunKind, Stop
from catlas_assets.errors import StorageError
from catlas_assets.services import periodic
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder, RunReport, unstarted_report
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from resources.state.scheduler_lock import scheduler_lock


@dataclass
class DaemonResult:
    report: RunReport
    ticks: list[RunReport] = field(default_factory=list)
    tasks: list[periodic.TaskResult] = field(default_factory=list)


def run_daemon(
    runtime: Runtime,
    control: RunControl,
    *,
    onboarding: bool = True,
    periodic_tasks: bool = True,
    on_tick: Callable[[RunReport], None] | None = None,
) -> DaemonResult:
    """Run until a signal, the deadline or the request budget stops it.

    Raises BlockingIOError (writing nothing) when another scheduler holds the embedded
    SQLite state file.
    """
    if control.stop_before_start() or control.budget_stop():
        return DaemonResult(unstarted_report(RunKind.DAEMON, runtime.clock.now()))
    with scheduler_lock(runtime.settings.resolved_database_url):
        return _live(runtime, control, onboarding, periodic_tasks, on_tick)


def _live(
    runtime: Runtime,
    control: RunControl,
    onboarding: bool,
    periodic_tasks: bool,
    on_tick: Callable[[RunReport], None] | None,
) -> DaemonResult:
    recorder = RunRecorder(runtime, RunKind.DAEMON)
    result = DaemonResult(report=None)  # type: ignore[arg-type]
    scheduler = _periodic_scheduler(runtime, result) if periodic_tasks else None
    _beat(runtime, recorder.run_id, "started")
    totals: Counter[str] = Counter()
    productive = False
    gaps = 0
    error: str | None = None
    storage_failed = False  # the state store or the lake refused a write: nothing can be kept
    try:
        if scheduler is not None:
            scheduler.start()
        while control.interruption() is None and control.budget_stop() is None:
            try:
                tick = run_tick(runtime, control=control).report
            except Exception as exc:  # the tick recorded its own `error` verdict
                error = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
                storage_failed = isinstance(exc, StorageError)
                break
            if tick.run_id == "-":
                break  # stopped before it started: nothing to add
            result.ticks.append(tick)
            totals.update(tick.counters)
            productive = productive or tick.productive
            gaps += tick.coverage_gaps
            if on_tick is not None:
                on_tick(tick)
            _beat(runtime, recorder.run_id, tick.run_id)
            if onboarding and len(result.ticks) % runtime.settings.onboarding_every_ticks == 0:
                result.tasks.append(periodic.run_task(runtime, "onboarding"))
            if control.wait(runtime.settings.scheduler_tick_s):
                break
    finally:
        if scheduler is not None:
            scheduler.shutdown(wait=True)
    budget = control.budget_stop()
    interruption = control.interruption()
    if error is not None:
        stop, detail = Stop.ERROR, error
    elif budget is not None:
        stop, detail = budget
    elif interruption is not None:
        stop, detail = Stop.INTERRUPTED, interruption
    else:
        stop, detail = Stop.QUEUE_EMPTY, ""
    failed = totals["failed"] + totals["redirected"]
    report = recorder.finish(
        stop=stop,
        # A full or read-only lake fails the daemon whatever earlier ticks did.
        tally=Tally(failures=1, coverage_gaps=gaps)
        if storage_failed
        else Tally(
            succeeded=sum(totals[k] for k in ("ok", "changed", "unchanged", "not_modified")),
            failures=failed,
            coverage_gaps=gaps,
            productive=productive,
        ),
        counters={**dict(totals), "ticks": len(result.ticks)},
        detail=(detail + f"; {len(result.ticks)} tick(s)").strip("; "),
    )
    _beat(runtime, recorder.run_id, "stopped")
    result.report = report
    return result


def _periodic_scheduler(runtime: Runtime, result: DaemonResult) -> BackgroundScheduler:
    scheduler = BackgroundScheduler(timezone=runtime.settings.tz)

    def job(name: str) -> Callable[[], None]:
        def run() -> None:
            result.tasks.append(periodic.run_task(runtime, name))

        return run

    for spec in periodic.TASKS.values():
        options = {"id": spec.name, "max_instances": 1, "coalesce": True}
        cadence = spec.cadence
        if cadence is None:
            continue  # run by the tick loop (onboarding), not by the clock
        if cadence.every_s is not None:
            scheduler.add_job(job(spec.name), "interval", seconds=cadence.every_s, **options)
        else:
            scheduler.add_job(job(spec.name), "cron", minute=cadence.minute, **options)
    return scheduler


def _beat(runtime: Runtime, daemon_run_id: str, last: str) -> None:
    now = runtime.clock.now()
    runtime.store.put_kv(
        f"scheduler:heartbeat:{runtime.worker}",
        {
            "worker": runtime.worker,
            "daemon_run_id": daemon_run_id,
            "last": last,
            "at": now.isoformat(),
        },
        now,
    )

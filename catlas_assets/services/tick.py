"""One scheduler tick: claim the due sensors, run them concurrently, record one verdict."""

from __future__ import annotations

import asyncio
import gc
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache

from catlas_assets.domain.pipeline_data import SensorState
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import (
    MEANINGFUL_OR_ABOVE,
    PRODUCTIVE,
    SUCCESSES,
    Outcome,
    RunKind,
    Stop,
)
from catlas_assets.errors import StorageError
from catlas_assets.ids import new_id
from catlas_assets.services import event_loop, lake_sync
from catlas_assets.services.blocked_recheck import recheck_blocked
from catlas_assets.services.claimed_work import (
    ClaimedResult,
    enough_for_lanes,
    lanes_for,
    run_claimed,
)
from catlas_assets.services.dead_runs import settle
from catlas_assets.services.pipeline import SENSOR_STATE_COLUMNS, SensorRunResult, sensor_state
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder, RunReport, unstarted_report
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from resources.state.scheduler_lock import scheduler_lock


@dataclass
class TickResult:
    report: RunReport
    runs: list[SensorRunResult] = field(default_factory=list)


def run_tick(
    runtime: Runtime,
    *,
    on_sensor_done: Callable[[SensorRunResult], None] | None = None,
    launch_handle: str | None = None,
    control: RunControl | None = None,
) -> TickResult:
    """One tick. Raises BlockingIOError (writing nothing) when another scheduler holds the
    embedded SQLite state file; returns a failed "Not started" report, written nowhere,
    when a signal, the deadline or a spent request budget stops it before it starts."""
    control = control or RunControl()
    if control.stop_before_start() or control.budget_stop():
        return TickResult(unstarted_report(RunKind.TICK, runtime.clock.now()))
    with scheduler_lock(runtime.settings.resolved_database_url):
        _set_up_process()
        return _tick(runtime, control, on_sensor_done, launch_handle)


@cache
def _set_up_process() -> None:
    """What a process sets up once for all its ticks, before the first one's clock starts
    (and before lanes fork, which inherit it): the public suffix trie every claimed
    sensor's domain comes from, the compute kernels the lake flush casts with, the
    fetchers' transports (HTTP/1.1, and httpcore's for https), what every lane imports,
    and a frozen heap. About 0.3 s that a daemon's later ticks never pay; counted in the
    first, it made the first tick of every `schedule --once` look that much slower than
    the work it did."""
    import pyarrow.compute  # noqa: F401  (imported by pyarrow at the first cast)

    # Imported once here, not in each lane (a one-off command imports them when it asks).
    # A lane is forked for every tick: what it imports itself it imports every tick (its
    # event loop, its parser pool, the budget and robots.txt stores: ~7 ms of its start).
    import catlas_assets.services.observe_pool  # noqa: F401
    import resources.h1_transport
    import resources.negotiated_transport
    import resources.state.domain_budgets
    import resources.state.robots_files  # noqa: F401

    event_loop.loop_factory()  # uvloop's import
    registrable_domain("example.com")
    # What the process holds now (its modules, definitions, settings) lives as long as it:
    # out of the collector's sight, a full collection during a tick no longer walks it
    # (~0.07 s of a 2,000-sensor tick), nor does a lane's, which would also copy the pages
    # it shares with this process on fork.
    gc.freeze()


def _tick(
    runtime: Runtime,
    control: RunControl,
    on_sensor_done: Callable[[SensorRunResult], None] | None,
    launch_handle: str | None,
) -> TickResult:
    started = time.monotonic()
    settings = runtime.settings
    guard = control.guard(settings)
    done = ClaimedResult()
    sensors: list[SensorState] = []  # every sensor claimed, in claim order
    run_id = new_id("run", runtime.clock.now())
    # The lanes start first: their own start (a fork, its parser, its store opened) runs
    # while this process records the run, settles and claims (it came after, and a lane's
    # first sensor 35-55 ms after the claim's first part). Whether a tick has enough due
    # sensors for lanes is counted before the recheck below, which may add a few.
    lanes = lanes_for(runtime, run_id, runtime.clock.now())
    try:
        recorder = RunRecorder(runtime, RunKind.TICK, launch_handle=launch_handle, run_id=run_id)
        settle(runtime)  # a run whose process died gets its verdict, its temp files go
        recheck_blocked(runtime)  # robots.txt may allow blocked sensors again: due in this tick
        now = runtime.clock.now()
        claim = _Claim(runtime, now)
        limit = settings.scheduler_claim_batch
        first = first_part(settings)
        sensors = claim(min(limit, first))
        rest = limit - first if len(sensors) == first else 0  # a short first part is all
        if lanes is not None and not rest and not enough_for_lanes(settings, len(sensors)):
            lanes.end()  # another worker claimed part of what was due: run it here
            lanes = None
        if sensors:
            more = (lambda: asyncio.to_thread(claim, rest)) if rest > 0 else None
            try:
                running = run_claimed(
                    runtime, sensors, recorder.run_id, guard, control, on_sensor_done, lanes,
                    more=more,
                )  # fmt: skip
                done = event_loop.run(running)
            except Exception as exc:
                # The crawl raised: the claims go back, the run still gets its verdict (error).
                runtime.store.release_claims(claim.ids, runtime.worker)
                recorder.finish(
                    stop=Stop.ERROR,
                    tally=Tally(coverage_gaps=len(sensors)),
                    counters=count([], claimed=len(sensors)),
                    detail=" ".join(f"{type(exc).__name__}: {exc}".split())[:500],
                )
                if isinstance(exc, OSError):  # a full or read-only lake: one line, exit 3
                    raise _lake_error(runtime, exc) from exc
                raise
            except BaseException:
                # The rest's claim may have finished in its thread after the run let go of it.
                runtime.store.release_claims(claim.ids, runtime.worker)
                raise
        # Unscoped: rows a crashed worker committed but never flushed go out with ours.
        try:
            lake_sync.flush(runtime)
        except OSError as exc:
            # The rows stay in the outbox for the next flush; none reached the lake in this run.
            recorder.finish(
                stop=Stop.ERROR,
                tally=Tally(coverage_gaps=len(sensors)),
                counters=count([], claimed=len(sensors)),
                detail=f"lake not written: {exc.strerror or exc}",
            )
            raise _lake_error(runtime, exc) from exc
    finally:
        if lanes is not None:
            lanes.end()  # after the flush: the lanes' exits overlap it
    runs = done.runs
    counters = count(runs, claimed=len(sensors))
    counters["released"] = len(done.released)
    failed = counters["failed"] + counters["redirected"]
    tally = Tally(
        succeeded=sum(counters[o.value] for o in SUCCESSES),
        failures=failed,
        # A coverage gap is a due sensor that failed or was not reached.
        coverage_gaps=failed + counters["skipped"] + len(done.released),
        productive=any(r.outcome in PRODUCTIVE and r.committed for r in runs),
    )
    guard.settle({s.domain for s in sensors})
    stop = guard.stop or Stop.QUEUE_EMPTY
    detail = "; ".join(dict.fromkeys(d for d in (guard.detail, guard.domain_detail()) if d))
    report = recorder.finish(
        stop=stop,
        tally=tally,
        counters=counters,
        detail=detail,
        tick_ms=int((time.monotonic() - started) * 1000),
    )
    beat = {
        "worker": runtime.worker,
        "run_id": report.run_id,
        "at": report.completed_at.isoformat(),
    }
    runtime.store.put_kv("scheduler:heartbeat", beat, report.completed_at)
    runtime.store.put_kv(f"scheduler:heartbeat:{runtime.worker}", beat, report.completed_at)
    return TickResult(report, runs)


def first_part(settings: Settings) -> int:
    """The sensors a tick claims before it starts running them: two for each run it keeps
    in flight. The rest of its batch is claimed while those run (in lanes, the claim of
    a large batch took a tenth of a tick the lanes spent waiting)."""
    return max(1, 2 * settings.fetch_concurrency)


class _Claim:
    """Claim up to `limit` due sensors for this tick, each as its run reads it (its
    registrable domain computed once); `ids` holds every sensor claimed so far. A later
    part passes over them: a stop may have released one already, and a tick claims a
    sensor once."""

    def __init__(self, runtime: Runtime, now: datetime) -> None:
        self._runtime = runtime
        self._now = now
        self.ids: list[int] = []

    def __call__(self, limit: int) -> list[SensorState]:
        runtime = self._runtime
        rows = runtime.store.claim_due(
            now=self._now,
            worker=runtime.worker,
            limit=limit,
            claim_timeout_s=runtime.settings.claim_timeout_s,
            exclude=self.ids,
            columns=SENSOR_STATE_COLUMNS,
        )
        self.ids.extend(row["id"] for row in rows)
        return [sensor_state(row) for row in rows]


def _lake_error(runtime: Runtime, exc: OSError) -> StorageError:
    where = runtime.settings.resolved_lake_url
    return StorageError(f"cannot write to the lake at {where}: {exc.strerror or exc}")


def count(runs: list[SensorRunResult], *, claimed: int) -> dict[str, int]:
    outcomes = Counter(r.outcome.value for r in runs if r.committed)
    counters = {o.value: outcomes.get(o.value, 0) for o in Outcome}
    counters["claimed"] = claimed
    counters["meaningful"] = sum(1 for r in runs if r.change_kind in MEANINGFUL_OR_ABOVE)
    counters["requests"] = sum(r.requests for r in runs)
    return counters

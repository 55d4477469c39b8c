"""Periodic tasks under leases (no task twice at once, across daemons and Dagster), the
daemon's lifetime verdict and heartbeats, and the Dagster side: the due_sensors sensor
(concurrency cap, run key per window, cursor, an indexed due probe), the periodic jobs and
the crawl figures as asset metadata."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import text

from catlas_assets.defs.crawl_stats import crawl_stats
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.domain.vocabulary import RunOutcome, Stop
from catlas_assets.services import periodic
from catlas_assets.services.daemon import DaemonResult, _periodic_scheduler, run_daemon
from catlas_assets.services.run_control import RunControl
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.state.leases import Leases
from sensors_dag.jobs import crawl_tick
from sensors_dag.periodic import stale_claim_sweep_job
from sensors_dag.sensors import TICK_WINDOW_S, due_sensors
from tests.scheduler.helpers import FAST, LOAD, add_sensors

# -- leases -----------------------------------------------------------------------------


def test_a_lease_has_one_holder_until_released_or_expired(make_runtime, database_url: str) -> None:
    leases = Leases(make_runtime(database_url).store.engine)
    assert leases.acquire("job", "a", now=DEFAULT_NOW, ttl_s=60)
    assert not leases.acquire("job", "b", now=DEFAULT_NOW, ttl_s=60)
    assert leases.acquire("job", "a", now=DEFAULT_NOW, ttl_s=60) is False  # not re-entrant
    later = DEFAULT_NOW + timedelta(seconds=61)
    assert leases.acquire("job", "b", now=later, ttl_s=60)  # a's lease expired: taken over
    leases.release("job", "b", now=later, completed=True)
    assert leases.acquire("job", "c", now=later, ttl_s=60)


def test_a_task_done_recently_is_not_run_again_within_its_gap(
    make_runtime, database_url: str
) -> None:
    leases = Leases(make_runtime(database_url).store.engine)
    assert leases.acquire("compaction", "a", now=DEFAULT_NOW, ttl_s=600, min_gap_s=1800)
    leases.release("compaction", "a", now=DEFAULT_NOW, completed=True)
    soon = DEFAULT_NOW + timedelta(seconds=20)  # another daemon's cron fires a bit later
    assert not leases.acquire("compaction", "b", now=soon, ttl_s=600, min_gap_s=1800)
    later = DEFAULT_NOW + timedelta(seconds=1800)
    assert leases.acquire("compaction", "b", now=later, ttl_s=600, min_gap_s=1800)


def test_concurrent_holders_never_run_one_task_twice_at_once(
    make_runtime, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    running = []
    overlaps = []
    lock = threading.Lock()

    def body(rt) -> str:
        with lock:
            running.append(1)
            if len(running) > 1:
                overlaps.append(len(running))
        threading.Event().wait(0.2)
        with lock:
            running.pop()
        return "done"

    spec = periodic.TASKS["stale_claim_sweep"]
    periodic.TASKS["test_task"] = periodic.TaskSpec("test_task", body, ttl_s=60, min_gap_s=0)
    try:
        results = []
        threads = [
            threading.Thread(
                target=lambda n=n: results.append(
                    periodic.run_task(runtime, "test_task", holder=f"daemon-{n}")
                )
            )
            for n in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        del periodic.TASKS["test_task"]
    assert spec.name == "stale_claim_sweep"
    assert overlaps == []
    assert sum(r.ran for r in results) >= 1
    assert all("held" in r.detail for r in results if not r.ran)


def test_the_stale_claim_sweep_releases_only_claims_older_than_the_timeout(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST)
    ids = add_sensors(runtime, LOAD, 3)
    store = runtime.store
    old = DEFAULT_NOW - timedelta(seconds=runtime.settings.claim_timeout_s + 1)
    store.claim_due(now=old, worker="dead", limit=1, claim_timeout_s=900)  # nothing due then
    for sensor_id, at in zip(ids, (old, old, DEFAULT_NOW), strict=True):
        with store.engine.begin() as conn:
            conn.execute(
                text("UPDATE sensors SET claimed_at = :at, claimed_by = 'dead' WHERE id = :id"),
                {"at": at if database_url.startswith("postgresql") else at.replace(tzinfo=None),
                 "id": sensor_id},
            )  # fmt: skip
    result = periodic.run_task(runtime, "stale_claim_sweep")
    assert result.ran and result.detail == "released 2 stale claim(s)"
    assert [store.sensor(i)["claimed_by"] for i in ids] == [None, None, "dead"]


# -- the daemon -------------------------------------------------------------------------


def test_the_daemon_ticks_beats_and_ends_with_its_own_verdict(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, scheduler_tick_s=1)
    add_sensors(runtime, LOAD, 3)
    result = run_daemon(runtime, RunControl(deadline_s=1.6), onboarding=False, periodic_tasks=True)
    report = result.report
    assert report.kind == "daemon" and report.stop is Stop.INTERRUPTED
    assert report.detail.startswith("Reached the deadline")
    assert report.outcome is RunOutcome.PARTIAL  # interrupted after requests succeeded
    assert len(result.ticks) >= 1 and result.ticks[0].counters["ok"] == 3
    assert report.counters["ticks"] == len(result.ticks) and report.counters["ok"] == 3
    beat = runtime.store.get_kv(f"scheduler:heartbeat:{runtime.worker}")
    assert beat["daemon_run_id"] == report.run_id and beat["last"] == "stopped"
    assert runtime.store.get_kv("scheduler:heartbeat")["worker"] == runtime.worker
    rows = {r["id"]: r for r in runtime.store.runs(limit=20)}
    assert rows[report.run_id]["outcome"] == "partial"
    assert all(rows[t.run_id]["kind"] == "tick" for t in result.ticks)


def test_the_daemon_stops_when_its_request_budget_is_spent(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, scheduler_tick_s=1, fetch_concurrency=1)
    add_sensors(runtime, LOAD, 6)
    result = run_daemon(
        runtime, RunControl(max_requests=3, deadline_s=20), onboarding=False, periodic_tasks=False
    )
    assert result.report.stop is Stop.MAX_REQUESTS
    assert result.report.counters["requests"] == 3
    assert len(result.ticks) == 1 and result.ticks[0].stop is Stop.MAX_REQUESTS


# -- Dagster ----------------------------------------------------------------------------


@pytest.fixture
def resource(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    for name, value in FAST.items():
        monkeypatch.setenv(f"CATLAS_{name.upper()}", str(value))
    return CatlasResource(
        state_dir=str(tmp_path / "state"), hosts=str(web.write_hosts_file(tmp_path / "h"))
    )


def _evaluate(instance: dg.DagsterInstance, resource: CatlasResource, cursor: str | None = None):
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"catlas": resource}
    ) as context:
        return due_sensors(context)


def test_due_sensors_requests_one_tick_per_window_and_keeps_a_cursor(
    resource: CatlasResource,
) -> None:
    instance = dg.DagsterInstance.ephemeral()
    assert "no sensor is due" in _evaluate(instance, resource).skip_reason.skip_message
    add_sensors(resource.build(), LOAD, 2)
    result = _evaluate(instance, resource)
    window = int(DEFAULT_NOW.timestamp()) // TICK_WINDOW_S
    assert [r.run_key for r in result.run_requests] == [f"tick-{window}"]
    assert result.cursor == str(window)
    again = _evaluate(instance, resource, cursor=result.cursor)
    assert (
        again.run_requests in (None, []) and "already requested" in again.skip_reason.skip_message
    )


def test_due_sensors_waits_while_max_concurrent_crawl_runs_are_in_flight(
    resource: CatlasResource, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = dg.DagsterInstance.ephemeral()
    add_sensors(resource.build(), LOAD, 2)
    instance.create_run_for_job(job_def=crawl_tick)  # one tick queued, not finished
    skipped = _evaluate(instance, resource).skip_reason.skip_message
    assert "1 crawl tick(s) in flight (max 1)" in skipped
    monkeypatch.setenv("CATLAS_MAX_CONCURRENT_CRAWL_RUNS", "2")
    assert len(_evaluate(instance, resource).run_requests) == 1


def test_the_due_probe_walks_the_status_next_run_at_index(
    postgres_database: str, make_runtime
) -> None:
    from tests.conftest import reset_postgres

    reset_postgres(postgres_database)
    runtime = make_runtime(postgres_database)
    with runtime.store.engine.connect() as conn:
        conn.execute(text("SET enable_seqscan = off"))  # a tiny table would be scanned
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                text(
                    "EXPLAIN SELECT next_run_at FROM sensors WHERE status = 'active' "
                    "ORDER BY next_run_at LIMIT 1"
                )
            )
        )
    assert "ix_sensors_status_next_run_at" in plan, plan


def test_crawl_tick_runs_carry_the_crawl_figures_and_fail_exactly_when_failed(
    resource: CatlasResource,
) -> None:
    add_sensors(resource.build(), LOAD, 2)
    ok = crawl_tick.execute_in_process(resources={"catlas": resource})
    assert ok.success
    [materialized] = [
        e for e in ok.all_events if e.event_type_value == "STEP_OUTPUT"
    ]  # the op's output metadata
    metadata = materialized.event_specific_data.metadata
    assert metadata["crawl/due_backlog"].value == 0
    assert metadata["crawl/outcomes/ok"].value == 2
    add_sensors(resource.build(), "http://brickwall-hosting.com", 2)
    failed = crawl_tick.execute_in_process(resources={"catlas": resource}, raise_on_error=False)
    assert not failed.success  # only the blocking site was due: verdict failed


def test_periodic_jobs_and_the_stats_asset_run_in_dagster(resource: CatlasResource) -> None:
    add_sensors(resource.build(), LOAD, 2)
    result = stale_claim_sweep_job.execute_in_process(resources={"catlas": resource})
    assert result.success
    materialized = dg.materialize([crawl_stats], resources={"catlas": resource})
    [event] = materialized.get_asset_materialization_events()
    metadata = event.materialization.metadata
    assert metadata["crawl/sensors"].value == 2 and metadata["crawl/due_backlog"].value == 2


# -- one declaration of the periodic tasks ------------------------------------------------


def test_the_periodic_tasks_are_exactly_those_declared(make_runtime, database_url: str) -> None:
    assert {name: spec.cadence for name, spec in periodic.TASKS.items()} == {
        "stale_claim_sweep": periodic.Cadence(every_s=300),
        "lake_compaction": periodic.Cadence(minute=10),
        "repair": periodic.Cadence(every_s=1800),  # spec: every 30 min
        "onboarding": None,  # every 4 ticks in the daemon, a sensor in Dagster
        "budgets_reset": None,  # a daily Dagster schedule; the daemon resets lazily
    }
    result = DaemonResult(report=None)  # type: ignore[arg-type]
    scheduler = _periodic_scheduler(make_runtime(database_url), result)
    triggers = {job.id: job.trigger for job in scheduler.get_jobs()}
    assert set(triggers) == {"stale_claim_sweep", "lake_compaction", "repair"}
    assert triggers["repair"].interval == timedelta(seconds=1800)
    assert triggers["stale_claim_sweep"].interval == timedelta(seconds=300)
    assert str(triggers["lake_compaction"].fields[6]) == "10"  # the cron trigger's minute


def test_a_cadence_is_an_interval_or_a_minute_and_maps_to_one_cron_string() -> None:
    assert periodic.Cadence(every_s=300).cron() == "*/5 * * * *"
    assert periodic.Cadence(every_s=900).cron() == "*/15 * * * *"
    assert periodic.Cadence(minute=10).cron() == "10 * * * *"
    with pytest.raises(ValueError, match="no cron equivalent"):
        periodic.Cadence(every_s=420).cron()  # 7 minutes does not divide the hour
    with pytest.raises(ValueError, match="either every_s or minute"):
        periodic.Cadence()
    with pytest.raises(ValueError, match="its front triggers it"):
        periodic.cadence_of("onboarding")


def test_dagster_schedules_read_the_declared_cadences_and_settings_time_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib

    import sensors_dag.periodic as dagster_periodic
    from catlas_assets.definitions import defs

    repo = defs.get_repository_def()
    assert repo.get_schedule_def("periodic_stale_claim_sweep_schedule").cron_schedule == (
        periodic.cadence_of("stale_claim_sweep").cron()
    )
    assert repo.get_schedule_def("crawl_stats_job_schedule").cron_schedule == (
        periodic.CRAWL_STATS_CADENCE.cron()
    )
    compaction = repo.get_schedule_def("compact_lake_schedule").cron_schedule
    assert compaction == periodic.cadence_of("lake_compaction").cron()
    assert repo.get_schedule_def("repair_schedule").cron_schedule == (
        periodic.cadence_of("repair").cron()
    )
    monkeypatch.setenv("CATLAS_TZ", "Europe/Berlin")
    try:
        reloaded = importlib.reload(dagster_periodic)
        assert {s.execution_timezone for s in reloaded.periodic_schedules} == {"Europe/Berlin"}
    finally:
        monkeypatch.delenv("CATLAS_TZ")
        importlib.reload(dagster_periodic)


# -- runs in flight -----------------------------------------------------------------------

# QUEUED is left out: Dagster accepts it only for a run launched from a code location;
# the status list below names it.
_MOVED_BY = {
    dg.DagsterRunStatus.STARTING: dg.DagsterEventType.RUN_STARTING,
    dg.DagsterRunStatus.STARTED: dg.DagsterEventType.RUN_START,
    dg.DagsterRunStatus.CANCELING: dg.DagsterEventType.RUN_CANCELING,
    dg.DagsterRunStatus.SUCCESS: dg.DagsterEventType.RUN_SUCCESS,
    dg.DagsterRunStatus.FAILURE: dg.DagsterEventType.RUN_FAILURE,
    dg.DagsterRunStatus.CANCELED: dg.DagsterEventType.RUN_CANCELED,
}


def _run_in_status(instance: dg.DagsterInstance, job, status: dg.DagsterRunStatus) -> None:
    """A run of `job` in `status`, moved there by the event Dagster itself records."""
    run = instance.create_run_for_job(job_def=job)  # NOT_STARTED
    if status in _MOVED_BY:
        event = dg.DagsterEvent(_MOVED_BY[status].value, job_name=job.name)
        instance.run_storage.handle_run_event(run.run_id, event)
    assert instance.get_run_by_id(run.run_id).status is status


@pytest.mark.parametrize(
    ("status", "counted"),
    [
        (dg.DagsterRunStatus.NOT_STARTED, True),
        (dg.DagsterRunStatus.STARTING, True),
        (dg.DagsterRunStatus.STARTED, True),
        (dg.DagsterRunStatus.CANCELING, True),
        (dg.DagsterRunStatus.SUCCESS, False),
        (dg.DagsterRunStatus.FAILURE, False),
        (dg.DagsterRunStatus.CANCELED, False),
    ],
)
def test_both_request_sensors_count_the_same_runs_as_in_flight(
    resource: CatlasResource, status: dg.DagsterRunStatus, counted: bool
) -> None:
    from catlas_assets.definitions import defs
    from sensors_dag.onboarding import pending_companies

    instance = dg.DagsterInstance.ephemeral()
    add_sensors(resource.build(), LOAD, 1)
    _run_in_status(instance, crawl_tick, status)
    _run_in_status(instance, defs.resolve_job_def("onboarding"), status)
    tick = _evaluate(instance, resource).skip_reason
    with dg.build_sensor_context(instance=instance, resources={"catlas": resource}) as context:
        onboarding = pending_companies(context).skip_reason
    assert (tick is not None and "in flight" in tick.skip_message) is counted
    assert (onboarding is not None and "in flight" in onboarding.skip_message) is counted


def test_in_flight_is_every_status_of_a_run_not_yet_over() -> None:
    from sensors_dag.in_flight import IN_FLIGHT_STATUSES

    assert set(IN_FLIGHT_STATUSES) == {
        dg.DagsterRunStatus.NOT_STARTED,
        dg.DagsterRunStatus.QUEUED,
        dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED,
        dg.DagsterRunStatus.CANCELING,
    }

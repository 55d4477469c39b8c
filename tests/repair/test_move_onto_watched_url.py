"""A same-domain permanent move onto a URL another sensor of the same company and surface
already watches, on SQLite and PostgreSQL: (company, surface, url) stays unique, the run
commits, and the duplicate retires in favour of the sensor already there.

Wayfarer Tools' /careers answers 301 → /company/careers from day 3
(fixtures/repair_scenarios.toml); a move is made on its second consecutive sighting."""

from __future__ import annotations

from datetime import timedelta

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from catlas_assets.services.tick import run_tick
from fixture_web import FixtureWeb, at_day
from resources.state import repair_store

SITE = "http://wayfarer-tools.com"
OLD, NEW = f"{SITE}/careers", f"{SITE}/company/careers"


def _two_sensors(runtime: Runtime) -> tuple[int, int]:
    company_id = catalog.add_company(runtime, name="Wayfarer Tools", website=SITE)
    moving = catalog.add_sensor(runtime, company_id=company_id, surface="careers", url=OLD)
    there = catalog.add_sensor(runtime, company_id=company_id, surface="careers", url=NEW)
    return moving, there


def _live(runtime: Runtime, web: FixtureWeb, sensor_ids: list[int], days: list[int]) -> None:
    for day in days:
        runtime.clock.set(at_day(day))
        web.set_now(at_day(day))
        for sensor_id in sensor_ids:
            result, _ = run_one(runtime, sensor_id, force=True)
            assert result.committed


def test_a_move_onto_a_watched_url_retires_the_duplicate(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    moving, there = _two_sensors(runtime)
    _live(runtime, web, [moving, there], [0, 3])
    assert runtime.store.sensor(moving)["config"]["moved_to"] == NEW  # first sighting
    _live(runtime, web, [moving, there], [4])

    duplicate = runtime.store.sensor(moving)
    assert duplicate["url"] == OLD  # never took the URL another sensor holds
    assert duplicate["status"] == "retired" and duplicate["retired_at"] is not None
    assert duplicate["config"]["duplicate_of"] == there
    assert "previous_urls" not in duplicate["config"]
    assert "moved_to" not in duplicate["config"]
    (item,) = runtime.store.list_review(kind="sensor_retired")
    assert item["sensor_id"] == moving
    assert item["detail"]["duplicate_of"] == there and item["detail"]["to"] == NEW
    kept = runtime.store.sensor(there)
    assert kept["status"] == "active" and kept["url"] == NEW
    watching = [s for s in runtime.store.list_sensors() if s["status"] != "retired"]
    assert [s["id"] for s in watching] == [there]


def test_a_move_onto_a_retired_sensors_url_stays_put(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    moving, there = _two_sensors(runtime)
    _live(runtime, web, [moving], [0])
    repair_store.update_sensor(
        runtime.store, there, now=at_day(0), status="retired", retired_at=at_day(0)
    )
    _live(runtime, web, [moving], [3, 4, 5])

    sensor = runtime.store.sensor(moving)
    # The retired sensor keeps its URL and history; this one goes on following the 301.
    assert sensor["url"] == OLD and sensor["status"] == "active"
    assert sensor["config"]["moved_to"] == NEW and "previous_urls" not in sensor["config"]
    assert sensor["consecutive_failures"] == 0
    assert runtime.store.list_review(kind="sensor_retired") == []
    assert runtime.store.sensor(there)["url"] == NEW


def test_a_tick_commits_the_clash_beside_other_runs_of_its_group(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    # Runs commit in groups: a clash that broke the uniqueness would undo the whole group.
    runtime = make_runtime(database_url, commit_group_runs=8, commit_group_ms=200)
    moving, there = _two_sensors(runtime)
    other = catalog.add_company(runtime, name="Kestrel Labs", website="http://kestrel-labs.com")
    bystander = catalog.add_sensor(
        runtime, company_id=other, surface="pricing", url="http://kestrel-labs.com/pricing"
    )
    reports = []
    while runtime.clock.now() < at_day(6):
        reports.append(run_tick(runtime).report)
        web.set_now(runtime.clock.advance(timedelta(hours=6)))

    assert {r.outcome.value for r in reports} == {"success"}, [r.summary_line for r in reports]
    duplicate = runtime.store.sensor(moving)
    assert duplicate["status"] == "retired" and duplicate["config"]["duplicate_of"] == there
    assert runtime.store.sensor(there)["url"] == NEW
    kept = runtime.store.sensor(bystander)
    assert kept["status"] == "active" and kept["last_success_at"] >= duplicate["retired_at"]

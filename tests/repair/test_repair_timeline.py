"""Repair on the fixture timeline: Wayfarer Tools' pages move or break on day 3
(fixtures/repair_scenarios.toml), the scheduler ticks every 6 hours and repair looks at
the sensors it is due for. The fixture server's request log witnesses each attempt.
The timeline is lived on SQLite and on PostgreSQL."""

from __future__ import annotations

import tomllib
from datetime import timedelta
from random import Random
from typing import Any

import pytest

from catlas_assets.domain.repair import Action
from catlas_assets.services import catalog
from catlas_assets.services.periodic import run_task
from catlas_assets.services.repair import due_sensors, repair_pass
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb, default_root
from resources.clock import VirtualClock
from tests.conftest import reset_postgres

SCENARIOS = tomllib.loads((default_root().parent / "repair_scenarios.toml").read_text())
DAYS = 12
STEP = timedelta(hours=6)


def _live(runtime: Runtime, web: FixtureWeb) -> list[Any]:
    company_id = catalog.add_company(
        runtime, name=SCENARIOS["company"], website=SCENARIOS["website"]
    )
    for scenario in SCENARIOS["scenario"]:
        catalog.add_sensor(
            runtime, company_id=company_id, surface=scenario["surface"], url=scenario["url"]
        )
    attempts = []
    for _ in range(DAYS * 4):
        run_tick(runtime)
        for row in due_sensors(runtime):
            web.clear_requests()
            result = repair_pass(runtime, sensor_id=row["id"])
            (attempt,) = result.attempts
            sent = [r for r in web.requests]
            # The server's log is the witness: never more than 6 requests per attempt.
            assert len(sent) <= 6, (attempt.url, [(r.host, r.path) for r in sent])
            assert attempt.requests == len(sent)
            attempts.append(attempt)
        web.set_now(runtime.clock.advance(STEP))
    return attempts


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def lived(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, web_server: FixtureWeb
):
    """Twelve days lived once per state backend; every test reads the same outcome."""
    tmp = tmp_path_factory.mktemp(f"repair-{request.param}")
    database_url = ""  # SQLite under state_dir
    if request.param == "postgresql":
        database_url = request.getfixturevalue("postgres_database")
        reset_postgres(database_url)
    web_server.set_now(DEFAULT_NOW)
    web_server.clear_requests()
    settings = Settings(
        state_dir=str(tmp / "state"),
        database_url=database_url,
        hosts=str(web_server.write_hosts_file(tmp / "hosts")),
        fetch_retries=0,
        domain_spacing_s=0.0,
        domain_daily_budget=100_000,
        retire_after_failures=8,
    )
    runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=Random(7))
    assert runtime.store.is_postgres is (request.param == "postgresql")
    try:
        attempts = _live(runtime, web_server)
        yield runtime, attempts
    finally:
        runtime.close()


def _by_url(runtime: Runtime) -> dict[str, dict[str, Any]]:
    return {s["url"]: s for s in runtime.store.list_sensors()}


def _scenarios(expect: str) -> list[dict[str, Any]]:
    return [s for s in SCENARIOS["scenario"] if s["expect"] == expect]


def test_every_planted_move_reaches_the_right_successor(lived) -> None:
    runtime, _ = lived
    sensors = _by_url(runtime)
    for scenario in _scenarios("migrate"):
        old = sensors[scenario["url"]]
        assert old["status"] == "retired" and old["retired_at"] is not None
        new = runtime.store.sensor(old["config"]["successor_id"])
        assert new["url"] == scenario["successor"], scenario["what"]
        assert new["discovery_method"] == "repair"
        assert new["config"]["predecessor_id"] == old["id"]
        assert new["config"]["lineage_id"] == old["id"]
        assert new["status"] == "active"  # its first run happened
        decoy = scenario.get("decoy")
        if decoy:
            assert decoy not in sensors
    for scenario in _scenarios("moved"):
        assert scenario["url"] not in sensors
        moved = sensors[scenario["successor"]]
        assert moved["config"]["previous_urls"] == [scenario["url"]]
        assert moved["status"] == "active" and not moved["config"].get("successor_id")


def test_the_uncertain_case_waits_in_the_review_queue(lived) -> None:
    runtime, attempts = lived
    (scenario,) = _scenarios("review")
    sensor = _by_url(runtime)[scenario["url"]]
    items = runtime.store.list_review(kind="sensor_migration")
    (item,) = [i for i in items if i["sensor_id"] == sensor["id"]]
    passing = [c["url"] for c in item["detail"]["candidates"] if c["passes"]]
    assert len(passing) == 2
    assert not sensor["config"].get("successor_id")
    # Parked: not tried again while a person chooses.
    assert (
        sum(
            1
            for a in attempts
            if a.sensor_id == sensor["id"] and a.decision.action is Action.REVIEW
        )
        == 1
    )


def test_the_permanent_removal_is_retired_and_the_5xx_page_recovers(lived) -> None:
    runtime, _ = lived
    sensors = _by_url(runtime)
    (removed,) = _scenarios("retire")
    gone = sensors[removed["url"]]
    assert gone["status"] == "retired" and gone["retired_at"] is not None
    assert gone["consecutive_failures"] >= 8 and not gone["config"].get("successor_id")
    retired = runtime.store.list_review(kind="sensor_retired")
    assert any(i["sensor_id"] == gone["id"] for i in retired)
    (flaky,) = _scenarios("recover")
    back = sensors[flaky["url"]]
    assert back["status"] == "active" and back["consecutive_failures"] == 0
    assert not back["config"].get("successor_id")
    assert all(s["config"].get("predecessor_id") != back["id"] for s in sensors.values())


def test_one_history_across_a_move(lived) -> None:
    runtime, _ = lived
    sensors = _by_url(runtime)
    con = runtime.lake.connect()
    for scenario in (*_scenarios("migrate"), *_scenarios("moved")):
        first = sensors.get(scenario["url"]) or sensors[scenario["successor"]]
        lineage = first["id"]
        changes = con.execute(
            "SELECT sensor_id, previous_snapshot_id FROM changes WHERE lineage_id = ?", [lineage]
        ).fetchall()
        events = con.execute(
            "SELECT sensor_id, event FROM entity_events WHERE lineage_id = ? AND event <> 'added'",
            [lineage],
        ).fetchall()
        assert events == [], scenario["what"]  # no entity churn across the move
        if "lightly edited" in scenario["what"]:
            # The successor's first snapshot is compared with the predecessor's last one.
            (change,) = changes
            new_id = first["config"]["successor_id"]
            assert change[0] == new_id
            (last_old,) = con.execute(
                "SELECT snapshot_id FROM snapshots WHERE sensor_id = ? ORDER BY version DESC LIMIT 1",
                [lineage],
            ).fetchone()
            assert change[1] == last_old
        else:
            assert changes == [], scenario["what"]
    versions = con.execute(
        "SELECT lineage_id, list(version ORDER BY version) FROM snapshots GROUP BY lineage_id"
    ).fetchall()
    for _, numbers in versions:
        assert numbers == list(range(1, len(numbers) + 1))  # one continuous version chain


def test_the_periodic_task_runs_one_repair_run_with_a_verdict(lived) -> None:
    runtime, _ = lived
    result = run_task(runtime, "repair")
    assert result.ran
    (row, *_) = runtime.store.runs(kind="repair")
    assert row["outcome"] == "success" and row["stop"] == "queue_empty"
    assert row["productive"] is False or row["productive"] == 0  # nothing left to recover

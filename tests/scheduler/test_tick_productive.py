"""A run is productive only when it stored a new item or a change (spec 001), ticks too."""

from __future__ import annotations

from datetime import timedelta

from catlas_assets.services.run_history import stale_report
from catlas_assets.services.tick import run_tick
from tests.conftest import Sim
from tests.scheduler.helpers import FAST, LOAD, add_sensors


def test_ticks_of_unchanged_pages_are_not_productive_and_grow_the_streak(sim: Sim) -> None:
    runtime = sim.runtime
    runtime.settings = runtime.settings.with_overrides(**FAST)
    add_sensors(runtime, LOAD, 3)
    first = run_tick(runtime).report
    assert first.productive and first.empty_streak == 0  # new snapshots were stored
    streaks = []
    for _ in range(3):
        sim.advance(timedelta(days=3))
        tick = run_tick(runtime).report
        assert tick.counters["claimed"] == 3
        assert tick.counters["ok"] == tick.counters["changed"] == 0
        assert tick.outcome.value == "success"  # healthy, yet yielding nothing new
        assert not tick.productive
        streaks.append(tick.empty_streak)
    assert streaks == [1, 2, 3]
    report = stale_report(runtime, 3)
    assert [r["kind"] for r in report.run_kinds] == ["tick"]
    assert len(report.sensors) == 3  # unchanged for three runs in a row, never failing

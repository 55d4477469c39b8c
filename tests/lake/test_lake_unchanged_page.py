"""Running the pipeline twice on an unchanged page stores no new object bytes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from fixture_web import FixtureWeb
from resources.clock import VirtualClock
from resources.state.schema import cost_ledger


def add_careers_sensor(runtime: Runtime) -> int:
    company_id = catalog.add_company(
        runtime, name="Northwind Robotics", website="http://northwind-robotics.com"
    )
    return catalog.add_sensor(
        runtime,
        company_id=company_id,
        surface="careers",
        url="http://northwind-robotics.com/careers",
    )


def archive_usage(runtime: Runtime) -> tuple[list[str], int]:
    """The archive's files (packs and objects of their own) and their bytes."""
    keys = runtime.storage.glob("packs/*/*.pack") + runtime.storage.glob("objects/*/*/*.zst")
    return keys, sum(runtime.storage.size(k) for k in keys)


def ledger(runtime: Runtime) -> tuple[int, int]:
    with runtime.store.engine.connect() as conn:
        units, stored = conn.execute(
            select(func.sum(cost_ledger.c.fetch_units), func.sum(cost_ledger.c.bytes_stored))
        ).one()
    return int(units or 0), int(stored or 0)


def run_twice(runtime: Runtime, advance: Callable[[timedelta], None]) -> dict[str, Any]:
    sensor_id = add_careers_sensor(runtime)
    first = run_tick(runtime)
    assert [r.outcome.value for r in first.runs] == ["ok"]
    objects, stored_bytes = archive_usage(runtime)
    units, ledger_bytes = ledger(runtime)
    assert objects and stored_bytes > 0
    assert ledger_bytes == stored_bytes  # the ledger counts exactly what the archive holds

    next_run_at = runtime.store.sensor(sensor_id)["next_run_at"]
    advance(next_run_at - runtime.clock.now() + timedelta(hours=3))
    second = run_tick(runtime)

    assert [r.sensor_id for r in second.runs] == [sensor_id]
    assert second.runs[0].committed
    assert archive_usage(runtime) == (objects, stored_bytes)
    units_after, ledger_bytes_after = ledger(runtime)
    assert units_after > units  # the second run was charged, so the ledger is live
    assert ledger_bytes_after == ledger_bytes
    observations = (
        runtime.lake.connect()
        .execute(
            "SELECT outcome, not_modified, http_status, changed, run_id FROM observations "
            "ORDER BY fetched_at"
        )
        .fetchall()
    )
    assert len(observations) == 2
    assert observations[1][4] == second.report.run_id
    return {"run": second.runs[0], "observation": observations[1]}


def test_a_second_run_on_an_unchanged_page_is_not_modified(sim: Any) -> None:
    result = run_twice(sim.runtime, sim.advance)
    assert result["run"].outcome.value == "not_modified"
    outcome, not_modified, http_status, changed, _ = result["observation"]
    assert (outcome, not_modified, http_status, changed) == ("not_modified", True, 304, False)


def test_an_unconditional_refetch_of_an_unchanged_page_is_unchanged_and_stores_nothing(
    make_runtime: Callable[..., Runtime], web: FixtureWeb, database_url: str
) -> None:
    """Without validators the same bytes come back whole; the archive must still not grow."""
    runtime = make_runtime(database_url, full_refetch_interval_s=60)
    clock = runtime.clock
    assert isinstance(clock, VirtualClock)

    def advance(delta: timedelta) -> None:
        web.set_now(clock.advance(delta))

    result = run_twice(runtime, advance)
    assert result["run"].outcome.value == "unchanged"
    outcome, not_modified, http_status, changed, _ = result["observation"]
    assert (outcome, not_modified, http_status, changed) == ("unchanged", False, 200, False)

"""The lake's dimensions: names, URLs, lineage and delivery status beside the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from catlas_assets.services.dimensions import _sensors, export_dimensions
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from resources.state import inbox

# The first test to run also lives through the session's demo (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)


def test_every_change_joins_to_its_company_name_and_sensor_url(demo_runtime: Runtime) -> None:
    con = demo_runtime.lake.connect()
    rows = con.execute(
        "SELECT c.change_id, co.company_name, s.url, s.connector FROM changes c "
        "LEFT JOIN companies co USING (company_id) LEFT JOIN sensors s USING (sensor_id)"
    ).fetchall()
    assert rows
    assert all(name and url.startswith("http") and connector for _, name, url, connector in rows)
    names = {r[1] for r in rows}
    assert {"Northwind Robotics", "Orbit Pay", "Bluefin Analytics"} <= names


def test_dimensions_are_daily_snapshots_with_the_latest_as_a_view(demo_runtime: Runtime) -> None:
    con = demo_runtime.lake.connect()
    (days,) = con.execute("SELECT count(DISTINCT date) FROM sensors_history").fetchone()
    assert days == 1
    latest = con.execute("SELECT count(*) FROM sensors").fetchone()
    history = con.execute("SELECT count(*) FROM sensors_history").fetchone()
    assert latest == history and latest[0] > 3
    (types,) = con.execute(
        "SELECT list(column_type ORDER BY column_name) FROM (DESCRIBE sensors) "
        "WHERE column_name IN ('last_change_at', 'lineage_id', 'sensor_id')"
    ).fetchone()
    assert types == ["TIMESTAMP WITH TIME ZONE", "BIGINT", "BIGINT"]
    assert con.execute("SELECT count(*) FROM domains WHERE kind IS NOT NULL").fetchone()[0] >= 3
    # A sensor starts its own lineage unless repair made it a successor (the demo migrates one).
    own = con.execute(
        "SELECT count(*) FROM sensors WHERE (lineage_id = sensor_id) = (predecessor_sensor_id IS NULL)"
    ).fetchone()
    assert own == latest


def test_a_delivered_change_reads_delivered_in_sql_with_its_channel(demo_copy: Path) -> None:
    runtime = Runtime(Settings(state_dir=str(demo_copy)))
    try:
        con = runtime.lake.connect()
        assert con.execute(
            "SELECT DISTINCT status FROM changes WHERE kind <> 'minor'"
        ).fetchall() == [("pending",)]
        first = inbox.list_changes(runtime.store)[0]
        assert inbox.mark_delivered(runtime.store, first["change_id"], runtime.clock.now())
        export_dimensions(runtime)
        con = runtime.lake.connect()
        rows = con.execute(
            "SELECT c.status, c.status_at_write, d.channel, d.delivered_at IS NOT NULL "
            "FROM changes c JOIN change_deliveries d USING (change_id)"
        ).fetchall()
        assert rows == [("delivered", "pending", "webhook", True)]
        pending = con.execute("SELECT count(*) FROM changes WHERE status = 'pending'").fetchone()
        assert pending[0] == len(inbox.list_changes(runtime.store, status="pending"))
    finally:
        runtime.close()


def test_entity_rows_carry_a_readable_label(demo_runtime: Runtime) -> None:
    con = demo_runtime.lake.connect()
    labels = dict(
        con.execute(
            "SELECT entity_type, count(*) FILTER (WHERE entity_label IS NULL) FROM entity_events "
            "GROUP BY ALL"
        ).fetchall()
    )
    assert labels and all(missing == 0 for missing in labels.values())
    assert (
        con.execute(
            "SELECT count(*) FROM entity_events WHERE entity_type = 'job' "
            "AND entity_label = 'Machine Learning Engineer'"
        ).fetchone()[0]
        >= 1
    )


def _sensor(sid: int, config: dict | None) -> dict:
    return {"sensor_id": sid, "company_id": 1, "surface": "careers", "config": config}


def test_sensor_lineage_is_the_one_repair_recorded() -> None:
    rows = [
        _sensor(1, {"successor_id": 3, "redirect_url": "https://a.test/careers"}),
        _sensor(3, {"predecessor_id": 1, "lineage_id": 1}),
        _sensor(4, {"predecessor_id": 3, "lineage_id": 1}),
        _sensor(5, None),
    ]
    got = {r["sensor_id"]: (r["predecessor_sensor_id"], r["lineage_id"]) for r in _sensors(rows)}
    assert got == {1: (None, 1), 3: (1, 1), 4: (3, 1), 5: (None, 5)}

"""A run whose verdict is failed exits 1 and says why; report and .last_run.json agree."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from cli_harness import Catlas, assert_no_traceback, db_rows, iso, lake_rows, table_rows

from fixture_web import FixtureWeb, at_day

EXIT_RUN_FAILED = 1
DOCS = "http://orbitpay.com/docs"


def test_a_removed_page_fails_the_run_with_page_removed(
    catlas: Catlas,
    tmp_path: Path,
    hosts_file: Path,
    web: FixtureWeb,
    seed: Callable[..., int],
) -> None:
    state = tmp_path / ".catlas"
    day_12 = at_day(12)
    sensor_id = seed(
        state,
        hosts_file,
        now=day_12 - timedelta(hours=1),
        company="OrbitPay",
        website="http://orbitpay.com",
        surface="docs",
        url=DOCS,
    )
    web.set_day(12)  # orbitpay.com/docs answers 404 from day 12 on

    result = catlas.run("run-sensor", str(sensor_id), CATLAS_NOW=iso(day_12))

    assert_no_traceback(result)
    assert result.code == EXIT_RUN_FAILED, str(result)
    assert result.err == "", "a failed run is a verdict, not an error message"
    assert f"sensor {sensor_id} docs: failed" in result.out
    assert "PAGE_REMOVED" in result.out
    assert "verdict: failed" in result.out

    # What the run stored says the same: the sensor's failure, the lake's failure row.
    [(status, failure_class, failures)] = db_rows(
        state,
        f"SELECT status, last_failure_class, consecutive_failures FROM sensors WHERE id = {sensor_id}",
    )
    assert (failure_class, failures) == ("PAGE_REMOVED", 1), status
    [observation] = lake_rows(state, "observations", "outcome, http_status, failure_class")
    assert observation == {"outcome": "failed", "http_status": 404, "failure_class": "PAGE_REMOVED"}
    assert [r["failure_class"] for r in lake_rows(state, "failures", "failure_class")] == [
        "PAGE_REMOVED"
    ]

    # report's newest row and .last_run.json carry the same failed verdict.
    [row] = table_rows(catlas.ok("report").out)
    last = json.loads((state / ".last_run.json").read_text())["sensor"]
    assert (row["run"], row["kind"], row["stop"], row["outcome"]) == (
        last["run_id"],
        last["kind"],
        last["stop"],
        last["outcome"],
    )
    assert last["outcome"] == "failed"
    assert (row["claimed"], row["ok"], row["failed"], row["gaps"]) == ("1", "0", "1", "1")
    assert last["counters"]["failed"] == 1 and last["coverage_gaps"] == 1

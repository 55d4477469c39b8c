"""`catlas schedule --once --json`: the tick's verdict as one JSON object on stdout, the same
values as its `crawl_runs` row (tick_ms included), and the same exit code as without it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from cli_harness import Catlas, assert_no_traceback, assert_one_error_line, iso, state_db

from fixture_web import DEFAULT_NOW

NOW = iso(DEFAULT_NOW)
COUNTER_COLUMNS = (
    "claimed", "ok", "changed", "meaningful", "failed", "not_modified",
    "unchanged", "skipped", "redirected", "requests",
)  # fmt: skip


def _import(catlas: Catlas, tmp_path: Path, rows: str) -> None:
    csv_file = tmp_path / "sensors.csv"
    csv_file.write_text("company,surface,url\n" + rows)
    catlas.ok("sensors", "import", str(csv_file), CATLAS_NOW=NOW)


def _run_row(state: Path, run_id: str) -> dict[str, Any]:
    con = sqlite3.connect(state_db(state))
    con.row_factory = sqlite3.Row
    try:
        row = con.execute("SELECT * FROM crawl_runs WHERE id = ?", (run_id,)).fetchone()
    finally:
        con.close()
    assert row is not None, run_id
    return dict(row)


def _assert_verdict_is_the_row(verdict: dict[str, Any], row: dict[str, Any]) -> None:
    assert verdict["run_id"] == row["id"]
    for key in ("kind", "stop", "outcome", "detail", "coverage_gaps", "empty_streak"):
        assert verdict[key] == row[key], key
    assert verdict["productive"] is bool(row["productive"])
    counters = verdict["counters"]
    assert {c: counters[c] for c in COUNTER_COLUMNS} == {c: row[c] for c in COUNTER_COLUMNS}
    assert counters["tick_ms"] == row["tick_ms"] and row["tick_ms"] >= 0
    assert counters == {**json.loads(row["counters"]), "tick_ms": row["tick_ms"]}


def test_the_json_verdict_of_a_tick_equals_its_crawl_runs_row(
    catlas: Catlas, tmp_path: Path
) -> None:
    _import(
        catlas,
        tmp_path,
        "Northwind Robotics,careers,http://northwind-robotics.com/careers\n"
        "Northwind Robotics,pricing,http://northwind-robotics.com/pricing\n",
    )

    result = catlas.ok("schedule", "--once", "--json", CATLAS_NOW=NOW, CATLAS_DOMAIN_SPACING_S="0")

    lines = result.out.splitlines()
    assert len(lines) == 1, "one JSON object and nothing else on stdout"
    verdict = json.loads(lines[0])
    assert (verdict["kind"], verdict["outcome"], verdict["stop"]) == (
        "tick",
        "success",
        "queue_empty",
    )
    assert (verdict["counters"]["claimed"], verdict["counters"]["ok"]) == (2, 2)
    _assert_verdict_is_the_row(verdict, _run_row(tmp_path / ".catlas", verdict["run_id"]))


def test_a_failed_tick_prints_its_json_verdict_and_exits_1(catlas: Catlas, tmp_path: Path) -> None:
    # Not in the host map: a DNS failure, so the tick has no success and fails.
    _import(catlas, tmp_path, "Nowhere Ltd,homepage,http://not-in-the-host-map.example/\n")

    result = catlas.run("schedule", "--once", "--json", CATLAS_NOW=NOW)

    assert_no_traceback(result)
    assert result.code == 1, str(result)
    verdict = json.loads(result.out)
    assert verdict["outcome"] == "failed" and verdict["counters"]["failed"] == 1
    _assert_verdict_is_the_row(verdict, _run_row(tmp_path / ".catlas", verdict["run_id"]))


def test_json_without_once_is_a_usage_error(catlas: Catlas) -> None:
    result = catlas.run("schedule", "--json")
    assert_one_error_line(result, 2, "--json goes with --once")


def test_a_tick_in_lanes_gives_the_verdict_one_process_gives(
    catlas: Catlas, tmp_path: Path
) -> None:
    """A command's tick forks its lanes (one thread, no event loop yet): the sensors of
    three sites, dealt to two lanes, end as in one process, verdict and rows included."""
    _import(
        catlas,
        tmp_path,
        "".join(
            f"{company},{surface},http://{host}/{surface}\n"
            for company, host in (
                ("Northwind Robotics", "northwind-robotics.com"),
                ("Kestrel Labs", "kestrel-labs.com"),
                ("Swarm", "swarm-load.com"),
            )
            for surface in ("careers", "pricing", "homepage")
        ),
    )

    result = catlas.ok(
        "schedule", "--once", "--json", CATLAS_NOW=NOW, CATLAS_DOMAIN_SPACING_S="0",
        CATLAS_LANES="2", CATLAS_LANE_MIN_BATCH="1",
    )  # fmt: skip

    verdict = json.loads(result.out)
    assert verdict["counters"]["claimed"] == 9
    assert verdict["counters"]["ok"] + verdict["counters"]["failed"] == 9
    _assert_verdict_is_the_row(verdict, _run_row(tmp_path / ".catlas", verdict["run_id"]))
    state = tmp_path / ".catlas"
    con = sqlite3.connect(state_db(state))
    try:
        unclaimed = con.execute("SELECT count(*) FROM sensors WHERE claimed_by IS NULL").fetchone()
        fetched = con.execute("SELECT count(*) FROM sensors WHERE last_fetched_at IS NOT NULL")
        assert unclaimed == (9,) and fetched.fetchone() == (9,)
    finally:
        con.close()

"""A first session with catlas, command by command, in a fresh SQLite state folder."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from pathlib import Path

from cli_harness import Catlas, db_count, db_rows, iso, lake_files, lake_rows, table_rows

from fixture_web import DEFAULT_NOW
from resources.lake import Lake
from resources.storage import Storage

CAREERS = "http://northwind-robotics.com/careers"


def at(minutes: int) -> str:
    """CATLAS_NOW a few minutes into day 0: each step later than the one before."""
    return iso(DEFAULT_NOW + timedelta(minutes=minutes))


def test_first_session_from_empty_state_to_compacted_lake(catlas: Catlas, tmp_path: Path) -> None:
    state = tmp_path / ".catlas"
    assert not state.exists()

    # -- companies ---------------------------------------------------------------------
    added = catlas.ok(
        "companies", "add", "Northwind Robotics",
        "--website", "http://northwind-robotics.com", "--importance", "0.8", "--tier", "1",
        CATLAS_NOW=at(0),
    )  # fmt: skip
    assert added.out.strip() == "company 1: Northwind Robotics"
    assert (state / "state.db").is_file(), "the default state dir is .catlas in the cwd"

    [company] = table_rows(catlas.ok("companies", "list", CATLAS_NOW=at(0)).out)
    assert {k: company[k] for k in ("id", "name", "domain", "importance", "tier", "sensors")} == {
        "id": "1",
        "name": "Northwind Robotics",
        "domain": "northwind-robotics.com",
        "importance": "0.8",
        "tier": "1",
        "sensors": "0",
    }

    # -- sensors -----------------------------------------------------------------------
    declared = catlas.ok(
        "sensors", "add", "--company", "Northwind Robotics", "--surface", "careers",
        "--url", CAREERS, CATLAS_NOW=at(0),
    )  # fmt: skip
    assert declared.out.strip() == f"sensor 1: Northwind Robotics careers {CAREERS}"

    sensors = table_rows(catlas.ok("sensors", CATLAS_NOW=at(0)).out)
    assert [(s["id"], s["company"], s["surface"], s["status"], s["url"]) for s in sensors] == [
        ("1", "Northwind Robotics", "careers", "pending", CAREERS)
    ]
    assert sensors[0]["next run"] == "2026-01-05 08:00Z", "a hand-made sensor runs at once"
    pending = table_rows(catlas.ok("sensors", "--status", "pending", CATLAS_NOW=at(0)).out)
    assert [s["id"] for s in pending] == ["1"]

    # -- two runs of the sensor: a first fetch, then a conditional one ------------------
    first = catlas.ok("run-sensor", "1", CATLAS_NOW=at(1))
    assert "sensor 1 careers: ok" in first.out
    assert "verdict: success" in first.out

    second = catlas.ok("run-sensor", "1", CATLAS_NOW=at(2))
    outcome = second.out.split("sensor 1 careers: ", 1)[1].split()[0]
    assert outcome in ("not_modified", "unchanged"), second.out
    assert "verdict: success" in second.out

    # -- a scheduler tick with nothing due ----------------------------------------------
    tick = catlas.ok("schedule", "--once", CATLAS_NOW=at(3))
    assert "verdict: success" in tick.out
    assert "claimed=0" in tick.out

    # -- the lake through `catlas sql`, as JSON and as CSV -------------------------------
    query = "select surface, outcome from observations order by fetched_at"
    as_json = json.loads(catlas.ok("sql", query, "--format", "json").out)
    assert as_json == [
        {"surface": "careers", "outcome": "ok"},
        {"surface": "careers", "outcome": outcome},
    ]
    as_csv = list(csv.reader(io.StringIO(catlas.ok("sql", query, "--format", "csv").out)))
    assert as_csv == [["surface", "outcome"], ["careers", "ok"], ["careers", outcome]]

    # -- report and .last_run.json agree on the tick ------------------------------------
    report = table_rows(catlas.ok("report").out)
    assert [(r["kind"], r["outcome"]) for r in report] == [
        ("tick", "success"),
        ("sensor", "success"),
        ("sensor", "success"),
    ], "newest first"
    assert [r["ok"] for r in report] == ["0", "0", "1"]
    assert_last_run_matches(state, "tick", report[0], started=DEFAULT_NOW + timedelta(minutes=3))
    assert_last_run_matches(state, "sensor", report[1], started=DEFAULT_NOW + timedelta(minutes=2))

    # -- the schema: upgrading a current database changes nothing -----------------------
    companies_before = db_rows(state, "SELECT * FROM companies")
    upgraded = catlas.ok("db", "upgrade")
    head = upgraded.out.split("schema at ", 1)[1].split()[0]
    assert upgraded.out.strip() == f"schema at {head} (was {head})"
    assert catlas.ok("db", "current").out.strip() == f"current: {head}  head: {head}"
    assert db_rows(state, "SELECT * FROM companies") == companies_before
    assert db_count(state, "sensors") == 1

    # -- compaction: one file per hour partition, no row lost ----------------------------
    before = [k for k in lake_files(state) if k.startswith("observations/")]
    assert len(before) == 2, before
    compacted = catlas.ok("compact")
    assert "compacted" in compacted.out
    # one sensor, its two observations' files (the one compacted file is new to the table)
    assert "latest_observations: 1 sensor(s), 1 new file(s) folded in" in compacted.out
    # the merged inputs stay on disk, hidden, for readers that listed them before
    after = Lake(Storage(str(state / "lake"))).files("observations")
    assert len(after) == 1 and "/compacted-" in after[0], after
    assert sorted(r["outcome"] for r in lake_rows(state, "observations", "outcome")) == sorted(
        ["ok", outcome]
    )


def assert_last_run_matches(
    state: Path, kind: str, row: dict[str, str], *, started: datetime
) -> None:
    """`.last_run.json` mirrors the run `catlas report` shows for that kind."""
    last = json.loads((state / ".last_run.json").read_text())[kind]
    assert last["run_id"] == row["run"]
    assert last["kind"] == row["kind"] == kind
    assert last["stop"] == row["stop"] == "queue_empty"
    assert last["outcome"] == row["outcome"]
    assert last["started_at"] == started.isoformat()
    assert row["started"] == f"{started:%Y-%m-%d %H:%M}Z"
    for counter in ("claimed", "ok", "changed", "failed"):
        assert str(last["counters"][counter]) == row[counter], counter
    assert str(last["coverage_gaps"]) == row["gaps"]
    assert str(last["empty_streak"]) == row["streak"]

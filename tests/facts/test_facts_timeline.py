"""The extraction timeline, lived day by day on the fixture web: changes, deltas, entities.

Each sensor of `fixtures/facts_timeline.toml` runs once a day over days 0-16 against the
real fixture server; the lake is read back with DuckDB. One living per backend.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import dagster as dg
import psycopg
import pytest
from facts_timeline import ORDER, Lived, expected_by_sensor_day, live_through
from sqlalchemy.engine import make_url

from catlas_assets.defs import entities as entities_asset
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.domain.extract.extraction import EXTRACTOR_VERSION
from catlas_assets.domain.observe import extract
from catlas_assets.domain.pipeline_data import Fetched
from catlas_assets.services.entities import derive_entities
from catlas_assets.services.pipeline import sensor_state
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW
from resources.clock import VirtualClock

MEANINGFUL = ORDER.index("meaningful")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def lived(request: pytest.FixtureRequest, tmp_path_factory, web_server) -> Iterator[Lived]:
    """One living per backend, shared by this module's tests (it takes a minute)."""
    tmp = tmp_path_factory.mktemp("facts")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'state.db'}"
    else:
        url = request.getfixturevalue("postgres_database")
        with psycopg.connect(
            make_url(url).set(drivername="postgresql").render_as_string(hide_password=False),
            autocommit=True,
        ) as conn:
            conn.execute("DROP SCHEMA public CASCADE")
            conn.execute("CREATE SCHEMA public")
    settings = Settings(
        state_dir=str(tmp / "state"),
        database_url=url,
        hosts=str(web_server.write_hosts_file(tmp / "hosts")),
        fetch_retries=0,
        # Spacing is real seconds per request: politeness has its own tests.
        domain_spacing_s=0.0,
    )
    runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))
    try:
        yield live_through(runtime, web_server)
    finally:
        runtime.close()
        web_server.set_now(DEFAULT_NOW)


def _changes(lived: Lived) -> dict[tuple[str, int], dict[str, Any]]:
    rows = lived.query(
        "SELECT sensor_id, detected_at, kind, status, summary, structured_delta FROM changes"
    )
    out = {}
    for row in rows:
        day = (row["detected_at"].date() - planted_epoch()).days
        key = (lived.url_of(row["sensor_id"]), day)
        assert key not in out, f"two changes for {key}"
        out[key] = {**row, "structured_delta": json.loads(row["structured_delta"])}
    return out


def planted_epoch():
    from fixture_web import EPOCH

    return EPOCH.date()


def _names(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["name"] for i in items)


def test_the_timeline_yields_exactly_the_planted_changes_kinds_and_deltas(lived: Lived) -> None:
    changes = _changes(lived)
    expected = {k: e for k, e in expected_by_sensor_day().items() if e["expect"] != "noise"}
    assert sorted(changes) == sorted(expected)
    for key, entry in expected.items():
        change = changes[key]
        delta = change["structured_delta"]
        assert change["kind"] == entry["kind"], (key, change["summary"])
        assert change["status"] == (
            "pending" if ORDER.index(entry["kind"]) >= MEANINGFUL else "archived"
        )
        added = [i for items in delta["added"].values() for i in items]
        removed = [i for items in delta["removed"].values() for i in items]
        updated = [u for items in delta["updated"].values() for u in items]
        assert _names(added) == sorted(entry.get("added", [])), key
        assert _names(removed) == sorted(entry.get("removed", [])), key
        assert _names(updated) == sorted(entry.get("updated", [])), key
        if "indicator" in entry:
            assert delta["status"]["indicator"][1] == entry["indicator"]


def test_typed_deltas_and_summaries_read_like_an_analyst_would_say_them(lived: Lived) -> None:
    changes = _changes(lived)
    pricing = changes["http://kestrel-labs.com/pricing", 4]
    [update] = pricing["structured_delta"]["updated"]["pricing_plan"]
    assert update["changes"]["price"] == [29.0, 35.0]
    assert update["changes"]["prices"] == [
        {"annual": 290.0, "monthly": 29.0},
        {"annual": 350.0, "monthly": 35.0},
    ]
    assert pricing["summary"] == "Team: $29 → $35 per month"
    posted = changes["http://boards-api.greenhouse.io/v1/boards/kestrel/jobs", 2]["summary"]
    assert (
        posted
        == "2 jobs posted: Staff Data Engineer (Berlin, Germany), Support Engineer (Lisbon, Portugal)"
    )
    salary = changes["http://api.lever.co/v0/postings/larkspur?mode=json", 9]["structured_delta"]
    [job_update] = salary["updated"]["job"]
    assert job_update["changes"]["compensation"][1]["min"] == 140000.0
    outage = changes["http://status.kestrel-labs.com/api/v2/summary.json", 13]
    assert outage["structured_delta"]["status"]["indicator"] == ["none", "critical"]
    assert outage["summary"].startswith("status critical (was none)")


def test_noise_only_days_write_no_change_and_no_snapshot(lived: Lived) -> None:
    noise = {k for k, e in expected_by_sensor_day().items() if e["expect"] == "noise"}
    assert len(noise) >= 15
    changes = _changes(lived)
    snapshots = lived.query("SELECT sensor_id, captured_at FROM snapshots")
    snapshot_days = {
        (lived.url_of(r["sensor_id"]), (r["captured_at"].date() - planted_epoch()).days)
        for r in snapshots
    }
    for key in noise:
        assert key not in changes
        assert key not in snapshot_days
        assert lived.outcomes[key] == "unchanged"
    # Masked noise (Workday's relative dates) hashes the same: plain unchanged. Noise that
    # moved the hash (reordered plans, tracking parameters, rotating blocks) is flagged.
    flagged = {
        (lived.url_of(r["sensor_id"]), (r["fetched_at"].date() - planted_epoch()).days)
        for r in lived.query("SELECT sensor_id, fetched_at FROM observations WHERE noise")
    }
    assert flagged and flagged <= noise
    assert ("http://kestrel-labs.com/pricing", 7) in flagged


def test_the_degradation_day_removes_nothing_and_leaves_a_note(lived: Lived) -> None:
    changes = _changes(lived)
    degraded = changes["http://kestrel-labs.com/careers", 12]
    delta = degraded["structured_delta"]
    assert degraded["kind"] == "minor" and degraded["status"] == "archived"
    assert delta["removed"] == {} and delta["added"] == {}
    assert any("parse-degradation guard" in note for note in delta["notes"])
    assert degraded["summary"].startswith("note: parse-degradation guard")
    careers = lived.sensor_ids["http://kestrel-labs.com/careers"]
    gone = lived.query(
        "SELECT entity_key, observed_at FROM entity_events "
        f"WHERE sensor_id = {careers} AND event = 'no_longer_listed'"
    )
    # Only the Recruiter, on day 14; the recovery on day 13 is not a re-posting either.
    assert [(r["observed_at"].date() - planted_epoch()).days for r in gone] == [14]
    added = lived.query(
        f"SELECT count(*) AS n FROM entity_events WHERE sensor_id = {careers} AND event = 'added'"
    )
    assert added[0]["n"] == 12


def test_entity_events_follow_each_entity_through_the_timeline(lived: Lived) -> None:
    rows = lived.query(
        "SELECT sensor_id, entity_type, entity_key, event, observed_at, attributes "
        "FROM entity_events ORDER BY observed_at"
    )

    def events(url: str, entity_type: str) -> list[tuple[int, str, str]]:
        # Events of one instant have no order of their own: compare them sorted.
        sid = lived.sensor_ids[url]
        return sorted(
            (
                (r["observed_at"].date() - planted_epoch()).days,
                r["event"],
                json.loads(r["attributes"]).get("title") or json.loads(r["attributes"]).get("name"),
            )
            for r in rows
            if r["sensor_id"] == sid and r["entity_type"] == entity_type and r["event"] != "seen"
        )

    assert events("http://kestrel-labs.com/pricing", "pricing_plan") == [
        (0, "added", "Business"), (0, "added", "Starter"), (0, "added", "Team"),
        (4, "superseded", "Team"), (4, "updated", "Team"),
        (11, "added", "Scale"),
    ]  # fmt: skip
    assert events("http://status.kestrel-labs.com/api/v2/summary.json", "incident") == [
        (5, "added", "Slow exports"), (6, "removed", "Slow exports"),
        (13, "added", "API unavailable"), (14, "removed", "API unavailable"),
    ]  # fmt: skip
    assert events("http://api.ashbyhq.com/posting-api/job-board/heron", "job") == [
        (0, "added", "Founding Designer"), (0, "added", "ML Engineer"),
        (4, "no_longer_listed", "Founding Designer"),
    ]  # fmt: skip
    news = events("http://kestrel-labs.com/news", "news")
    # Tracking parameters on day 3 did not make the same items look new.
    assert [e for e in news if e[0] > 0] == [(8, "added", "Introducing Audit Copilot")]
    seen = [r for r in rows if r["event"] == "seen"]
    assert seen, "unchanged entities of a changed snapshot refresh their last_seen_at"


def test_precision_and_recall_of_meaningful_or_above_changes(lived: Lived) -> None:
    truth = {
        k
        for k, e in expected_by_sensor_day().items()
        if e["expect"] != "noise" and ORDER.index(e["kind"]) >= MEANINGFUL
    }
    found = {k for k, c in _changes(lived).items() if ORDER.index(c["kind"]) >= MEANINGFUL}
    hits = len(truth & found)
    precision = hits / len(found) if found else 0.0
    recall = hits / len(truth) if truth else 0.0
    print(
        f"meaningful-or-above: precision {precision:.3f}, recall {recall:.3f} ({hits}/{len(truth)})"
    )
    assert precision >= 0.95 and recall >= 0.95


def test_reprocessing_stored_raw_bytes_gives_byte_identical_extraction(lived: Lived) -> None:
    rows = lived.query(
        "SELECT s.sensor_id, s.captured_at, s.object_key, s.extraction_key, s.extractor_version, "
        "s.extracted_summary, o.final_url FROM snapshots s JOIN observations o USING (observation_id)"
    )
    assert len(rows) > 30
    sensors = {r["id"]: r for r in lived.runtime.store.list_sensors()}
    for row in rows:
        sensor = sensor_state(sensors[row["sensor_id"]])
        raw = lived.runtime.archive.get(row["object_key"])
        fetched = Fetched(row["final_url"], row["final_url"], 200, {}, raw, 0, 1)
        _, first = extract(sensor, fetched, row["captured_at"])
        _, again = extract(sensor, fetched, row["captured_at"])
        assert row["extractor_version"] == EXTRACTOR_VERSION
        assert first.to_json() == again.to_json()
        stored = lived.runtime.archive.get(row["extraction_key"])
        url = lived.url_of(row["sensor_id"])
        day = (row["captured_at"].date() - planted_epoch()).days
        # The archived set is what the sensor carries forward; on the degradation day it
        # also holds the entities the guard kept, so only there it differs from the parse.
        if (url, day) != ("http://kestrel-labs.com/careers", 12):
            assert first.to_json() == stored, url


def test_the_daily_entities_asset_derives_scd2_versions_from_entity_events(lived: Lived) -> None:
    settings = lived.runtime.settings
    resource = CatlasResource(
        state_dir=settings.state_dir,
        database_url=settings.database_url,
        lake_url="",
        hosts=settings.hosts,
    )
    result = dg.materialize(
        [entities_asset.entities], resources={"catlas": resource}, partition_key="2026-01-21"
    )
    assert result.success
    rows = lived.query(
        "SELECT sensor_id, entity_type, entity_key, version, valid_from, valid_to, removed_at, "
        "status, is_current, attributes FROM entities"
    )
    pricing = lived.sensor_ids["http://kestrel-labs.com/pricing"]
    team = sorted(
        (r for r in rows if r["sensor_id"] == pricing and r["entity_key"] == "team"),
        key=lambda r: r["version"],
    )
    assert [json.loads(r["attributes"])["price"] for r in team] == [29.0, 35.0]
    assert team[0]["valid_to"] == team[1]["valid_from"] and team[1]["valid_to"] is None
    assert [r["is_current"] for r in team] == [False, True]
    careers = lived.sensor_ids["http://kestrel-labs.com/careers"]
    recruiter = [
        r
        for r in rows
        if r["sensor_id"] == careers and json.loads(r["attributes"])["title"] == "Recruiter"
    ]
    [version] = recruiter
    assert version["status"] == "removed"
    assert (version["removed_at"].date() - planted_epoch()).days == 14
    # Deriving again replaces the table instead of adding to it.
    derive_entities(lived.runtime)
    assert lived.query("SELECT count(*) AS n FROM entities")[0]["n"] == len(rows)

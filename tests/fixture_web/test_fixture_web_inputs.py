"""The demo inputs next to the fixture web: companies, sensors and the timeline truth file."""

from __future__ import annotations

import csv
import tomllib
from urllib.parse import urlsplit

from fixture_web import FixtureWeb, default_root

FIXTURES = default_root().parent
SURFACES = {
    "homepage",
    "careers",
    "jobs_board",
    "pricing",
    "blog",
    "newsroom",
    "feed",
    "docs",
    "developer",
    "status",
    "investors",
    "people",
    "products",
    "locations",
}


def companies() -> dict[str, dict[str, str]]:
    with (FIXTURES / "companies.csv").open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        assert reader.fieldnames == ["name", "website", "importance", "tier"]
        return {row["name"]: row for row in reader}


def test_companies_have_valid_importance_and_tier(web: FixtureWeb) -> None:
    rows = companies()
    assert set(rows) == {"Northwind Robotics", "Bluefin Analytics", "Orbit Pay", "Tidewater Supply"}
    for row in rows.values():
        assert 0 <= float(row["importance"]) <= 1
        assert int(row["tier"]) in {1, 2, 3, 4}
        assert urlsplit(row["website"]).hostname in web.hosts


def test_timeline_entries_use_the_vocabulary(web: FixtureWeb) -> None:
    entries = tomllib.loads((default_root() / "timeline.toml").read_text())["change"]
    assert len(entries) == 12
    names = set(companies())
    for entry in entries:
        assert {"host", "path", "day", "company", "surface", "what", "expect"} <= set(entry)
        assert entry["host"] in web.hosts
        assert entry["company"] in names
        assert entry["surface"] in SURFACES
        assert entry["expect"] in {"change", "redirect", "removed"}
    kinds = {(e["host"], e["path"]): e["expect"] for e in entries}
    assert kinds["bluefin-analytics.io", "/careers"] == "redirect"
    assert kinds["orbitpay.com", "/docs"] == "removed"


def test_sensors_name_known_companies_and_answer_on_day_0(client) -> None:
    sensors = tomllib.loads((FIXTURES / "sensors.toml").read_text())["sensor"]
    names = set(companies())
    surfaces = {(s["company"], s["surface"]) for s in sensors}
    assert len(surfaces) == len(sensors) == 14
    for sensor in sensors:
        assert sensor["company"] in names
        assert sensor["surface"] in SURFACES
        url = urlsplit(sensor["url"])
        assert url.scheme == "http"
        response = client.get(url.hostname, url.path or "/")
        assert response.status_code == 200, sensor["url"]

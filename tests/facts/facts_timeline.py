"""Living through the extraction timeline (fixtures/facts_timeline.toml) on the fixture web."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from fixture_web import FixtureWeb, at_day
from resources.clock import VirtualClock

TIMELINE = Path(__file__).resolve().parents[2] / "fixtures" / "facts_timeline.toml"
LAST_DAY = 16
ORDER = ("noise", "minor", "meaningful", "major", "critical")

# Every sensor of the timeline: (company, surface, connector, url).
SENSORS = (
    ("Kestrel Labs", "homepage", "generic_html", "http://kestrel-labs.com/"),
    ("Kestrel Labs", "pricing", "generic_html", "http://kestrel-labs.com/pricing"),
    ("Kestrel Labs", "newsroom", "generic_html", "http://kestrel-labs.com/news"),
    ("Kestrel Labs", "feed", "feed", "http://kestrel-labs.com/news.rss"),
    ("Kestrel Labs", "people", "generic_html", "http://kestrel-labs.com/team"),
    ("Kestrel Labs", "careers", "generic_html", "http://kestrel-labs.com/careers"),
    ("Kestrel Labs", "status", "statuspage", "http://status.kestrel-labs.com/api/v2/summary.json"),
    (
        "Kestrel Labs",
        "jobs_board",
        "greenhouse",
        "http://boards-api.greenhouse.io/v1/boards/kestrel/jobs",
    ),
    (
        "Larkspur Health",
        "jobs_board",
        "lever",
        "http://api.lever.co/v0/postings/larkspur?mode=json",
    ),
    ("Heron Robotics", "jobs_board", "ashby", "http://api.ashbyhq.com/posting-api/job-board/heron"),
    (
        "Osprey Freight",
        "jobs_board",
        "workable",
        "http://apply.workable.com/api/v1/widget/accounts/osprey",
    ),
    (
        "Wren Mobility",
        "jobs_board",
        "workday",
        "http://wren.wd1.myworkdayjobs.com/wday/cxs/wren/External/jobs",
    ),
    ("Swift Parcel", "jobs_board", "recruitee", "http://swift.recruitee.com/api/offers/"),
    ("Plover Energy", "jobs_board", "personio", "http://plover.jobs.personio.de/xml"),
    ("Finch Games", "jobs_board", "teamtailor", "http://finch.teamtailor.com/jobs.rss"),
    (
        "Tern Retail",
        "jobs_board",
        "smartrecruiters",
        "http://api.smartrecruiters.com/v1/companies/Tern/postings",
    ),
)


def planted() -> list[dict[str, Any]]:
    return tomllib.loads(TIMELINE.read_text())["change"]


def expected_by_sensor_day() -> dict[tuple[str, int], dict[str, Any]]:
    """One expectation per (sensor URL, day): the strongest entry planted for it."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for entry in planted():
        key = (entry["sensor_url"], entry["day"])
        rank = -1 if entry["expect"] == "noise" else ORDER.index(entry["kind"])
        if key not in out or rank > out[key]["_rank"]:
            out[key] = {**entry, "_rank": rank}
    return out


@dataclass
class Lived:
    runtime: Runtime
    sensor_ids: dict[str, int] = field(default_factory=dict)  # url -> id
    outcomes: dict[tuple[str, int], str] = field(default_factory=dict)

    def url_of(self, sensor_id: int) -> str:
        return {v: k for k, v in self.sensor_ids.items()}[sensor_id]

    def query(self, sql: str) -> list[dict[str, Any]]:
        con = self.runtime.lake.connect()
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def live_through(runtime: Runtime, web: FixtureWeb, days: int = LAST_DAY) -> Lived:
    """Register the timeline's sensors and run each once a day, days 0..`days`."""
    lived = Lived(runtime)
    companies: dict[str, int] = {}
    for company, surface, connector, url in SENSORS:
        if company not in companies:
            companies[company] = catalog.add_company(runtime, name=company, website=None)
        lived.sensor_ids[url] = catalog.add_sensor(
            runtime, company_id=companies[company], surface=surface, url=url, connector=connector
        )
    clock = runtime.clock
    assert isinstance(clock, VirtualClock)
    for day in range(days + 1):
        moment = at_day(day) + timedelta(hours=1)
        clock.set(moment)
        web.set_now(moment)
        for url, sensor_id in lived.sensor_ids.items():
            result, _report = run_one(runtime, sensor_id, force=True)
            lived.outcomes[url, day] = result.outcome.value
            clock.set(clock.now() + timedelta(minutes=1))
            web.set_now(clock.now())
    return lived

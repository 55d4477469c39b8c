"""Workday through the whole pipeline: the list is asked by POST, page after page.

The fixture server's request log is the witness of the method and the bodies sent; the
archived raw object is replayed to show that reprocessing reproduces the extraction.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from catlas_assets.domain.connectors.base import BUNDLE_MAGIC
from catlas_assets.domain.observe import extract
from catlas_assets.domain.pipeline_data import Fetched
from catlas_assets.services import catalog
from catlas_assets.services.pipeline import sensor_state
from catlas_assets.services.sensor_run import run_one
from fixture_web import at_day

HOST = "wren.wd1.myworkdayjobs.com"
JOBS = "/wday/cxs/wren/External/jobs"
URL = f"http://{HOST}{JOBS}"


def _body(offset: int) -> dict[str, Any]:
    return {"appliedFacets": {}, "limit": 20, "offset": offset, "searchText": ""}


def _at(sim, day: int) -> None:
    moment = at_day(day) + timedelta(hours=2)
    sim.clock.set(moment)
    sim.web.set_now(moment)


def _list_requests(sim) -> list[tuple[str, str, Any]]:
    return [
        (r.method, r.path, json.loads(r.request_body) if r.request_body else None)
        for r in sim.web.requests
        if r.host == HOST and r.path != "/robots.txt"
    ]


def _snapshots(sim) -> list[dict[str, Any]]:
    cursor = (
        sim.runtime.lake.connect()
        .execute(
            "SELECT s.sensor_id, s.captured_at, s.object_key, s.extraction_key, "
            "s.extracted_summary, o.final_url FROM snapshots s "
            "JOIN observations o USING (observation_id) ORDER BY s.captured_at"
        )
        .fetchall()
    )
    names = ("sensor_id", "captured_at", "object_key", "extraction_key", "summary", "final_url")
    return [dict(zip(names, row, strict=True)) for row in cursor]


def test_workday_boards_are_paged_by_post_bodies_and_replay_from_the_archive(sim) -> None:
    runtime = sim.runtime
    company = catalog.add_company(runtime, name="Wren Mobility", website=None)
    sensor_id = catalog.add_sensor(
        runtime, company_id=company, surface="jobs_board", url=URL, connector="workday"
    )
    _at(sim, 7)
    result, _ = run_one(runtime, sensor_id, force=True)
    assert result.failure_class is None, result.summary

    # Two pages of 20 + 4 postings, each asked by POST with Workday's body; never a GET.
    requests = _list_requests(sim)
    assert requests == [("POST", JOBS, _body(0)), ("POST", JOBS, _body(20))]
    posts = [r for r in sim.web.requests if r.method == "POST"]
    assert all(r.if_none_match is None and r.if_modified_since is None for r in posts)

    [snapshot] = _snapshots(sim)
    assert json.loads(snapshot["summary"])["job"] == 24

    # The archived raw object is the bundle of both pages, each with the body it was asked by.
    raw = runtime.archive.get(snapshot["object_key"])
    assert raw.startswith(BUNDLE_MAGIC)
    pages = json.loads(raw[len(BUNDLE_MAGIC) :])
    assert [(p["method"], p["json_body"]) for p in pages] == [
        ("POST", _body(0)),
        ("POST", _body(20)),
    ]

    # Reprocessing those bytes reproduces the stored extraction exactly.
    sensor = sensor_state(runtime.store.sensor(sensor_id))
    fetched = Fetched(snapshot["final_url"], snapshot["final_url"], 200, {}, raw, 0, 1)
    _, replayed = extract(sensor, fetched, snapshot["captured_at"])
    assert replayed.to_json() == runtime.archive.get(snapshot["extraction_key"])
    titles = {j["title"] for j in replayed.canonical().entities["job"]}
    assert "Site Reliability Engineer" in titles and len(titles) == 24

    # The next day asks both pages again, by POST and without validators.
    sim.web.clear_requests()
    _at(sim, 8)
    result, _ = run_one(runtime, sensor_id, force=False)
    assert result.failure_class is None, result.summary
    assert _list_requests(sim) == [("POST", JOBS, _body(0)), ("POST", JOBS, _body(20))]

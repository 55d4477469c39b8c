"""Job attribute changes ranked by materiality: title, location, department, employment
type and pay are changes; a posting date, `updated_at`, a counter or a sort position are not."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from catlas_assets.domain.connectors.base import Page
from catlas_assets.domain.connectors.workday import Workday
from catlas_assets.domain.extract.extraction import Extraction, job
from catlas_assets.domain.materiality import material
from catlas_assets.domain.reconcile import reconcile
from catlas_assets.domain.significance import compare
from catlas_assets.domain.structured_delta import empty_delta, has_typed_change
from catlas_assets.domain.taxonomy import change_kind
from catlas_assets.domain.vocabulary import ChangeKind

THRESHOLDS = {
    "minor_threshold": 0.02,
    "meaningful_threshold": 0.10,
    "major_threshold": 0.45,
    "critical_threshold": 0.8,
}


def board(**overrides: Any) -> Extraction:
    out = Extraction("greenhouse", "jobs_board", structured=True)
    values: dict[str, Any] = {
        "vendor": "greenhouse",
        "vendor_id": 4012,
        "title": "Data Engineer",
        "department": "Platform",
        "locations": ["Lisbon"],
        "employment_type": "Full-time",
        "url": "https://boards.example/jobs/4012",
        "posted_at": "2026-02-01",
        "updated_at": "2026-02-03T10:00:00Z",
        "requisition_id": "REQ-1",
    }
    values.update(overrides)
    out.add("job", job(**values))
    return out


def kind_of(previous: Extraction, new: Extraction) -> tuple[ChangeKind, Any]:
    rec = reconcile(previous, new)
    delta = empty_delta()
    delta["updated"] = rec.updated
    significance = compare([], [], "jobs_board", structured_delta=delta).significance
    return change_kind(significance, **THRESHOLDS), rec


def test_updated_at_churn_alone_is_no_change_and_no_entity_event() -> None:
    kind, rec = kind_of(board(), board(updated_at="2026-02-09T16:42:11Z"))
    assert rec.updated == {}
    assert [e["event"] for e in rec.events] == ["seen"]
    assert kind is not ChangeKind.MEANINGFUL and kind is not ChangeKind.MAJOR


def test_a_new_posting_date_url_or_requisition_alone_is_not_material() -> None:
    moved = board(
        posted_at="2026-02-02", url="https://boards.example/jobs/4012?gh_src=x", requisition_id="R2"
    )
    _, rec = kind_of(board(), moved)
    assert rec.updated == {} and [e["event"] for e in rec.events] == ["seen"]


def test_title_location_department_employment_type_and_pay_are_material() -> None:
    for change in (
        {"title": "Senior Data Engineer"},
        {"locations": ["Lisbon", "Porto"]},
        {"department": "Analytics"},
        {"employment_type": "Part-time"},
        {"compensation": {"min": 50000, "max": 60000, "currency": "EUR", "interval": "YEAR"}},
    ):
        kind, rec = kind_of(board(), board(**change, updated_at="2026-02-10T00:00:00Z"))
        [update] = rec.updated["job"]
        # Only the material field is reported; updated_at moved too but is not news.
        assert set(update["changes"]) == {next(iter(change))}, change
        assert kind is ChangeKind.MEANINGFUL, change


def test_counters_and_sort_positions_are_not_material_for_any_entity() -> None:
    assert not material("news", "position") and not material("product", "view_count")
    assert not material("incident", "updated_at")
    assert material("news", "title") and material("pricing_plan", "price")
    assert not material("job", "posted_at") and material("job", "title")


def _workday_page(posted_on: str) -> Page:
    body = {
        "total": 1,
        "jobPostings": [
            {
                "title": "Warehouse Lead",
                "externalPath": "/job/Rotterdam/Warehouse-Lead_R-77",
                "locationsText": "Rotterdam",
                "postedOn": posted_on,
                "bulletFields": ["R-77"],
            }
        ],
    }
    return Page(
        "https://tenant.wd3.myworkdayjobs.com/wday/cxs/tenant/Careers/jobs",
        json.dumps(body).encode(),
        method="POST",
        json_body={"offset": 0},
    )


def test_workday_posted_on_rolling_over_each_day_raises_nothing() -> None:
    wd = Workday()
    start = datetime(2026, 2, 10, 7, 0, tzinfo=UTC)
    days = ["Posted Today", "Posted Yesterday", "Posted 2 Days Ago", "Posted 30+ Days Ago"]
    extractions = [
        wd.parse([_workday_page(text)], "jobs_board", start + timedelta(days=min(i, 3) * 1))
        for i, text in enumerate(days)
    ]
    dates = [e.entities["job"][0]["posted_at"] for e in extractions]
    assert dates[:3] == ["2026-02-10"] * 3 and dates[3] is None
    for before, after in itertools.pairwise(extractions):
        rec = reconcile(before, after)
        delta = empty_delta()
        delta["updated"] = rec.updated
        assert not has_typed_change(delta)
        assert [e["event"] for e in rec.events] == ["seen"]


def test_a_posting_date_re_resolved_within_a_day_or_gone_open_keeps_the_earlier_date() -> None:
    first = board(posted_at="2026-02-10")
    for later in ("2026-02-11", "2026-02-09", None):
        rec = reconcile(first, board(posted_at=later))
        assert rec.current is not None
        assert rec.current.entities["job"][0]["posted_at"] == "2026-02-10", later
        assert rec.events[0]["attributes"]["posted_at"] == "2026-02-10"
    # A posting date a week away is a real re-post date: kept as the board says (and
    # still not material).
    moved = reconcile(first, board(posted_at="2026-02-17"))
    assert moved.current is not None
    assert moved.current.entities["job"][0]["posted_at"] == "2026-02-17"
    assert moved.updated == {}

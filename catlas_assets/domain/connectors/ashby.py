"""Ashby public Job Posting API: `api.ashbyhq.com/posting-api/job-board/{board}`.

Envelope `{"apiVersion": "...", "jobs": [...]}`; no pagination; unlisted jobs are skipped.
"""

from __future__ import annotations

from datetime import datetime

from catlas_assets.domain.connectors.base import (
    Connector,
    Page,
    ats_extraction,
    number,
    records,
    text,
    with_query,
)
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, has_envelope, patterns
from catlas_assets.domain.extract.extraction import Extraction, compensation, job

ENVELOPE = "jobs"


class Ashby(Connector):
    name = "ashby"
    kind = "ats"
    description = "Ashby Job Posting API (includeCompensation=true)"
    board_links = BoardLinks(
        patterns(
            rf"^jobs\.ashbyhq\.com/(?P<token>{TOKEN})",
            rf"^api\.ashbyhq\.com/posting-api/job-board/(?P<token>{TOKEN})",
        ),
        lambda s, g: f"{s}://api.ashbyhq.com/posting-api/job-board/{g['token']}",
        lambda body: has_envelope(body, ENVELOPE),
    )

    def first_url(self, url: str) -> str:
        return with_query(url, includeCompensation="true")

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for item in records(pages, self.name, ENVELOPE, "job", "id", "title"):
            if item.get("isListed") is False:
                continue
            secondary = [
                text(s.get("location"))
                for s in item.get("secondaryLocations") or []
                if isinstance(s, dict)
            ]
            salary = next(
                (
                    c
                    for c in (item.get("compensation") or {}).get("summaryComponents") or []
                    if isinstance(c, dict) and c.get("compensationType") == "Salary"
                ),
                {},
            )
            out.add(
                "job",
                job(
                    vendor=self.name,
                    vendor_id=item["id"],
                    title=item["title"],
                    department=text(item.get("department")),
                    team=text(item.get("team")),
                    locations=[loc for loc in [text(item.get("location")), *secondary] if loc],
                    remote=item.get("isRemote"),
                    workplace_type=text(item.get("workplaceType")),
                    employment_type=text(item.get("employmentType")),
                    url=item.get("jobUrl"),
                    posted_at=item.get("publishedAt"),
                    updated_at=item.get("updatedAt"),
                    compensation=compensation(
                        number(salary.get("minValue")),
                        number(salary.get("maxValue")),
                        salary.get("currencyCode"),
                        salary.get("interval"),
                    ),
                ),
            )
        return out

"""Workday CXS list endpoint: `{tenant}.wdN.myworkdayjobs.com/wday/cxs/{tenant}/{site}/jobs`.

Workday itself wants a POST with `{"appliedFacets": {}, "limit": 20, "offset": N,
"searchText": ""}`. catlas's fetcher sends GET requests only, so this connector models the
list request as `GET .../jobs?limit=20&offset=N` (the same two paging parameters; the
fixture web answers it). Pages hold at most 20 postings; `total` says when to stop.
`postedOn` is relative text ("Posted 3 Days Ago"), turned into a date relative to the
fetch time `now`, so that the same posting keeps the same date from day to day.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from catlas_assets.domain.connectors.base import (
    Connector,
    Page,
    ats_extraction,
    load_json,
    query_int,
    require,
    text,
    with_query,
)
from catlas_assets.domain.extract.models import Extraction, job

PAGE_SIZE = 20  # Workday's hard cap per page
_DAYS_AGO = re.compile(r"posted\s+(\d+)\+?\s+days?\s+ago", re.I)


def posted_date(posted_on: str | None, now: datetime) -> str | None:
    """ "Posted Today" / "Posted Yesterday" / "Posted 3 Days Ago" -> an ISO date; 30+ stays open."""
    if not posted_on:
        return None
    lowered = posted_on.strip().lower()
    if "30+" in lowered:
        return None  # only "more than a month ago": no date is better than a wrong one
    if "today" in lowered:
        days = 0
    elif "yesterday" in lowered:
        days = 1
    else:
        match = _DAYS_AGO.search(lowered)
        if match is None:
            return None
        days = int(match.group(1))
    return (now - timedelta(days=days)).date().isoformat()


class Workday(Connector):
    name = "workday"
    kind = "ats"
    description = "Workday CXS job list (offset/limit 20, relative posted dates)"

    def first_url(self, url: str) -> str:
        return with_query(url, limit=PAGE_SIZE, offset=0)

    def next_url(self, page: Page, index: int) -> str | None:
        data = load_json(page, self.name)
        if not isinstance(data, dict):
            return None
        offset = query_int(page.url, "offset", 0)
        got = len(data.get("jobPostings") or [])
        total = data.get("total")
        if got == 0 or not isinstance(total, int) or offset + got >= total:
            return None
        return with_query(page.url, offset=offset + got)

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for page in pages:
            data = load_json(page, self.name)
            require(
                isinstance(data, dict) and isinstance(data.get("jobPostings"), list),
                self.name,
                "jobPostings list",
            )
            parts = urlsplit(page.url)
            segments = parts.path.split("/")
            site = segments[4] if len(segments) > 4 else ""
            for item in data["jobPostings"]:
                require(
                    isinstance(item, dict) and "title" in item and "externalPath" in item,
                    self.name,
                    "posting title/externalPath",
                )
                path = item["externalPath"]
                bullets = [b for b in item.get("bulletFields") or [] if isinstance(b, str)]
                requisition = bullets[0] if bullets else path.rsplit("_", 1)[-1]
                remote_type = text(item.get("remoteType"))
                out.add(
                    "job",
                    job(
                        vendor=self.name,
                        vendor_id=path,
                        title=item["title"],
                        locations=[item["locationsText"]] if item.get("locationsText") else [],
                        remote=("remote" in remote_type.lower()) if remote_type else None,
                        workplace_type=remote_type,
                        employment_type=text(item.get("timeType")),
                        url=f"{parts.scheme}://{parts.netloc}/{site}{path}",
                        posted_at=posted_date(item.get("postedOn"), now),
                        requisition_id=requisition,
                    ),
                )
        return out

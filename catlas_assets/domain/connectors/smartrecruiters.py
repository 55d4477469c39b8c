"""SmartRecruiters Posting API: `api.smartrecruiters.com/v1/companies/{id}/postings`.

Envelope `{"offset", "limit", "totalFound", "content": [...]}`; paginated by offset/limit
(at most 100 per page) until `totalFound` postings were read.
"""

from __future__ import annotations

from datetime import datetime

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
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, has_envelope, patterns
from catlas_assets.domain.extract.extraction import Extraction, job

PAGE_SIZE = 100
ENVELOPE = "content"


class SmartRecruiters(Connector):
    name = "smartrecruiters"
    kind = "ats"
    description = "SmartRecruiters Posting API (offset/limit pagination)"
    board_links = BoardLinks(
        patterns(
            rf"^(?:jobs|careers)\.smartrecruiters\.com/(?P<token>{TOKEN})",
            rf"^api\.smartrecruiters\.com/v1/companies/(?P<token>{TOKEN})",
        ),
        lambda s, g: f"{s}://api.smartrecruiters.com/v1/companies/{g['token']}/postings",
        lambda body: has_envelope(body, ENVELOPE),
    )

    def __init__(self, page_size: int = PAGE_SIZE) -> None:
        self.page_size = page_size

    def first_url(self, url: str) -> str:
        return with_query(url, limit=self.page_size, offset=0)

    def next_url(self, page: Page, index: int) -> str | None:
        data = load_json(page, self.name)
        if not isinstance(data, dict):
            return None
        offset = data.get("offset", query_int(page.url, "offset", 0))
        got = len(data.get(ENVELOPE) or [])
        total = data.get("totalFound")
        if got == 0 or not isinstance(total, int) or offset + got >= total:
            return None
        return with_query(page.url, offset=offset + got)

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for page in pages:
            data = load_json(page, self.name)
            require(
                isinstance(data, dict)
                and isinstance(data.get(ENVELOPE), list)
                and "totalFound" in data,
                self.name,
                "content list with totalFound",
            )
            for item in data[ENVELOPE]:
                require(
                    isinstance(item, dict) and "id" in item and "name" in item,
                    self.name,
                    "posting id/name",
                )
                loc = item.get("location") or {}
                company = (item.get("company") or {}).get("identifier", "")
                place = loc.get("fullLocation") or ", ".join(
                    p for p in (loc.get("city"), (loc.get("country") or "").upper()) if p
                )
                workplace = (
                    "remote" if loc.get("remote") else "hybrid" if loc.get("hybrid") else None
                )
                out.add(
                    "job",
                    job(
                        vendor=self.name,
                        vendor_id=item["id"],
                        title=item["name"],
                        department=text(item.get("department")),
                        team=text(item.get("function")),
                        locations=[place] if place else [],
                        remote=bool(loc.get("remote")) if "remote" in loc else None,
                        workplace_type=workplace,
                        employment_type=text(item.get("typeOfEmployment")),
                        url=f"https://jobs.smartrecruiters.com/{company}/{item['id']}",
                        posted_at=item.get("releasedDate"),
                        requisition_id=item.get("refNumber"),
                    ),
                )
        return out

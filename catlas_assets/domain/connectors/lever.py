"""Lever Postings API: `api.lever.co/v0/postings/{site}?mode=json`, a bare JSON array.

Paginated with `skip` / `limit`: a page as long as `limit` means another may follow.
"""

from __future__ import annotations

from datetime import datetime

from catlas_assets.domain.connectors.base import (
    Connector,
    Page,
    ats_extraction,
    iso_from_ms,
    load_json,
    number,
    query_int,
    require,
    text,
    with_query,
)
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, json_of, patterns
from catlas_assets.domain.extract.extraction import Extraction, compensation, job

PAGE_SIZE = 100


class Lever(Connector):
    name = "lever"
    kind = "ats"
    description = "Lever Postings API (mode=json, skip/limit pagination)"
    board_links = BoardLinks(
        patterns(
            rf"^jobs\.(?P<eu>eu\.)?lever\.co/(?P<token>{TOKEN})",
            rf"^api\.(?P<eu>eu\.)?lever\.co/v0/postings/(?P<token>{TOKEN})",
        ),
        lambda s, g: f"{s}://api.{g.get('eu') or ''}lever.co/v0/postings/{g['token']}?mode=json",
        lambda body: isinstance(json_of(body), list),  # a bare array of postings
    )

    def __init__(self, page_size: int = PAGE_SIZE) -> None:
        self.page_size = page_size

    def first_url(self, url: str) -> str:
        return with_query(url, mode="json", skip=0, limit=self.page_size)

    def next_url(self, page: Page, index: int) -> str | None:
        data = load_json(page, self.name)
        limit = query_int(page.url, "limit", self.page_size)
        if not isinstance(data, list) or len(data) < limit:
            return None
        return with_query(page.url, skip=query_int(page.url, "skip", 0) + limit)

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for page in pages:
            data = load_json(page, self.name)
            require(isinstance(data, list), self.name, "a bare JSON array of postings")
            for item in data:
                require(
                    isinstance(item, dict) and "id" in item and "text" in item,
                    self.name,
                    "posting id/text",
                )
                cats = item.get("categories") or {}
                require(isinstance(cats, dict), self.name, "categories object")
                locations = [text(cats.get("location"))] + [
                    text(x) for x in cats.get("allLocations") or []
                ]
                salary = item.get("salaryRange") or {}
                workplace = item.get("workplaceType")
                out.add(
                    "job",
                    job(
                        vendor=self.name,
                        vendor_id=item["id"],
                        title=item["text"],
                        department=text(cats.get("department")),
                        team=text(cats.get("team")),
                        locations=[loc for loc in locations if loc],
                        remote=workplace == "remote"
                        if workplace and workplace != "unspecified"
                        else None,
                        workplace_type=workplace if workplace != "unspecified" else None,
                        employment_type=text(cats.get("commitment")),
                        url=item.get("hostedUrl"),
                        posted_at=iso_from_ms(item.get("createdAt")),
                        compensation=compensation(
                            number(salary.get("min")),
                            number(salary.get("max")),
                            salary.get("currency"),
                            salary.get("interval"),
                        ),
                    ),
                )
        return out

"""Workable public widget API: `apply.workable.com/api/v1/widget/accounts/{account}`.

Envelope `{"name", "description", "jobs": [...]}`; no pagination.
"""

from __future__ import annotations

from datetime import datetime

from catlas_assets.domain.connectors.base import (
    Connector,
    Page,
    ats_extraction,
    records,
    text,
    with_query,
)
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, has_envelope, patterns
from catlas_assets.domain.extract.extraction import Extraction, job

ENVELOPE = "jobs"


class Workable(Connector):
    name = "workable"
    kind = "ats"
    description = "Workable widget API (accounts/{account}, details=true)"
    board_links = BoardLinks(
        patterns(
            rf"^apply\.workable\.com/(?!api/|j/)(?P<token>{TOKEN})",
            rf"^apply\.workable\.com/api/v1/widget/accounts/(?P<token>{TOKEN})",
            rf"^(?P<token>{TOKEN})\.workable\.com(?:/|$)",
        ),
        lambda s, g: f"{s}://apply.workable.com/api/v1/widget/accounts/{g['token']}",
        lambda body: has_envelope(body, ENVELOPE),
        # Hosts that are Workable's own, never a company's account.
        reserved_tokens=frozenset({"apply", "www", "jobs"}),
    )

    def first_url(self, url: str) -> str:
        return with_query(url, details="true")

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for item in records(pages, self.name, ENVELOPE, "job", "title", "shortcode"):
            locations = []
            for loc in item.get("locations") or []:
                if isinstance(loc, dict) and not loc.get("hidden"):
                    locations.append(
                        ", ".join(p for p in (loc.get("city"), loc.get("country")) if p)
                    )
            if not locations:
                locations.append(", ".join(p for p in (item.get("city"), item.get("country")) if p))
            remote = bool(item.get("telecommuting"))
            out.add(
                "job",
                job(
                    vendor=self.name,
                    vendor_id=item["shortcode"],
                    title=item["title"],
                    department=text(item.get("department")),
                    locations=locations,
                    remote=remote,
                    workplace_type="remote" if remote else None,
                    employment_type=text(item.get("employment_type")),
                    url=item.get("shortlink") or item.get("url"),
                    posted_at=item.get("published_on"),
                    requisition_id=item.get("code"),
                ),
            )
        return out

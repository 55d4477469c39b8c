"""Recruitee Careers Site API: `{company}.recruitee.com/api/offers/`, envelope `{"offers": [...]}`."""

from __future__ import annotations

from datetime import datetime

from catlas_assets.domain.connectors.base import (
    Connector,
    Page,
    ats_extraction,
    number,
    records,
    text,
)
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, has_envelope, patterns
from catlas_assets.domain.extract.extraction import Extraction, compensation, job

ENVELOPE = "offers"


def _utc(value: str | None) -> str | None:
    # "2026-07-30 19:46:15 UTC" -> "2026-07-30T19:46:15Z"
    if not value:
        return None
    return value.replace(" UTC", "Z").replace(" ", "T", 1)


class Recruitee(Connector):
    name = "recruitee"
    kind = "ats"
    description = "Recruitee Careers Site API (api/offers/)"
    board_links = BoardLinks(
        patterns(rf"^(?P<token>{TOKEN})\.recruitee\.com(?:/|$)"),
        lambda s, g: f"{s}://{g['token']}.recruitee.com/api/offers/",
        lambda body: has_envelope(body, ENVELOPE),
    )

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for item in records(pages, self.name, ENVELOPE, "offer", "id", "title"):
            if item.get("status") not in (None, "published"):
                continue
            locations = [
                ", ".join(p for p in (loc.get("city"), loc.get("country")) if p)
                for loc in item.get("locations") or []
                if isinstance(loc, dict)
            ] or [text(item.get("location")) or ""]
            workplace = (
                "remote"
                if item.get("remote")
                else "hybrid"
                if item.get("hybrid")
                else "on-site"
                if item.get("on_site")
                else None
            )
            salary = item.get("salary") if isinstance(item.get("salary"), dict) else {}
            out.add(
                "job",
                job(
                    vendor=self.name,
                    vendor_id=item["id"],
                    title=item["title"],
                    department=text(item.get("department")),
                    locations=locations,
                    remote=bool(item.get("remote")) if "remote" in item else None,
                    workplace_type=workplace,
                    employment_type=text(item.get("employment_type_code")),
                    url=item.get("careers_url"),
                    posted_at=_utc(item.get("published_at")),
                    updated_at=_utc(item.get("updated_at")),
                    compensation=compensation(
                        number(salary.get("min")),
                        number(salary.get("max")),
                        salary.get("currency"),
                        salary.get("period"),
                    ),
                ),
            )
        return out

"""Greenhouse Job Board API: `boards-api.greenhouse.io/v1/boards/{token}/jobs`.

Envelope `{"jobs": [...], "meta": {"total": N}}`; `content` (with `?content=true`) is
HTML that is itself entity-escaped (`&lt;p&gt;`), so it is unescaped twice.
"""

from __future__ import annotations

from datetime import datetime

from catlas_assets.domain.connectors.base import (
    Connector,
    Page,
    ats_extraction,
    html_to_text,
    records,
    text,
    with_query,
)
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, has_envelope, patterns
from catlas_assets.domain.extract.extraction import Extraction, compensation, job

ENVELOPE = "jobs"


class Greenhouse(Connector):
    name = "greenhouse"
    kind = "ats"
    description = "Greenhouse Job Board API (jobs list, content=true)"
    board_links = BoardLinks(
        patterns(
            rf"^boards\.greenhouse\.io/embed/job_board(?:/js)?\?(?:.*&)?for=(?P<token>{TOKEN})",
            rf"^(?:job-)?boards(?:\.eu)?\.greenhouse\.io/(?!embed/)(?P<token>{TOKEN})",
            rf"^boards-api\.greenhouse\.io/v1/boards/(?P<token>{TOKEN})",
        ),
        lambda s, g: f"{s}://boards-api.greenhouse.io/v1/boards/{g['token']}/jobs",
        lambda body: has_envelope(body, ENVELOPE),
        token_param="for",
    )

    def first_url(self, url: str) -> str:
        return with_query(url, content="true")

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for item in records(pages, self.name, ENVELOPE, "job", "id", "title"):
            departments = [text(d) for d in item.get("departments") or []]
            offices = [text(o) for o in item.get("offices") or []]
            location = text(item.get("location"))
            pay = (item.get("pay_input_ranges") or [None])[0]
            content = html_to_text(item.get("content"))
            out.add(
                "job",
                {
                    **job(
                        vendor=self.name,
                        vendor_id=item["id"],
                        title=item["title"],
                        department=next((d for d in departments if d), None),
                        locations=[location] if location else [o for o in offices if o],
                        remote=("remote" in (location or "").lower()) or None,
                        url=item.get("absolute_url"),
                        posted_at=item.get("first_published"),
                        updated_at=item.get("updated_at"),
                        requisition_id=item.get("requisition_id"),
                        compensation=compensation(
                            pay["min_cents"] / 100
                            if pay and pay.get("min_cents") is not None
                            else None,
                            pay["max_cents"] / 100
                            if pay and pay.get("max_cents") is not None
                            else None,
                            pay.get("currency_type") if pay else None,
                            "year" if pay else None,
                        ),
                    ),
                    "summary": content[:200] or None,
                },
            )
        return out

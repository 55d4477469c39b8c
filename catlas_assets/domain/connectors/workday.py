"""Workday CXS list endpoint: `{tenant}.wdN.myworkdayjobs.com/wday/cxs/{tenant}/{site}/jobs`.

The list is only served to a POST with the JSON body `{"appliedFacets": {}, "limit": 20,
"offset": N, "searchText": ""}`; the connector asks exactly that, page after page (the
URL itself never changes). Pages hold at most 20 postings; `total` says when to stop.
`postedOn` is relative text ("Posted 3 Days Ago"), turned into a date relative to the
fetch time `now`, so that the same posting keeps the same date from day to day.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from catlas_assets.domain.connectors.base import (
    Connector,
    Page,
    Request,
    ats_extraction,
    load_json,
    query_int,
    require,
    text,
)
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, json_of, patterns
from catlas_assets.domain.extract.extraction import Extraction, job
from catlas_assets.domain.relative_dates import resolve_relative_date

PAGE_SIZE = 20  # Workday's hard cap per page
_PAGING = ("limit", "offset")
ENVELOPE = "jobPostings"


def list_body(offset: int) -> dict[str, Any]:
    """The JSON body of one list request, in Workday's own field order."""
    return {"appliedFacets": {}, "limit": PAGE_SIZE, "offset": offset, "searchText": ""}


def list_url(url: str) -> str:
    """The endpoint without paging parameters (a sensor URL may still carry old ones)."""
    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in _PAGING]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def posted_date(posted_on: str | None, now: datetime) -> str | None:
    """ "Posted Today" / "Posted Yesterday" / "Posted 3 Days Ago" (or a localized board's
    "Vor 3 Tagen ausgeschrieben") -> an ISO date seen at `now`; "30+ Days Ago" stays open."""
    resolved = resolve_relative_date(posted_on, now)
    return resolved.isoformat() if resolved is not None else None


_HOST = rf"(?P<token>{TOKEN})\.(?P<wd>wd\d+)\.myworkdayjobs\.com"


def _board_page_answers(body: bytes) -> bool:
    # The CXS list endpoint is POST-only; the board's public page answering is the check.
    return b"<html" in body[:4096].lower() or json_of(body) is not None


class Workday(Connector):
    name = "workday"
    kind = "ats"
    description = "Workday CXS job list (offset/limit 20, relative posted dates)"
    # The list endpoint (the sensor's URL) answers only a POST with a JSON body, so a
    # board is verified with a GET of its public page `{tenant}.wdN.myworkdayjobs.com/{site}`.
    board_links = BoardLinks(
        patterns(
            # The CXS endpoint itself (its tenant segment is usually, not always, the host's).
            rf"^{_HOST}/wday/cxs/(?P<tenant>{TOKEN})/(?P<site>{TOKEN})",
            # The public board page, with or without a locale.
            rf"^{_HOST}/(?:[a-z]{{2}}-[A-Za-z]{{2}}/)?(?!wday/)(?P<site>{TOKEN})",
        ),
        lambda s, g: (
            f"{s}://{g['token']}.{g['wd']}.myworkdayjobs.com"
            f"/wday/cxs/{g.get('tenant') or g['token']}/{g['site']}/jobs"
        ),
        _board_page_answers,
        verify_page=lambda s, g: f"{s}://{g['token']}.{g['wd']}.myworkdayjobs.com/{g['site']}",
    )

    def first_request(self, url: str) -> Request:
        return Request(list_url(url), "POST", list_body(0))

    def next_request(self, page: Page, index: int) -> Request | None:
        data = load_json(page, self.name)
        if not isinstance(data, dict):
            return None
        sent = page.json_body if isinstance(page.json_body, dict) else {}
        offset = sent.get("offset")
        if not isinstance(offset, int) or isinstance(offset, bool):
            offset = query_int(page.url, "offset", 0)  # a page archived before POST paging
        got = len(data.get(ENVELOPE) or [])
        total = data.get("total")
        if got == 0 or not isinstance(total, int) or offset + got >= total:
            return None
        return Request(list_url(page.url), "POST", list_body(offset + got))

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for page in pages:
            data = load_json(page, self.name)
            require(
                isinstance(data, dict) and isinstance(data.get(ENVELOPE), list),
                self.name,
                "jobPostings list",
            )
            parts = urlsplit(page.url)
            segments = parts.path.split("/")
            site = segments[4] if len(segments) > 4 else ""
            for item in data[ENVELOPE]:
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

"""ATS job boards: recognise a vendor's board in a link or an embed, name its API (pure).

Each vendor has URL shapes that carry the board token (Greenhouse's embed
`boards.greenhouse.io/embed/job_board?for=<token>`, `jobs.lever.co/<site>` ...), one public
endpoint that lists the jobs, and a shape that endpoint answers with (see the vendors'
public documentation). Discovery verifies a board with one request to that endpoint.
The endpoint keeps the scheme of the link the site gave (sites link their vendors over
https; the fixture web speaks plain http).

The verification request is a GET of the endpoint itself, except for Workday: its CXS list
endpoint (the sensor's URL) answers only a POST with a JSON body, so the board is verified
with a GET of its public page (`{tenant}.wdN.myworkdayjobs.com/{site}`), which answers
whatever the list endpoint's method.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

_TOKEN = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


@dataclass(frozen=True)
class AtsBoard:
    vendor: str  # also the connector name (taxonomy.CONNECTOR_RELIABILITY)
    token: str
    api_url: str  # the endpoint a sensor watches
    source_url: str  # the link or embed it was found in
    verify_url: str = ""  # what discovery's one verification GET asks ("" = api_url)

    @property
    def verification_url(self) -> str:
        return self.verify_url or self.api_url


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


def _greenhouse_ok(body: bytes) -> bool:
    data = _json(body)
    return isinstance(data, dict) and isinstance(data.get("jobs"), list)


def _lever_ok(body: bytes) -> bool:
    return isinstance(_json(body), list)


def _ashby_ok(body: bytes) -> bool:
    data = _json(body)
    return isinstance(data, dict) and isinstance(data.get("jobs"), list)


def _workable_ok(body: bytes) -> bool:
    data = _json(body)
    return isinstance(data, dict) and isinstance(data.get("jobs"), list)


def _recruitee_ok(body: bytes) -> bool:
    data = _json(body)
    return isinstance(data, dict) and isinstance(data.get("offers"), list)


def _smartrecruiters_ok(body: bytes) -> bool:
    data = _json(body)
    return isinstance(data, dict) and isinstance(data.get("content"), list)


def _xml_root(body: bytes) -> str:
    try:
        root = SafeET.fromstring(body, forbid_dtd=True)
    except (SafeET.ParseError, DefusedXmlException, ValueError):
        return ""
    return root.tag.rsplit("}", 1)[-1]


def _personio_ok(body: bytes) -> bool:
    return _xml_root(body) == "workzag-jobs"


def _teamtailor_ok(body: bytes) -> bool:
    return _xml_root(body) == "rss"


def _workday_ok(body: bytes) -> bool:
    # The CXS list endpoint is POST-only; the board's public page answering is the check.
    return b"<html" in body[:4096].lower() or _json(body) is not None


_WORKDAY_HOST = rf"(?P<token>{_TOKEN})\.(?P<wd>wd\d+)\.myworkdayjobs\.com"


@dataclass(frozen=True)
class Vendor:
    name: str
    patterns: tuple[re.Pattern[str], ...]  # over "host/path?query", lowercase host
    api: Callable[[str, dict[str, str]], str]  # scheme, groups -> endpoint
    verify: Callable[[bytes], bool]
    # scheme, groups -> the URL verified instead of the endpoint (None: the endpoint itself)
    verify_page: Callable[[str, dict[str, str]], str] | None = None


def _p(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


VENDORS: tuple[Vendor, ...] = (
    Vendor(
        "greenhouse",
        _p(
            rf"^boards\.greenhouse\.io/embed/job_board(?:/js)?\?(?:.*&)?for=(?P<token>{_TOKEN})",
            rf"^(?:job-)?boards(?:\.eu)?\.greenhouse\.io/(?!embed/)(?P<token>{_TOKEN})",
            rf"^boards-api\.greenhouse\.io/v1/boards/(?P<token>{_TOKEN})",
        ),
        lambda s, g: f"{s}://boards-api.greenhouse.io/v1/boards/{g['token']}/jobs",
        _greenhouse_ok,
    ),
    Vendor(
        "lever",
        _p(
            rf"^jobs\.(?P<eu>eu\.)?lever\.co/(?P<token>{_TOKEN})",
            rf"^api\.(?P<eu>eu\.)?lever\.co/v0/postings/(?P<token>{_TOKEN})",
        ),
        lambda s, g: f"{s}://api.{g.get('eu') or ''}lever.co/v0/postings/{g['token']}?mode=json",
        _lever_ok,
    ),
    Vendor(
        "ashby",
        _p(
            rf"^jobs\.ashbyhq\.com/(?P<token>{_TOKEN})",
            rf"^api\.ashbyhq\.com/posting-api/job-board/(?P<token>{_TOKEN})",
        ),
        lambda s, g: f"{s}://api.ashbyhq.com/posting-api/job-board/{g['token']}",
        _ashby_ok,
    ),
    Vendor(
        "workable",
        _p(
            rf"^apply\.workable\.com/(?!api/|j/)(?P<token>{_TOKEN})",
            rf"^apply\.workable\.com/api/v1/widget/accounts/(?P<token>{_TOKEN})",
            rf"^(?P<token>{_TOKEN})\.workable\.com(?:/|$)",
        ),
        lambda s, g: f"{s}://apply.workable.com/api/v1/widget/accounts/{g['token']}",
        _workable_ok,
    ),
    Vendor(
        "workday",
        _p(
            # The CXS endpoint itself (its tenant segment is usually, not always, the host's).
            rf"^{_WORKDAY_HOST}/wday/cxs/(?P<tenant>{_TOKEN})/(?P<site>{_TOKEN})",
            # The public board page, with or without a locale.
            rf"^{_WORKDAY_HOST}/(?:[a-z]{{2}}-[A-Za-z]{{2}}/)?(?!wday/)(?P<site>{_TOKEN})",
        ),
        lambda s, g: (
            f"{s}://{g['token']}.{g['wd']}.myworkdayjobs.com"
            f"/wday/cxs/{g.get('tenant') or g['token']}/{g['site']}/jobs"
        ),
        _workday_ok,
        lambda s, g: f"{s}://{g['token']}.{g['wd']}.myworkdayjobs.com/{g['site']}",
    ),
    Vendor(
        "recruitee",
        _p(rf"^(?P<token>{_TOKEN})\.recruitee\.com(?:/|$)"),
        lambda s, g: f"{s}://{g['token']}.recruitee.com/api/offers/",
        _recruitee_ok,
    ),
    Vendor(
        "personio",
        _p(rf"^(?P<token>{_TOKEN})\.jobs\.personio\.(?P<tld>de|com)(?:/|$)"),
        lambda s, g: f"{s}://{g['token']}.jobs.personio.{g['tld']}/xml",
        _personio_ok,
    ),
    Vendor(
        "teamtailor",
        _p(rf"^(?P<token>{_TOKEN})\.teamtailor\.com(?:/|$)"),
        lambda s, g: f"{s}://{g['token']}.teamtailor.com/jobs.rss",
        _teamtailor_ok,
    ),
    Vendor(
        "smartrecruiters",
        _p(
            rf"^(?:jobs|careers)\.smartrecruiters\.com/(?P<token>{_TOKEN})",
            rf"^api\.smartrecruiters\.com/v1/companies/(?P<token>{_TOKEN})",
        ),
        lambda s, g: f"{s}://api.smartrecruiters.com/v1/companies/{g['token']}/postings",
        _smartrecruiters_ok,
    ),
)
VENDOR_BY_NAME = {v.name: v for v in VENDORS}
# Hosts that are the vendor's own, never a company's page (kept out of surface classification).
_WORKABLE_RESERVED = frozenset({"apply", "www", "jobs"})


def detect_board(url: str) -> AtsBoard | None:
    """The ATS board a link or embed URL points at, or None."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    target = parts.hostname.lower() + parts.path + (f"?{parts.query}" if parts.query else "")
    for vendor in VENDORS:
        for pattern in vendor.patterns:
            match = pattern.search(target)
            if match is None:
                continue
            groups = {k: v for k, v in match.groupdict().items() if v is not None}
            if vendor.name == "workable" and groups["token"].lower() in _WORKABLE_RESERVED:
                continue
            if vendor.name == "greenhouse" and "for" in parse_qs(parts.query):
                groups["token"] = parse_qs(parts.query)["for"][0]
            groups["token"] = groups["token"].rstrip(".")
            return AtsBoard(
                vendor=vendor.name,
                token=groups["token"],
                api_url=vendor.api(parts.scheme, groups),
                source_url=url.strip(),
                verify_url=vendor.verify_page(parts.scheme, groups) if vendor.verify_page else "",
            )
    return None


def detect_boards(urls: Iterable[str]) -> list[AtsBoard]:
    """Every distinct board (vendor, token) among `urls`, in first-seen order."""
    seen: dict[tuple[str, str], AtsBoard] = {}
    for url in urls:
        board = detect_board(url)
        if board is not None:
            seen.setdefault((board.vendor, board.token.lower()), board)
    return list(seen.values())


def verify_answer(vendor: str, status: int | None, body: bytes) -> bool:
    """Whether the endpoint's answer has the vendor's shape (one request decides)."""
    return status == 200 and VENDOR_BY_NAME[vendor].verify(body)


def is_statuspage_summary(body: bytes) -> bool:
    """An Atlassian Statuspage `/api/v2/summary.json` answer."""
    data = _json(body)
    return (
        isinstance(data, dict)
        and isinstance(data.get("page"), dict)
        and isinstance(data.get("status"), dict)
        and isinstance(data.get("components"), list)
    )

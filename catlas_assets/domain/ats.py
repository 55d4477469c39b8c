"""ATS job boards: recognise a vendor's board in a link or an embed, name its API (pure).

What each vendor looks like (the URL shapes that carry its board token, such as Greenhouse's
embed `boards.greenhouse.io/embed/job_board?for=<token>` or `jobs.lever.co/<site>`, the
endpoint that lists the jobs, and the answer that proves a board) is declared once, by that
vendor's connector (`connectors/<vendor>.py`, `board_links`). This module only asks each
ATS connector in registry order. Discovery verifies a board with one request to the URL
`AtsBoard.verification_url` names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from catlas_assets.domain.connectors import statuspage
from catlas_assets.domain.connectors.board_links import BoardLinks
from catlas_assets.domain.connectors.registry import CONNECTORS

# name -> board links of every ATS connector, in registry order (the order tried).
VENDORS: dict[str, BoardLinks] = {
    name: connector.board_links
    for name, connector in CONNECTORS.items()
    if connector.board_links is not None
}


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


def _board(vendor: str, links: BoardLinks, url: str) -> AtsBoard | None:
    parts = urlsplit(url)
    target = (
        (parts.hostname or "").lower() + parts.path + (f"?{parts.query}" if parts.query else "")
    )
    for pattern in links.patterns:
        match = pattern.search(target)
        if match is None:
            continue
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        if groups["token"].lower() in links.reserved_tokens:
            continue
        named = parse_qs(parts.query).get(links.token_param) if links.token_param else None
        if named:
            groups["token"] = named[0]
        groups["token"] = groups["token"].rstrip(".")
        return AtsBoard(
            vendor=vendor,
            token=groups["token"],
            api_url=links.api(parts.scheme, groups),
            source_url=url,
            verify_url=links.verify_page(parts.scheme, groups) if links.verify_page else "",
        )
    return None


def detect_board(url: str) -> AtsBoard | None:
    """The ATS board a link or embed URL points at, or None."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    for vendor, links in VENDORS.items():
        board = _board(vendor, links, url)
        if board is not None:
            return board
    return None


def detect_site_board(page_url: str, urls: Iterable[str]) -> AtsBoard | None:
    """The vendor career site a page is, served on the company's own host (Teamtailor on
    `careers.acme.com`): the page loads that vendor's assets (`site_markers`), and the
    board's endpoint lives on the page's origin."""
    parts = urlsplit(page_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    hosts = {(urlsplit(u).hostname or "").lower() for u in urls}
    for vendor, links in VENDORS.items():
        if links.site_api is None:
            continue
        if any(h == m or h.endswith("." + m) for h in hosts for m in links.site_markers):
            return AtsBoard(
                vendor=vendor,
                token=parts.hostname,
                api_url=links.site_api(f"{parts.scheme}://{parts.netloc}"),
                source_url=page_url,
            )
    return None


def detect_boards(urls: Iterable[str], *, page_url: str | None = None) -> list[AtsBoard]:
    """Every distinct board (vendor, token) among `urls`, in first-seen order; with
    `page_url`, the vendor career site that page is comes first."""
    urls = list(urls)
    site = detect_site_board(page_url, urls) if page_url else None
    seen: dict[tuple[str, str], AtsBoard] = {}
    if site is not None:
        seen[(site.vendor, site.token)] = site
    for url in urls:
        board = detect_board(url)
        if board is not None and all(b.api_url != board.api_url for b in seen.values()):
            seen.setdefault((board.vendor, board.token.lower()), board)
    return list(seen.values())


def verify_answer(vendor: str, status: int | None, body: bytes) -> bool:
    """Whether the verification answer has the vendor's shape (one request decides)."""
    return status == 200 and VENDORS[vendor].verify(body)


def is_statuspage_summary(body: bytes) -> bool:
    """An Atlassian Statuspage `/api/v2/summary.json` answer (the statuspage connector's shape)."""
    return statuspage.is_summary_body(body)

"""Teamtailor public RSS: `{company}.teamtailor.com/jobs.rss` with the `tt:` locations namespace."""

from __future__ import annotations

from datetime import datetime
from email.utils import parsedate_to_datetime
from xml.etree.ElementTree import Element, ParseError

from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from catlas_assets.domain.connectors.base import Connector, Page, ats_extraction, require
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, patterns, xml_root
from catlas_assets.domain.extract.extraction import Extraction, SchemaError, job

TT = "{https://teamtailor.com/locations}"


def _text(node: Element, name: str) -> str | None:
    found = node.find(name)
    return (found.text or "").strip() or None if found is not None else None


def _rfc822(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError):
        return None


class Teamtailor(Connector):
    name = "teamtailor"
    kind = "ats"
    description = "Teamtailor jobs RSS (jobs.rss)"
    # A Teamtailor career site also runs on the company's own host (`careers.acme.com`),
    # with the same `/jobs.rss`; its pages load their assets from Teamtailor's CDN.
    board_links = BoardLinks(
        patterns(rf"^(?P<token>{TOKEN})\.teamtailor\.com(?:/|$)"),
        lambda s, g: f"{s}://{g['token']}.teamtailor.com/jobs.rss",
        lambda body: xml_root(body) == "rss",
        reserved_tokens=frozenset({"www", "app", "api", "support", "docs", "assets"}),
        site_markers=("teamtailor-cdn.com",),
        site_api=lambda origin: f"{origin}/jobs.rss",
    )

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for page in pages:
            try:
                root = SafeET.fromstring(page.body)
            except (ParseError, DefusedXmlException) as exc:
                raise SchemaError(
                    f"{self.name}: the answer from {page.url} is not XML ({exc})"
                ) from None
            channel = root.find("channel")
            require(root.tag == "rss" and channel is not None, self.name, "an RSS 2.0 channel")
            assert channel is not None
            for item in channel.findall("item"):
                title = _text(item, "title")
                link = _text(item, "link")
                require(bool(title and link), self.name, "item title/link")
                locations = []
                for loc in item.iter(f"{TT}location"):
                    city = _text(loc, f"{TT}city") or _text(loc, f"{TT}name")
                    country = _text(loc, f"{TT}country")
                    locations.append(", ".join(p for p in (city, country) if p))
                remote = _text(item, "remoteStatus")
                out.add(
                    "job",
                    job(
                        vendor=self.name,
                        vendor_id=_text(item, "guid") or link,
                        title=title or "",
                        department=_text(item, f"{TT}department"),
                        team=_text(item, f"{TT}role"),
                        locations=locations,
                        remote=remote == "fully" if remote else None,
                        workplace_type={
                            "fully": "remote",
                            "hybrid": "hybrid",
                            "none": "on-site",
                        }.get(remote or ""),
                        url=link,
                        posted_at=_rfc822(_text(item, "pubDate")),
                    ),
                )
        return out

"""RSS 0.9x / 1.0 (RDF) / 2.0 and Atom feeds -> news items keyed by canonical URL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import feedparser

from catlas_assets.domain.connectors.base import Connector, Page
from catlas_assets.domain.extract.extraction import Extraction, SchemaError
from catlas_assets.domain.extract.html import canonical_url


def _published(entry: Any) -> str | None:
    parsed = entry.get("published_parsed") or entry.get("updated_parsed")
    if not parsed:
        return None
    return datetime(*parsed[:6], tzinfo=UTC).isoformat().replace("+00:00", "Z")


class Feed(Connector):
    name = "feed"
    kind = "feed"
    description = "RSS 0.9x/1.0/2.0 and Atom feeds (news items)"

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = Extraction(connector=self.name, surface=surface, confidence=1.0, structured=True)
        page = pages[0]
        # Bytes, never a URL: feedparser must not fetch anything itself.
        parsed = feedparser.parse(page.body, sanitize_html=False, resolve_relative_uris=False)
        if not parsed.get("version"):
            raise SchemaError(f"feed: {page.url} is neither RSS nor Atom")
        for entry in parsed.entries:
            link = entry.get("link") or entry.get("id")
            if not link:
                continue
            out.add(
                "news",
                {
                    "key": canonical_url(link, page.url),
                    "title": (entry.get("title") or "").strip(),
                    "url": canonical_url(link, page.url),
                    "published_at": _published(entry),
                },
            )
        out.page["feed_version"] = parsed.get("version")
        return out

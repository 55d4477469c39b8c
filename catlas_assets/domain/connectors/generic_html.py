"""Any HTML page: blocks-based extraction per surface (see `extract/html.py`).

JSON bodies that have the Statuspage shape and RSS/Atom bodies are handed to those
connectors, so a sensor declared as `generic_html` on a status API or a feed still gets
typed entities; anything else that is not HTML gets page facts only.
"""

from __future__ import annotations

import json
from datetime import datetime

from catlas_assets.domain.connectors.base import Connector, Page
from catlas_assets.domain.connectors.feed import Feed
from catlas_assets.domain.connectors.statuspage import Statuspage, is_summary
from catlas_assets.domain.extract.extraction import Extraction
from catlas_assets.domain.extract.html import extract_html
from catlas_assets.domain.normalize import content_kind, decode_body


class GenericHtml(Connector):
    name = "generic_html"
    kind = "html"
    description = "Any HTML page: JSON-LD and listings per surface"

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        page = pages[0]
        kind = content_kind(page.content_type, page.body)
        if kind == "json":
            try:
                data = json.loads(decode_body(page.body, page.content_type))
            except ValueError:
                data = None
            if is_summary(data):
                result = Statuspage().parse(pages, surface, now)
                result.connector = self.name
                return result
            return Extraction(connector=self.name, surface=surface, confidence=0.5, structured=True)
        ctype = page.content_type.lower()
        if kind == "xml" and ("rss" in ctype or "atom" in ctype or b"<rss" in page.body[:500]):
            result = Feed().parse(pages, surface, now)
            result.connector = self.name
            return result
        if kind != "html":
            return Extraction(connector=self.name, surface=surface, confidence=0.3)
        result = extract_html(decode_body(page.body, page.content_type), page.url, surface)
        result.connector = self.name
        return result

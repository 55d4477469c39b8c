"""XML sitemaps (`urlset` and `sitemapindex`): the listed URLs, in the page facts."""

from __future__ import annotations

from datetime import datetime
from xml.etree.ElementTree import ParseError

from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from catlas_assets.domain.connectors.base import Connector, Page, require
from catlas_assets.domain.extract.extraction import Extraction, SchemaError

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class Sitemap(Connector):
    name = "sitemap"
    kind = "sitemap"
    description = "XML sitemap or sitemap index (listed URLs)"

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = Extraction(connector=self.name, surface=surface, confidence=1.0, structured=True)
        try:
            root = SafeET.fromstring(pages[0].body)
        except (ParseError, DefusedXmlException) as exc:
            raise SchemaError(f"sitemap: {pages[0].url} is not XML ({exc})") from None
        tag = root.tag.removeprefix(NS)
        require(
            tag in ("urlset", "sitemapindex"), self.name, f"<urlset> or <sitemapindex>, got <{tag}>"
        )
        urls = sorted(
            (loc.text or "").strip() for loc in root.iter(f"{NS}loc") if (loc.text or "").strip()
        )
        out.page.update({"sitemap": tag, "urls": urls[:1000], "url_count": len(urls)})
        return out

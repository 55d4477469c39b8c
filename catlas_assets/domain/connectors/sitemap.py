"""XML sitemaps (`urlset` and `sitemapindex`): the listed URLs, in the page facts.

The sitemap is read by the one sitemap parser (`domain/sitemap.py`), the same that
discovery uses: plain or gzip, whatever namespace the root declares.
"""

from __future__ import annotations

from datetime import datetime

from catlas_assets.domain.connectors.base import Connector, Page
from catlas_assets.domain.extract.extraction import Extraction, SchemaError
from catlas_assets.domain.sitemap import MAX_SITEMAP_URLS, SitemapError, parse_sitemap

URLS_KEPT = 1000  # URLs kept in the page facts (the count says how many were listed)


class Sitemap(Connector):
    name = "sitemap"
    kind = "sitemap"
    description = "XML sitemap or sitemap index (listed URLs)"

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = Extraction(connector=self.name, surface=surface, confidence=1.0, structured=True)
        try:
            sitemap = parse_sitemap(pages[0].body, max_urls=MAX_SITEMAP_URLS)
        except SitemapError as exc:
            raise SchemaError(f"sitemap: {pages[0].url}: {exc}") from None
        urls = sorted(sitemap.urls)
        out.page.update(
            {
                "sitemap": "sitemapindex" if sitemap.is_index else "urlset",
                "urls": urls[:URLS_KEPT],
                "url_count": len(urls),
            }
        )
        return out

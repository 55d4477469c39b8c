"""The one sitemap parser (pure, safe parsing): discovery and the sitemap connector use it.

XML goes through defusedxml with DTDs, entities and external references refused, so a
hostile sitemap cannot expand entities or make us read files. Gzip sitemaps are inflated
with a size cap (a small .gz can hide gigabytes).
"""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

GZIP_MAGIC = b"\x1f\x8b"
MAX_INFLATED_BYTES = 50_000_000  # the sitemaps.org limit for one uncompressed file
MAX_SITEMAP_URLS = 50_000  # the sitemaps.org limit of URLs in one file


class SitemapError(ValueError):
    """The body is not a sitemap we can read (malformed, hostile or too large)."""


@dataclass(frozen=True)
class Sitemap:
    is_index: bool
    urls: tuple[str, ...]  # page URLs, or child sitemap URLs for an index
    truncated: bool = False  # more <loc> entries than the cap allowed


def inflate(body: bytes, limit: int = MAX_INFLATED_BYTES) -> bytes:
    """The body, gunzipped when it is gzip (by its magic bytes), at most `limit` bytes."""
    if not body.startswith(GZIP_MAGIC):
        return body
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(body)) as handle:
            data = handle.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise SitemapError(f"broken gzip sitemap: {exc}") from None
    if len(data) > limit:
        raise SitemapError(f"gzip sitemap inflates to more than {limit} bytes")
    return data


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].lower()


def parse_sitemap(body: bytes, *, max_urls: int) -> Sitemap:
    """Read a `<urlset>` or `<sitemapindex>` (plain or gzip); keep at most `max_urls` locs."""
    data = inflate(body)
    try:
        root = SafeET.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except (SafeET.ParseError, DefusedXmlException, ValueError, LookupError) as exc:
        # LookupError: an `encoding=` that names no text codec ("hex", "rot13").
        raise SitemapError(f"not a readable sitemap: {exc}") from None
    kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise SitemapError(f"not a sitemap: root element <{kind}>")
    urls: list[str] = []
    truncated = False
    for entry in root:
        loc = next((c for c in entry if _local(c.tag) == "loc"), None)
        text = (loc.text or "").strip() if loc is not None else ""
        if urlsplit(text).scheme not in ("http", "https"):
            continue
        if len(urls) >= max_urls:
            truncated = True
            break
        urls.append(text)
    return Sitemap(is_index=kind == "sitemapindex", urls=tuple(urls), truncated=truncated)

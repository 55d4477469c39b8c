"""What discovery reads out of a page: links by region, embeds, feeds, JSON-LD sameAs (pure).

Links inside `<nav>`, `<header>` and `<footer>` are the site's own navigation (method
`nav`); links in the body are `link`. Embeds (`<iframe>`, `<script src>`) are kept apart:
they are where ATS job boards hide. Also the soft-404 test: a 200 page that is really
"not found".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin

from rapidfuzz import fuzz
from selectolax.lexbor import LexborHTMLParser, LexborNode

from catlas_assets.domain.extract.extraction import DATA_ERRORS, ParseError
from catlas_assets.domain.extract.markup import parse_html
from catlas_assets.domain.normalize import decode_body

NAV_TAGS = frozenset({"nav", "header", "footer"})
# An absolute URL in script text or JSON, `\/`-escaped or not.
_BLOB_URL = re.compile(r"""https?:(?:\\?/){2}[^\s"'<>`\\]+(?:\\/[^\s"'<>`\\]*)*""")
MAX_BLOB_URLS = 200
FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/feed+json"})
# Two pages this similar are the same template: a probe answering like a known-missing
# path is a soft-404.
SOFT_404_SIMILARITY = 90.0
NOT_FOUND_MARKERS = (
    "page not found",
    "404",
    "doesn't exist",
    "does not exist",
    "no longer available",
)


@dataclass(frozen=True)
class Link:
    url: str
    text: str
    region: str  # "nav" (nav/header/footer) or "main"


@dataclass
class PageLinks:
    links: list[Link] = field(default_factory=list)
    embeds: list[str] = field(default_factory=list)
    # URLs written inside inline scripts and data-* attributes (a JSON blob, a widget's
    # config): where a client-rendered careers page names its ATS board.
    blob_urls: list[str] = field(default_factory=list)
    feeds: list[str] = field(default_factory=list)
    same_as: list[str] = field(default_factory=list)
    title: str = ""
    text: str = ""

    def all_urls(self) -> list[str]:
        return [link.url for link in self.links] + self.embeds + self.blob_urls


def _region(node: LexborNode) -> str:
    parent = node.parent
    while parent is not None:
        if parent.tag in NAV_TAGS:
            return "nav"
        parent = parent.parent
    return "main"


def _absolute(base: str, href: str | None) -> str | None:
    if not href:
        return None
    href = href.strip()
    if href.startswith(("mailto:", "tel:", "javascript:", "#", "data:")):
        return None
    url, _fragment = urldefrag(urljoin(base, href))
    return url if url.startswith(("http://", "https://")) else None


def _same_as(data: object, out: list[str]) -> None:
    if isinstance(data, list):
        for item in data:
            _same_as(item, out)
    elif isinstance(data, dict):
        value = data.get("sameAs")
        values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        out.extend(v for v in values if isinstance(v, str) and v not in out)
        _same_as(data.get("@graph"), out)


def extract_links(body: bytes, content_type: str, base_url: str) -> PageLinks:
    """The links of a page; a page nobody can read (a non-text charset, JSON-LD nested past
    any sense) has none, so one bad page never stops discovery."""
    try:
        return _extract_links(body, content_type, base_url)
    except (ParseError, *DATA_ERRORS):
        return PageLinks()


def _extract_links(body: bytes, content_type: str, base_url: str) -> PageLinks:
    tree = parse_html(decode_body(body, content_type))
    page = PageLinks()
    base_node = tree.css_first("base[href]")
    base = urljoin(base_url, base_node.attributes.get("href") or "") if base_node else base_url
    title = tree.css_first("title")
    page.title = title.text(strip=True) if title else ""
    seen: set[tuple[str, str]] = set()
    for node in tree.css("a[href]"):
        url = _absolute(base, node.attributes.get("href"))
        if url is None:
            continue
        region = _region(node)
        if (url, region) in seen:
            continue
        seen.add((url, region))
        page.links.append(Link(url, " ".join(node.text(separator=" ").split()), region))
    for node in tree.css("iframe[src], script[src], embed[src]"):
        url = _absolute(base, node.attributes.get("src"))
        if url and url not in page.embeds:
            page.embeds.append(url)
    for node in tree.css("link[href]"):
        rel = (node.attributes.get("rel") or "").lower().split()
        kind = (node.attributes.get("type") or "").lower().split(";")[0].strip()
        url = _absolute(base, node.attributes.get("href"))
        if url and "alternate" in rel and kind in FEED_TYPES and url not in page.feeds:
            page.feeds.append(url)
    _blob_urls(tree, base, page)
    for node in tree.css('script[type="application/ld+json"]'):
        try:
            _same_as(json.loads(node.text() or "null"), page.same_as)
        except ValueError:
            continue  # a broken JSON-LD block says nothing; the page is still read
    body_node = tree.body
    page.text = " ".join(body_node.text(separator=" ").split()) if body_node else ""
    return page


def _blob_urls(tree: LexborHTMLParser, base: str, page: PageLinks) -> None:
    texts = [node.text() or "" for node in tree.css("script:not([src])")]
    for node in tree.css("*"):
        texts.extend(
            value
            for name, value in node.attributes.items()
            if name.startswith("data-") and value and "http" in value
        )
    for text in texts:
        for match in _BLOB_URL.finditer(text):
            url = _absolute(base, match.group(0).replace("\\/", "/").rstrip(".,;)"))
            if url and url not in page.blob_urls and url not in page.embeds:
                page.blob_urls.append(url)
                if len(page.blob_urls) >= MAX_BLOB_URLS:
                    return


def looks_not_found(title: str) -> bool:
    lowered = title.lower()
    return any(marker in lowered for marker in NOT_FOUND_MARKERS)


def is_soft_404(page_text: str, page_title: str, missing_text: str | None) -> bool:
    """A 200 answer that is really "not found": it reads like the known-missing path's
    answer, or its title says so."""
    if looks_not_found(page_title):
        return True
    if missing_text is None:
        return False
    return fuzz.ratio(page_text, missing_text) >= SOFT_404_SIMILARITY

"""Which surface a URL is: path keywords, subdomain labels and link text (pure).

`classify_url` looks at the last path segment (a section such as `/blog` or
`/company/careers`, never an article such as `/blog/some-post`), at the first label of a
subdomain of the company's domain (`status.example.com`), and at the anchor text when the
path says nothing. It answers with a surface and a confidence in [0, 1], or None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from catlas_assets.domain.taxonomy import SUBDOMAIN_SURFACES
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import Surface

# Last-segment keywords per surface, with the confidence a match carries.
PATH_KEYWORDS: dict[Surface, tuple[float, frozenset[str]]] = {
    Surface.CAREERS: (
        0.9,
        frozenset({"careers", "career", "jobs", "join-us", "joinus", "work-with-us", "hiring"}),
    ),
    Surface.PRICING: (0.9, frozenset({"pricing", "plans", "prices", "price"})),
    Surface.BLOG: (0.85, frozenset({"blog", "engineering-blog", "articles", "insights"})),
    Surface.NEWSROOM: (
        0.85,
        frozenset({"news", "newsroom", "press", "press-releases", "media", "announcements"}),
    ),
    Surface.DOCS: (0.8, frozenset({"docs", "documentation", "help", "kb", "knowledge-base"})),
    Surface.DEVELOPER: (0.8, frozenset({"developers", "developer", "api", "api-reference"})),
    Surface.STATUS: (0.7, frozenset({"status", "system-status"})),
    Surface.INVESTORS: (0.85, frozenset({"investors", "investor-relations", "ir"})),
    Surface.PEOPLE: (0.75, frozenset({"team", "leadership", "people", "management", "founders"})),
    Surface.PRODUCTS: (0.7, frozenset({"products", "product"})),
    Surface.LOCATIONS: (0.7, frozenset({"locations", "offices"})),
    Surface.FEED: (0.8, frozenset({"feed", "rss", "atom", "feed.xml", "rss.xml", "atom.xml"})),
}

# Anchor text that names a surface ("Join us", "Press") when the path does not.
TEXT_KEYWORDS: dict[Surface, frozenset[str]] = {
    Surface.CAREERS: frozenset(
        {"careers", "career", "jobs", "join us", "we're hiring", "open roles"}
    ),
    Surface.PRICING: frozenset({"pricing", "plans", "plans & pricing", "plans and pricing"}),
    Surface.BLOG: frozenset({"blog", "engineering blog"}),
    Surface.NEWSROOM: frozenset({"news", "newsroom", "press", "press releases", "media"}),
    Surface.DOCS: frozenset({"docs", "documentation", "help center"}),
    Surface.DEVELOPER: frozenset({"developers", "api reference", "api"}),
    Surface.STATUS: frozenset({"status", "system status"}),
    Surface.INVESTORS: frozenset({"investors", "investor relations"}),
    Surface.PEOPLE: frozenset({"team", "our team", "leadership"}),
}
TEXT_ONLY_CONFIDENCE = 0.6
TEXT_AGREES_BONUS = 0.05
SUBDOMAIN_CONFIDENCE = 0.9
_EXTENSION = re.compile(r"\.(html?|php|aspx?)$")
_SUBDOMAIN_SURFACE = dict(SUBDOMAIN_SURFACES)


@dataclass(frozen=True)
class Classified:
    surface: Surface
    confidence: float


def path_depth(url: str) -> int:
    """Path segments of a URL: 0 for the root, 1 for `/careers`, 2 for `/company/careers`."""
    return len([s for s in urlsplit(url).path.split("/") if s])


def _text_surface(text: str) -> Surface | None:
    cleaned = " ".join(text.lower().split()).strip(" .:›»→")
    for surface, words in TEXT_KEYWORDS.items():
        if cleaned in words:
            return surface
    return None


def classify_url(url: str, *, company_domain: str, text: str = "") -> Classified | None:
    """The surface `url` is on the company's site, or None (off-site, article, unknown).

    `company_domain` is the registrable domain (`example.com`); URLs elsewhere are not
    classified here (ATS hosts have their own detector).
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        return None
    if registrable_domain(host) != company_domain:
        return None
    segments = [s for s in parts.path.lower().split("/") if s]
    label = host.removesuffix(company_domain).rstrip(".")
    label = "" if label == "www" else label.split(".")[-1] if label else ""
    by_text = _text_surface(text) if text else None
    if label:
        surface = _SUBDOMAIN_SURFACE.get(label)
        if surface is None or len(segments) > 1:
            return None  # dashboard.example.com, or a deep page on a blog subdomain
        return Classified(surface, SUBDOMAIN_CONFIDENCE)
    if not segments:
        return Classified(Surface.HOMEPAGE, 1.0) if not parts.query else None
    last = _EXTENSION.sub("", segments[-1])
    for surface, (confidence, words) in PATH_KEYWORDS.items():
        if last in words or segments[-1] in words:
            bonus = TEXT_AGREES_BONUS if by_text is surface else 0.0
            return Classified(surface, round(min(1.0, confidence + bonus), 4))
    if by_text is not None and len(segments) <= 2:
        return Classified(by_text, TEXT_ONLY_CONFIDENCE)
    return None

"""The listing page a feed belongs to: the `blog` or `newsroom` surface beside the `feed`.

Spec (Discovery, Selection) keeps `feed` next to `blog`/`newsroom`, so a company whose
feed was found also has the page that lists the same posts. That page is, in order:

- the feed URL without its feed segments: WordPress `/journal/feed/`, Ghost
  `/blog/rss/`, Hugo `/posts/index.xml`, `/news/feed.xml`, `/blog/feed/atom/`;
- for a feed at the site's root (Next.js `/rss.xml`, Ghost `/rss/`, WordPress `/feed/`;
  a language's root, Hugo `/nl/index.xml`, is a root too),
  the feed's own `<link>` (RSS `channel/link`, Atom `link rel=alternate`) when it is not the
  homepage, else the one section most of its items live under (`/stories/a`, `/stories/b`
  -> `/stories`).

Pure: URLs and bytes in, a URL out.
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit, urlunsplit

import feedparser

from catlas_assets.domain.urls import is_locale, registrable_domain

FEED_SEGMENTS = frozenset(
    {"feed", "feeds", "rss", "rss2", "atom", "feed.xml", "rss.xml", "atom.xml", "index.xml",
     "feed.json", "feed.rss", "feed.atom", "index.rss", "rss.php"}
)  # fmt: skip
FEED_SUFFIXES = (".xml", ".rss", ".atom")
# At least this many items, and this share of them, under one section makes it the listing.
MIN_ITEMS = 2
MIN_SHARE = 0.6


def _segments(url: str) -> list[str]:
    return [s for s in urlsplit(url).path.split("/") if s]


def _at(url: str, segments: list[str]) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + "/".join(segments), "", ""))


def _is_root(segments: list[str]) -> bool:
    """The site's root or one language's root (`/nl/`): a homepage, not a listing."""
    return not segments or (len(segments) == 1 and is_locale(segments[0]))


def listing_from_feed_url(feed_url: str) -> str | None:
    """The section URL a feed URL sits in (None for a feed at a site's or language's root)."""
    segments = _segments(feed_url)
    while segments and (
        segments[-1].lower() in FEED_SEGMENTS or segments[-1].lower().endswith(FEED_SUFFIXES)
    ):
        segments.pop()
    return None if _is_root(segments) else _at(feed_url, segments)


def listing_from_feed_body(body: bytes, feed_url: str) -> str | None:
    """The listing page a feed's own data names: its `<link>`, else its items' section."""
    parsed = feedparser.parse(body, sanitize_html=False, resolve_relative_uris=False)
    if not parsed.get("version"):
        return None
    domain = registrable_domain(feed_url)
    link = parsed.feed.get("link") if parsed.get("feed") else None
    if (
        isinstance(link, str)
        and registrable_domain(link) == domain
        and not _is_root(_segments(link))
    ):
        return _at(link, _segments(link))
    sections: Counter[str] = Counter()
    items = 0
    for entry in parsed.entries:
        url = entry.get("link")
        if not isinstance(url, str) or registrable_domain(url) != domain:
            continue
        items += 1
        segments = _segments(url)
        if len(segments) >= 2 and not _is_root(segments[:-1]):
            sections[_at(url, segments[:-1])] += 1
    if not sections:
        return None
    section, count = sections.most_common(1)[0]
    if count >= MIN_ITEMS and count >= MIN_SHARE * items:
        return section
    return None

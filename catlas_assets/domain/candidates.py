"""Discovery's candidate book, pure: every URL found for a surface, how, and how well.

A `Candidate` is one possible sensor: its URL and surface, the discovery method that found
it, a confidence, whether a request saw it answer (`verified`) and its path depth; its
`score` is the spec's `confidence × method weight × verified × depth`. The book keeps the
candidates of one company's discovery in the order they were found, answers the questions
the discovery steps ask ("is this surface found yet?", "the best careers page?"), and
builds each kind of find with the confidence that kind deserves. Discovery's I/O
(services/discovery.py) fills it; `selection.select` picks the sensors from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from catlas_assets.domain.classify import (
    NEWS_AS_BLOG_CONFIDENCE,
    PATH_KEYWORDS,
    classify_url,
    fold,
    is_archive,
    is_comments_feed,
    path_depth,
)
from catlas_assets.domain.feed_listing import listing_from_feed_url
from catlas_assets.domain.page_links import PageLinks
from catlas_assets.domain.status_hosts import STATUS_HOST_CONFIDENCE, is_offsite_status_page
from catlas_assets.domain.taxonomy import (
    DEPTH_DECAY,
    FOUND_SCORE,
    METHOD_WEIGHT,
    VERIFIED_FACTOR,
)
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import DiscoveryMethod, Surface

# The confidence of each kind of find that is not a classified URL (those carry the
# confidence `classify_url` gives them).
FEED_CONFIDENCE = 0.9  # a `link rel=alternate` feed on the company's own domain
FEED_LISTING_CONFIDENCE = 0.75  # the listing page a feed belongs to (feed_listing.py)
PROBE_CONFIDENCE = 0.8  # a common path that answered 200 and is no soft-404
SUBDOMAIN_CONFIDENCE = 0.9  # a surface subdomain that answered on the company's domain
BOARD_CONFIDENCE = {True: 1.0, False: 0.5}  # an ATS board whose API answered in its shape


@dataclass(frozen=True, kw_only=True)
class Candidate:
    url: str
    surface: Surface
    method: DiscoveryMethod
    confidence: float
    verified: bool
    depth: int
    connector: str = "generic_html"
    rejected: str = ""  # why it can never be chosen (robots, soft-404 ...); "" if eligible
    selected: bool = False
    reason: str = ""

    @property
    def score(self) -> float:
        return round(
            self.confidence
            * METHOD_WEIGHT[self.method]
            * VERIFIED_FACTOR[self.verified]
            * DEPTH_DECAY ** max(0, self.depth - 1),
            4,
        )


def origin(url: str) -> str:
    """`https://example.com/a?b` -> `https://example.com` (scheme and netloc as written)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def same_url(a: str, b: str) -> bool:
    """One page, whatever `www.`, a trailing slash or an empty path say."""

    def norm(u: str) -> tuple[str, str, str]:
        p = urlsplit(u)
        return ((p.hostname or "").removeprefix("www."), p.path.rstrip("/") or "/", p.query)

    return norm(a) == norm(b)


def website_variants(website: str) -> list[str]:
    """The website as given, then with/without `www.`, then over the other scheme."""
    parts = urlsplit(website)
    host = parts.netloc
    other_host = host.removeprefix("www.") if host.startswith("www.") else f"www.{host}"
    other_scheme = "http" if parts.scheme == "https" else "https"
    path = parts.path or "/"
    variants = [
        urlunsplit((parts.scheme, host, path, parts.query, "")),
        urlunsplit((parts.scheme, other_host, "/", "", "")),
        urlunsplit((other_scheme, host, "/", "", "")),
        urlunsplit((other_scheme, other_host, "/", "", "")),
    ]
    return list(dict.fromkeys(variants))


# -- each kind of find ------------------------------------------------------------------
def homepage_candidate(url: str) -> Candidate:
    return Candidate(
        url=url,
        surface=Surface.HOMEPAGE,
        method=DiscoveryMethod.NAV,
        confidence=1.0,
        verified=True,
        depth=0,
    )


def board_candidate(api_url: str, vendor: str, *, ok: bool, rejected: str) -> Candidate:
    """An ATS board's API endpoint, verified (`ok`) by one request to its vendor."""
    return Candidate(
        url=api_url,
        surface=Surface.JOBS_BOARD,
        method=DiscoveryMethod.ATS,
        confidence=BOARD_CONFIDENCE[ok],
        verified=ok,
        depth=1,
        connector=vendor,
        rejected=rejected,
    )


def status_api_candidate(url: str, method: DiscoveryMethod) -> Candidate:
    """A Statuspage summary endpoint that answered in its shape."""
    return Candidate(
        url=url,
        surface=Surface.STATUS,
        method=method,
        confidence=1.0,
        verified=True,
        depth=1,
        connector="statuspage",
    )


def probe_candidate(url: str, surface: Surface, *, rejected: str = "") -> Candidate:
    """A common-path probe: found (it answered) unless `rejected` says why not."""
    return Candidate(
        url=url,
        surface=surface,
        method=DiscoveryMethod.PROBE,
        confidence=PROBE_CONFIDENCE,
        verified=not rejected,
        depth=path_depth(url),
        rejected=rejected,
    )


def subdomain_candidate(url: str, surface: Surface) -> Candidate:
    return Candidate(
        url=url,
        surface=surface,
        method=DiscoveryMethod.SUBDOMAIN,
        confidence=SUBDOMAIN_CONFIDENCE,
        verified=True,
        depth=path_depth(url),
    )


def _classified(url: str, domain: str, method: DiscoveryMethod, text: str = "") -> list[Candidate]:
    """The candidates a URL is: its surface, and the blog too for a plain news section."""
    found = classify_url(url, company_domain=domain, text=text)
    if found is None or found.surface is Surface.HOMEPAGE:
        return []
    candidate = Candidate(
        url=url,
        surface=found.surface,
        method=method,
        confidence=found.confidence,
        verified=False,
        depth=path_depth(url),
    )
    if found.alternative is None:
        return [candidate]
    return [
        candidate,
        replace(candidate, surface=found.alternative, confidence=NEWS_AS_BLOG_CONFIDENCE),
    ]


# -- the book ---------------------------------------------------------------------------
class CandidateBook:
    """The candidates of one discovery, in the order found (one per URL, surface, method)."""

    def __init__(self) -> None:
        self.candidates: list[Candidate] = []

    def add(self, candidate: Candidate) -> None:
        for existing in self.candidates:
            if (existing.url, existing.surface, existing.method) == (
                candidate.url,
                candidate.surface,
                candidate.method,
            ):
                return
        self.candidates.append(candidate)

    def extend(self, candidates: Iterable[Candidate]) -> None:
        for candidate in candidates:
            self.add(candidate)

    def best(self, surface: Surface) -> Candidate | None:
        eligible = [c for c in self.candidates if c.surface is surface and not c.rejected]
        return max(eligible, key=lambda c: c.score, default=None)

    def has(self, surface: Surface) -> bool:
        """Whether the surface counts as found: no probe is spent on it any more."""
        return any(
            c.surface is surface and not c.rejected and (c.verified or c.score >= FOUND_SCORE)
            for c in self.candidates
        )

    def mark(self, url: str, surface: Surface, **changes: Any) -> None:
        self.candidates = [
            replace(c, **changes) if same_url(c.url, url) and c.surface is surface else c
            for c in self.candidates
        ]

    def reject(self, refuses: Callable[[str], bool], reason: str) -> list[str]:
        """Reject every eligible candidate whose URL `refuses`; returns those URLs."""
        refused: list[str] = []
        kept = []
        for candidate in self.candidates:
            if not candidate.rejected and refuses(candidate.url):
                candidate = replace(candidate, rejected=reason)
                refused.append(candidate.url)
            kept.append(candidate)
        self.candidates = kept
        return refused

    def verified_boards(self) -> int:
        return sum(1 for c in self.candidates if c.surface is Surface.JOBS_BOARD and c.verified)

    def boards_tried(self) -> int:
        return sum(1 for c in self.candidates if c.method is DiscoveryMethod.ATS)

    def add_links(self, page: PageLinks, domain: str) -> None:
        """The page's links that name a surface of `domain` (and status pages off it:
        status_hosts.py), and its feeds on `domain` but a comments or archive feed."""
        for link in page.links:
            method = DiscoveryMethod.NAV if link.region == "nav" else DiscoveryMethod.LINK
            self.extend(_classified(link.url, domain, method, link.text))
            if is_offsite_status_page(link.url, link.text, company_domain=domain):
                self.add(
                    Candidate(
                        url=link.url,
                        surface=Surface.STATUS,
                        method=method,
                        confidence=STATUS_HOST_CONFIDENCE,
                        verified=False,
                        depth=path_depth(link.url),
                    )
                )
        for feed in page.feeds:
            # A comments feed or a tag's feed is not the feed of the site's posts.
            if registrable_domain(feed) != domain or is_comments_feed(feed) or is_archive(feed):
                continue
            self.add(
                Candidate(
                    url=feed,
                    surface=Surface.FEED,
                    method=DiscoveryMethod.FEED,
                    confidence=FEED_CONFIDENCE,
                    verified=False,
                    depth=path_depth(feed),
                    connector="feed",
                )
            )

    def add_feed_listing(self, listing_url: str, domain: str) -> None:
        """The `blog`/`newsroom` page a feed belongs to, unless already a candidate.

        A listing whose name says nothing (`/posts`, `/stories`) is the blog; one under a
        news word (`/en/news`, `/presse/...`) the newsroom.
        """
        if registrable_domain(listing_url) != domain:
            return
        found = classify_url(listing_url, company_domain=domain)
        if found is not None and found.surface in (Surface.BLOG, Surface.NEWSROOM):
            surface = found.surface
        elif found is not None and found.surface is not Surface.HOMEPAGE:
            return  # a careers or docs feed is not a blog
        else:
            news_words = PATH_KEYWORDS[Surface.NEWSROOM][1]
            segments = [fold(s) for s in urlsplit(listing_url).path.split("/") if s]
            surface = Surface.NEWSROOM if news_words & set(segments) else Surface.BLOG
        if any(
            c.surface in (Surface.BLOG, Surface.NEWSROOM) and same_url(c.url, listing_url)
            for c in self.candidates
        ):
            return
        self.add(
            Candidate(
                url=listing_url,
                surface=surface,
                method=DiscoveryMethod.FEED,
                confidence=FEED_LISTING_CONFIDENCE,
                verified=False,
                depth=path_depth(listing_url),
            )
        )

    def add_feed_listings(self, domain: str) -> list[str]:
        """Listing pages for every eligible feed; the feeds at the site's root (their
        listing can only be read from the feed itself) are returned."""
        at_root = []
        for feed in [c for c in self.candidates if c.surface is Surface.FEED and not c.rejected]:
            listing = listing_from_feed_url(feed.url)
            if listing is None:
                at_root.append(feed.url)
            else:
                self.add_feed_listing(listing, domain)
        return at_root

    def add_sitemap_urls(self, urls: Iterable[str], domain: str) -> None:
        for url in urls:
            self.extend(_classified(url, domain, DiscoveryMethod.SITEMAP))

    def status_origins(self, homepage_url: str) -> list[str]:
        """Origins of status candidates on another host than the homepage's, sorted."""
        home_host = urlsplit(homepage_url).hostname
        return sorted(
            {
                origin(c.url)
                for c in self.candidates
                if c.surface is Surface.STATUS and urlsplit(c.url).hostname != home_host
            }
        )

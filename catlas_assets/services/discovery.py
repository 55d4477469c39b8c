"""discover_company: from a website to typed surface candidates, within a request budget.

The steps follow the spec (Discovery) in order of value, so that when the budget runs low
the least valuable ones are the ones cut: homepage (website variants, redirects) →
generic-HTML extraction of the homepage → the surfaces robots.txt names and allows
(method `robots`, no request: it was read before the homepage) → robots.txt `Sitemap:`
lines or `/sitemap.xml` (an index plus at most 4 children) → ATS detection in the
homepage and the best careers page, each board verified by one request to its vendor
(Workday: its public board page) → at most 12 common-path probes (soft-404 and
redirect-to-home rejected) → subdomain probes (DNS first, at most 6 GETs). Every HTTP
request counts against `discovery_max_requests` (robots.txt, redirect hops,
verification); DNS lookups do not. robots.txt is fetched once per host and obeyed
before any other request to that host.

This module writes nothing: `catlas discover` is a dry run of it, and onboarding
(services/onboarding.py) stores what it returns.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from catlas_assets.domain import ats
from catlas_assets.domain.classify import classify_url, path_depth
from catlas_assets.domain.page_links import PageLinks, extract_links, is_soft_404
from catlas_assets.domain.pipeline_data import Fetched
from catlas_assets.domain.robots import RobotsTxt
from catlas_assets.domain.selection import Candidate, select
from catlas_assets.domain.sitemap import SitemapError, parse_sitemap
from catlas_assets.domain.surfaces_from_robots import robots_candidates
from catlas_assets.domain.taxonomy import PROBE_PATHS, SUBDOMAIN_SURFACES
from catlas_assets.domain.urls import check_url, registrable_domain
from catlas_assets.domain.vocabulary import DiscoveryMethod, FailureClass, Surface
from catlas_assets.services.runtime import Runtime
from resources.fetcher import Fetcher
from resources.resolver import ResolutionError, UnsafeDestination
from resources.robots_cache import origin_of

MAX_SITEMAP_CHILDREN = 4
MAX_PROBES = 12
MAX_SUBDOMAIN_GETS = 6
MAX_ATS_VERIFICATIONS = 2
# Requests kept back while reading sitemaps, so the careers page and its ATS board can
# still be fetched and verified afterwards.
ATS_RESERVE = 4
STATUS_API_PATH = "/api/v2/summary.json"
# Any cached robots.txt entry will do: discovery is one short run, not a daemon.
_EVER = datetime(1970, 1, 1, tzinfo=UTC)
HTML_TYPES = ("text/html", "application/xhtml")
# A surface counts as found (no probe for it) once a candidate was verified or scores this
# much: a nav link (0.9 × 0.9 × 0.75 ≈ 0.6) does, a bare anchor-text guess does not.
FOUND_SCORE = 0.45


class DiscoveryStatus:
    ACTIVE = "active"
    NO_WEBSITE = "no_website"
    FAILED = "failed"


@dataclass
class DiscoveryResult:
    website: str | None
    status: str
    error: str = ""
    homepage_url: str | None = None
    domain: str | None = None  # registrable domain the site answered on
    original_domain: str | None = None
    redirected_from: str | None = None  # an off-domain redirect: the domain we started on
    candidates: list[Candidate] = field(default_factory=list)
    same_as: list[str] = field(default_factory=list)
    requests: int = 0
    elapsed_s: float = 0.0
    max_requests: int = 0
    budget_s: float = 0.0
    cut: list[str] = field(default_factory=list)  # steps the budget cut, in order
    robots_refused: list[str] = field(default_factory=list)  # URLs robots.txt kept us from

    @property
    def selected(self) -> list[Candidate]:
        return [c for c in self.candidates if c.selected]

    def stats(self) -> dict[str, Any]:
        """What goes to `companies.stats.discovery`."""
        return {
            "status": self.status,
            "requests": self.requests,
            "max_requests": self.max_requests,
            "elapsed_s": round(self.elapsed_s, 3),
            "budget_s": self.budget_s,
            "candidates": len(self.candidates),
            "selected": len(self.selected),
            "surfaces": sorted(c.surface.value for c in self.selected),
            "cut": self.cut,
            "robots_refused": len(self.robots_refused),
            "homepage": self.homepage_url,
            "redirected_from": self.redirected_from,
            "error": self.error,
        }

    def as_json(self) -> dict[str, Any]:
        return {
            **self.stats(),
            "website": self.website,
            "domain": self.domain,
            "same_as": self.same_as,
            "candidates": [
                {
                    "surface": c.surface.value,
                    "url": c.url,
                    "method": c.method.value,
                    "confidence": c.confidence,
                    "verified": c.verified,
                    "depth": c.depth,
                    "score": c.score,
                    "connector": c.connector,
                    "selected": c.selected,
                    "reason": c.reason,
                }
                for c in self.candidates
            ],
        }


class _BudgetSpent(Exception):
    """No request left (or no time): the current step and every later one are cut."""


@dataclass
class _Page:
    fetched: Fetched
    links: PageLinks | None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _same_url(a: str, b: str) -> bool:
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


class _Discovery:
    def __init__(self, runtime: Runtime, fetcher: Fetcher) -> None:
        s = runtime.settings
        self.runtime = runtime
        self.fetcher = fetcher
        self.base_config = fetcher.config
        self.max_requests = s.discovery_max_requests
        self.budget_s = s.discovery_budget_s
        self.max_sitemap_urls = s.discovery_max_sitemap_urls
        self.max_sensors = s.discovery_max_sensors_per_company
        self.started = time.monotonic()
        self.used = 0
        self.cut: list[str] = []
        self.agent = fetcher.config.user_agent
        self.robots_refused: list[str] = []
        self.candidates: list[Candidate] = []
        self.fetched_urls: set[str] = set()

    # -- budget and polite fetching ------------------------------------------------------
    def left(self) -> int:
        return self.max_requests - self.used

    def seconds_left(self) -> float:
        return self.budget_s - (time.monotonic() - self.started)

    def affordable(self, url: str) -> bool:
        """Whether a GET of `url` fits (plus the host's robots.txt if not yet read)."""
        need = 1 if self.fetcher.robots.get(origin_of(url), _EVER) is not None else 2
        return self.left() >= need and self.seconds_left() > 0

    def _cut(self, step: str) -> None:
        if step not in self.cut:
            self.cut.append(step)

    async def _raw_get(self, url: str) -> Fetched:
        left = self.left()
        seconds = self.seconds_left()
        if left < 1 or seconds <= 0:
            raise _BudgetSpent()
        # Redirect hops are requests too: never follow more than the budget has left.
        self.fetcher.config = replace(
            self.base_config,
            max_redirects=max(0, min(self.base_config.max_redirects, left - 1)),
            retries=0,
        )
        try:
            async with asyncio.timeout(seconds):
                # Off-domain redirects are followed: a renamed company's homepage moves.
                # The cap covers robots.txt (and its redirects) on a new origin too.
                fetched = await self.fetcher.fetch(url, follow_off_domain=True, max_requests=left)
        except TimeoutError:
            self.used += 1
            raise _BudgetSpent() from None
        finally:
            self.fetcher.config = self.base_config
        self.used += fetched.requests  # 0 when the fetcher refused it without asking
        if fetched.skipped_reason == "request_budget":
            raise _BudgetSpent()
        return fetched

    def rules_for(self, url: str) -> RobotsTxt | None:
        """The robots.txt rules the fetcher holds for the URL's origin (None: not read yet).

        The fetcher reads robots.txt once per origin before its first request there and
        refuses disallowed URLs itself; discovery reads the same cached rules for the
        `Sitemap:` lines and to reject candidates it will never fetch.
        """
        entry = self.fetcher.robots.get(origin_of(url), _EVER)
        return entry.robots if entry is not None and not entry.unavailable else None

    def allowed(self, url: str) -> bool | None:
        rules = self.rules_for(url)
        return None if rules is None else rules.allowed(url, self.agent)

    async def get(self, url: str) -> Fetched | None:
        """GET `url`; None when robots.txt refuses it (known beforehand or by the fetcher)."""
        if self.allowed(url) is False:
            self.robots_refused.append(url)
            return None
        self.fetched_urls.add(url)
        fetched = await self._raw_get(url)
        if fetched.failure_class is FailureClass.ROBOTS or fetched.skipped_reason:
            self.robots_refused.append(url)
            return None
        return fetched

    async def resolves(self, host: str, port: int) -> bool:
        try:
            await self.runtime.resolver.resolve(host, port)
        except (ResolutionError, UnsafeDestination):
            return False
        return True

    def reject_disallowed(self) -> None:
        """A URL robots.txt forbids never becomes a sensor (checked without a request)."""
        kept = []
        for candidate in self.candidates:
            if not candidate.rejected and self.allowed(candidate.url) is False:
                candidate = replace(candidate, rejected="robots.txt disallows it")
                self.robots_refused.append(candidate.url)
            kept.append(candidate)
        self.candidates = kept

    # -- candidates ----------------------------------------------------------------------
    def add(self, candidate: Candidate) -> None:
        for existing in self.candidates:
            if (existing.url, existing.surface, existing.method) == (
                candidate.url,
                candidate.surface,
                candidate.method,
            ):
                return
        self.candidates.append(candidate)

    def best(self, surface: Surface) -> Candidate | None:
        eligible = [c for c in self.candidates if c.surface is surface and not c.rejected]
        return max(eligible, key=lambda c: c.score, default=None)

    def has(self, surface: Surface) -> bool:
        return any(
            c.surface is surface and not c.rejected and (c.verified or c.score >= FOUND_SCORE)
            for c in self.candidates
        )

    def mark(self, url: str, surface: Surface, **changes: Any) -> None:
        self.candidates = [
            replace(c, **changes) if _same_url(c.url, url) and c.surface is surface else c
            for c in self.candidates
        ]

    def classify_links(self, page: PageLinks, domain: str) -> None:
        for link in page.links:
            found = classify_url(link.url, company_domain=domain, text=link.text)
            if found is None or found.surface is Surface.HOMEPAGE:
                continue
            method = DiscoveryMethod.NAV if link.region == "nav" else DiscoveryMethod.LINK
            self.add(
                Candidate(
                    url=link.url,
                    surface=found.surface,
                    method=method,
                    confidence=found.confidence,
                    verified=False,
                    depth=path_depth(link.url),
                )
            )
        for feed in page.feeds:
            if registrable_domain(feed) != domain:
                continue
            self.add(
                Candidate(
                    url=feed,
                    surface=Surface.FEED,
                    method=DiscoveryMethod.FEED,
                    confidence=0.9,
                    verified=False,
                    depth=path_depth(feed),
                    connector="feed",
                )
            )

    # -- the steps -----------------------------------------------------------------------
    async def homepage(self, website: str) -> tuple[Fetched | None, str]:
        last_error = "no variant of the website resolves"
        for variant in website_variants(website):
            parts = urlsplit(variant)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            if not await self.resolves(parts.hostname or "", port):
                continue
            if not self.affordable(variant):
                raise _BudgetSpent()
            fetched = await self.get(variant)
            if fetched is None:
                last_error = f"robots.txt of {parts.netloc} disallows its homepage"
                continue
            if fetched.failure_class is None and fetched.status == 200:
                return fetched, ""
            last_error = (
                f"{variant}: {fetched.failure_class.value if fetched.failure_class else ''} "
                f"{fetched.failure_detail or fetched.status}".strip()
            )
        return None, last_error

    def robots_named(self, site: str, domain: str) -> None:
        """Surfaces the site's robots.txt names and allows (method `robots`).

        The fetcher read that robots.txt before the homepage, so this costs no request.
        """
        rules = self.rules_for(site)
        if rules is None:
            return
        for candidate in robots_candidates(rules, site, domain=domain, agent=self.agent):
            self.add(candidate)

    async def sitemaps(self, site: str, domain: str) -> None:
        rules = self.rules_for(site)
        listed = list(rules.sitemaps) if rules is not None else []
        roots = [u for u in listed if registrable_domain(u) == domain][:2] or [
            f"{site}/sitemap.xml"
        ]
        queue = list(roots)
        children = 0
        urls: list[str] = []
        while queue and len(urls) < self.max_sitemap_urls:
            url = queue.pop(0)
            if self.left() <= ATS_RESERVE or not self.affordable(url):
                self._cut("sitemap")
                break
            fetched = await self.get(url)
            if fetched is None or fetched.failure_class is not None or fetched.status != 200:
                continue
            try:
                sitemap = parse_sitemap(fetched.body, max_urls=self.max_sitemap_urls - len(urls))
            except SitemapError:
                continue
            if sitemap.is_index:
                for child in sitemap.urls:
                    if children < MAX_SITEMAP_CHILDREN and registrable_domain(child) == domain:
                        queue.append(child)
                        children += 1
            else:
                urls.extend(sitemap.urls)
        for url in urls:
            found = classify_url(url, company_domain=domain)
            if found is None or found.surface is Surface.HOMEPAGE:
                continue
            self.add(
                Candidate(
                    url,
                    found.surface,
                    DiscoveryMethod.SITEMAP,
                    found.confidence,
                    False,
                    path_depth(url),
                )
            )

    async def verify_boards(self, urls: list[str]) -> None:
        verified = sum(1 for c in self.candidates if c.surface is Surface.JOBS_BOARD and c.verified)
        for board in ats.detect_boards(urls):
            if verified or len([c for c in self.candidates if c.method is DiscoveryMethod.ATS]) >= (
                MAX_ATS_VERIFICATIONS
            ):
                return
            if not self.affordable(board.verification_url):
                self._cut("ats")
                return
            fetched = await self.get(board.verification_url)
            ok = fetched is not None and ats.verify_answer(
                board.vendor, fetched.status, fetched.body
            )
            reason = "" if ok else f"{board.vendor} API did not answer in its shape"
            if fetched is None:
                reason = "robots.txt disallows the vendor API"
            self.add(
                Candidate(
                    url=board.api_url,
                    surface=Surface.JOBS_BOARD,
                    method=DiscoveryMethod.ATS,
                    confidence=1.0 if ok else 0.5,
                    verified=ok,
                    depth=1,
                    connector=board.vendor,
                    rejected=reason,
                )
            )
            verified += int(ok)

    async def careers_page(self, homepage_url: str) -> list[str]:
        """Fetch the best careers page (if any); the URLs on it, for ATS detection."""
        best = self.best(Surface.CAREERS)
        if best is None or best.url in self.fetched_urls:
            return []
        if not self.affordable(best.url):
            self._cut("ats")
            return []
        fetched = await self.get(best.url)
        if fetched is None:
            self.mark(best.url, Surface.CAREERS, rejected="robots.txt disallows it")
            return []
        if fetched.failure_class is not None or fetched.status != 200:
            self.mark(best.url, Surface.CAREERS, rejected=f"answered {fetched.status}")
            return []
        if _same_url(fetched.final_url, homepage_url):
            self.mark(best.url, Surface.CAREERS, rejected="redirects to the homepage")
            return []
        self.mark(best.url, Surface.CAREERS, verified=True)
        page = extract_links(fetched.body, fetched.content_type, fetched.final_url)
        return page.all_urls()

    async def status_from_links(self, status_hosts: list[str]) -> None:
        for origin in status_hosts:
            url = origin + STATUS_API_PATH
            if not self.affordable(url):
                self._cut("status")
                return
            fetched = await self.get(url)
            if (
                fetched is not None
                and fetched.status == 200
                and ats.is_statuspage_summary(fetched.body)
            ):
                self.add(
                    Candidate(
                        url=url,
                        surface=Surface.STATUS,
                        method=DiscoveryMethod.NAV,
                        confidence=1.0,
                        verified=True,
                        depth=1,
                        connector="statuspage",
                    )
                )

    async def probes(self, site: str, homepage_url: str) -> None:
        wanted = [(s, p) for s, p in PROBE_PATHS if not self.has(s)]
        if not wanted:
            return
        missing_text: str | None = None
        token = hashlib.sha256(site.encode()).hexdigest()[:12]
        reference = f"{site}/catlas-check-{token}-missing"
        if not self.affordable(reference):
            self._cut("probes")
            return
        fetched = await self.get(reference)
        if fetched is not None and fetched.status == 200 and fetched.failure_class is None:
            missing_text = extract_links(fetched.body, fetched.content_type, reference).text
        probes = 0
        for surface, path in wanted:
            if self.has(surface):
                continue
            if probes >= MAX_PROBES:
                break
            url = site + path
            if not self.affordable(url):
                self._cut("probes")
                return
            probes += 1
            fetched = await self.get(url)
            depth = path_depth(url)
            if fetched is None:
                self.add(_rejected_probe(url, surface, depth, "robots.txt disallows it"))
                probes -= 1  # no request was made
                continue
            if fetched.failure_class is not None or fetched.status != 200:
                status = fetched.status or (
                    fetched.failure_class.value if fetched.failure_class else "?"
                )
                self.add(_rejected_probe(url, surface, depth, f"answered {status}"))
                continue
            page = extract_links(fetched.body, fetched.content_type, fetched.final_url)
            rejected = ""
            if _same_url(fetched.final_url, homepage_url):
                rejected = "redirects to the homepage"
            elif is_soft_404(page.text, page.title, missing_text):
                rejected = "soft-404 (reads like a known-missing page)"
            self.add(
                Candidate(
                    fetched.final_url,
                    surface,
                    DiscoveryMethod.PROBE,
                    0.8,
                    not rejected,
                    path_depth(fetched.final_url),
                    rejected=rejected,
                )
            )
            if not rejected and surface is Surface.CAREERS:
                await self.verify_boards(page.all_urls())

    async def subdomains(self, site: str, domain: str) -> None:
        scheme = urlsplit(site).scheme
        gets = 0
        seen_hosts = {urlsplit(u).hostname for u in self.fetched_urls}
        for label, surface in SUBDOMAIN_SURFACES:
            if self.has(surface):
                continue
            host = f"{label}.{domain}"
            if host in seen_hosts:
                continue
            if gets >= MAX_SUBDOMAIN_GETS:
                return
            if not await self.resolves(host, 443 if scheme == "https" else 80):
                continue  # DNS first: a name that does not resolve costs no request
            origin = f"{scheme}://{host}"
            url = origin + (STATUS_API_PATH if surface is Surface.STATUS else "/")
            if not self.affordable(url):
                self._cut("subdomains")
                return
            gets += 1
            fetched = await self.get(url)
            if fetched is None or fetched.failure_class is not None or fetched.status != 200:
                continue
            if surface is Surface.STATUS:
                if ats.is_statuspage_summary(fetched.body):
                    self.add(
                        Candidate(
                            url,
                            surface,
                            DiscoveryMethod.SUBDOMAIN,
                            1.0,
                            True,
                            1,
                            connector="statuspage",
                        )
                    )
                continue
            if registrable_domain(fetched.final_url) != domain:
                continue
            self.add(
                Candidate(
                    fetched.final_url,
                    surface,
                    DiscoveryMethod.SUBDOMAIN,
                    0.9,
                    True,
                    path_depth(fetched.final_url),
                )
            )
            if surface is Surface.CAREERS:
                page = extract_links(fetched.body, fetched.content_type, fetched.final_url)
                await self.verify_boards(page.all_urls())

    # -- the whole run -------------------------------------------------------------------
    async def run(self, website: str) -> DiscoveryResult:
        original = registrable_domain(website)
        result = DiscoveryResult(
            website=website,
            status=DiscoveryStatus.FAILED,
            original_domain=original,
            max_requests=self.max_requests,
            budget_s=self.budget_s,
        )
        try:
            await self._steps(website, original, result)
        except _BudgetSpent:
            # The step that ran out and every later one are cut.
            self._cut("budget exhausted" if self.seconds_left() > 0 else "time exhausted")
            if result.homepage_url is None:
                result.error = "the budget ran out before the homepage answered"
        self.reject_disallowed()
        result.candidates = select(self.candidates, max_sensors=self.max_sensors)
        result.requests = self.used
        result.elapsed_s = time.monotonic() - self.started
        result.cut = self.cut
        result.robots_refused = self.robots_refused
        return result

    async def _steps(self, website: str, original: str, result: DiscoveryResult) -> None:
        fetched, error = await self.homepage(website)
        if fetched is None:
            result.error = f"homepage unreachable: {error}"
            return
        home = fetched.final_url
        domain = registrable_domain(home)
        result.homepage_url = home
        result.domain = domain
        result.status = DiscoveryStatus.ACTIVE
        if domain != original:
            result.redirected_from = original
        site = _origin(home)
        self.add(Candidate(home, Surface.HOMEPAGE, DiscoveryMethod.NAV, 1.0, True, 0))
        page = (
            extract_links(fetched.body, fetched.content_type, home)
            if fetched.content_type.startswith(HTML_TYPES) or not fetched.content_type
            else PageLinks()
        )
        result.same_as = page.same_as
        self.classify_links(page, domain)
        self.robots_named(site, domain)
        status_hosts = sorted(
            {
                _origin(c.url)
                for c in self.candidates
                if c.surface is Surface.STATUS
                and urlsplit(c.url).hostname != urlsplit(home).hostname
            }
        )
        await self.sitemaps(site, domain)
        await self.verify_boards(page.all_urls())
        await self.verify_boards(await self.careers_page(home))
        await self.status_from_links(status_hosts)
        await self.probes(site, home)
        await self.subdomains(site, domain)


async def discover_async(
    runtime: Runtime, website: str | None, fetcher: Fetcher
) -> DiscoveryResult:
    if not website:
        return DiscoveryResult(website=None, status=DiscoveryStatus.NO_WEBSITE)
    website = check_url(website)
    discovery = _Discovery(runtime, fetcher)
    return await discovery.run(website)


def discover_company(
    runtime: Runtime, website: str | None, *, dry_run: bool = False
) -> DiscoveryResult:
    """Discover one website's surfaces; the result is not stored here.

    `dry_run` (`catlas discover`) also keeps the fetcher off the state store: no domain
    budget is charged, nothing is written anywhere. robots.txt is honoured either way.
    """

    async def _run() -> DiscoveryResult:
        async with runtime.fetcher(governed=not dry_run) as fetcher:
            return await discover_async(runtime, website, fetcher)

    return asyncio.run(_run())


def _rejected_probe(url: str, surface: Surface, depth: int, reason: str) -> Candidate:
    """A common-path probe that did not find the surface, kept with why (discovery table)."""
    return Candidate(url, surface, DiscoveryMethod.PROBE, 0.8, False, depth, rejected=reason)

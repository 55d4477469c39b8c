"""discover_company: from a website to typed surface candidates, within a request budget.

The steps follow the spec (Discovery) in order of value, so that when the budget runs low
the least valuable ones are the ones cut: homepage (website variants, redirects) →
generic-HTML extraction of the homepage → the surfaces robots.txt names and allows
(method `robots`, no request: it was read before the homepage) → robots.txt `Sitemap:`
lines or `/sitemap.xml` (an index plus `discovery_max_sitemap_children`, 4) → ATS
detection in the homepage and the best careers page (a vendor's career site on the
company's own host, such as Teamtailor's, is known by its asset host), each board verified
by one request to its vendor (Workday: its public board page); with no careers page found, the
`careers.`/`jobs.` subdomain probes run here and the page that answers is that best
careers page (one that has no board but links a careers subdomain has that page read
too) → status pages linked off the company's domain (a status vendor's host) asked for
their Statuspage `summary.json` → the blog/newsroom listing page beside each feed (feed_listing.py) →
`discovery_max_probes` (12) common-path probes (soft-404 and redirect-to-home rejected) → subdomain probes (DNS first,
`discovery_max_subdomain_gets`, 6). Every HTTP request counts against
`discovery_max_requests` (robots.txt, redirect hops, verification); DNS lookups do not.
robots.txt is fetched once per host and obeyed before any other request to that host.

What was found and how it scores is the domain's (domain/candidates.py); this module only
makes the requests. It writes nothing: `catlas discover` is a dry run of it, and
onboarding (services/onboarding.py) stores what it returns.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from catlas_assets.domain import ats
from catlas_assets.domain.candidates import (
    Candidate,
    CandidateBook,
    board_candidate,
    homepage_candidate,
    origin,
    probe_candidate,
    same_url,
    status_api_candidate,
    subdomain_candidate,
    website_variants,
)
from catlas_assets.domain.classify import classify_url
from catlas_assets.domain.connectors.statuspage import SUMMARY_PATH
from catlas_assets.domain.feed_listing import listing_from_feed_body
from catlas_assets.domain.page_links import PageLinks, extract_links, is_soft_404
from catlas_assets.domain.pipeline_data import Fetched
from catlas_assets.domain.robots import RobotsTxt
from catlas_assets.domain.selection import select
from catlas_assets.domain.sitemap import SitemapError, parse_sitemap
from catlas_assets.domain.surfaces_from_robots import robots_candidates
from catlas_assets.domain.taxonomy import PROBE_PATHS, SUBDOMAIN_SURFACES
from catlas_assets.domain.urls import normalize_website, registrable_domain
from catlas_assets.domain.vocabulary import DiscoveryMethod, FailureClass, OnboardingStatus, Surface
from catlas_assets.services import event_loop
from catlas_assets.services.runtime import Runtime
from resources.fetcher import Fetcher
from resources.resolver import ResolutionError, UnsafeDestination
from resources.robots_gate import origin_of

# Any cached robots.txt entry will do: discovery is one short run, not a daemon.
_EVER = datetime(1970, 1, 1, tzinfo=UTC)
HTML_TYPES = ("text/html", "application/xhtml")


@dataclass
class DiscoveryResult:
    website: str | None
    status: OnboardingStatus  # active, no_website or failed (this attempt)
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


class _Discovery:
    """One company's discovery: the polite, budgeted requests and the steps that make them.

    What was found goes into a `CandidateBook` (domain/candidates.py), which holds every
    rule about candidates; this class only decides what to ask and asks it.
    """

    def __init__(self, runtime: Runtime, fetcher: Fetcher) -> None:
        self.runtime = runtime
        self.settings = runtime.settings
        self.fetcher = fetcher
        self.base_config = fetcher.config
        self.max_requests = self.settings.discovery_max_requests
        self.budget_s = self.settings.discovery_budget_s
        self.started = time.monotonic()
        self.used = 0
        self.cut: list[str] = []
        self.agent = fetcher.config.user_agent
        self.robots_refused: list[str] = []
        self.book = CandidateBook()
        self.fetched_urls: set[str] = set()
        self.subdomain_gets = 0

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

    async def ok_get(self, url: str) -> Fetched | None:
        """GET `url`; the answer only when it is a 200 without a failure."""
        fetched = await self.get(url)
        if fetched is None or fetched.failure_class is not None or fetched.status != 200:
            return None
        return fetched

    async def resolves(self, host: str, port: int) -> bool:
        try:
            await self.runtime.resolver.resolve(host, port)
        except (ResolutionError, UnsafeDestination):
            return False
        return True

    # -- the steps -----------------------------------------------------------------------
    async def homepage(self, website: str) -> tuple[Fetched | None, str, bool]:
        """The homepage, else why not; the flag says whether any variant resolved."""
        last_error = "no variant of the website resolves"
        resolved = False
        for variant in website_variants(website):
            parts = urlsplit(variant)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            if not await self.resolves(parts.hostname or "", port):
                continue
            resolved = True
            if not self.affordable(variant):
                raise _BudgetSpent()
            fetched = await self.get(variant)
            if fetched is None:
                last_error = f"robots.txt of {parts.netloc} disallows its homepage"
                continue
            if fetched.failure_class is None and fetched.status == 200:
                return fetched, "", True
            last_error = (
                f"{variant}: {fetched.failure_class.value if fetched.failure_class else ''} "
                f"{fetched.failure_detail or fetched.status}".strip()
            )
        return None, last_error, resolved

    def robots_named(self, site: str, domain: str) -> None:
        """Surfaces the site's robots.txt names and allows (method `robots`).

        The fetcher read that robots.txt before the homepage, so this costs no request.
        """
        rules = self.rules_for(site)
        if rules is not None:
            self.book.extend(robots_candidates(rules, site, domain=domain, agent=self.agent))

    async def sitemaps(self, site: str, domain: str) -> None:
        max_urls = self.settings.discovery_max_sitemap_urls
        rules = self.rules_for(site)
        listed = list(rules.sitemaps) if rules is not None else []
        own = [u for u in listed if registrable_domain(u) == domain]
        queue = own[: self.settings.discovery_max_sitemap_roots] or [f"{site}/sitemap.xml"]
        children = 0
        urls: list[str] = []
        while queue and len(urls) < max_urls:
            url = queue.pop(0)
            if self.left() <= self.settings.discovery_ats_reserve or not self.affordable(url):
                self._cut("sitemap")
                break
            fetched = await self.ok_get(url)
            if fetched is None:
                continue
            try:
                sitemap = parse_sitemap(fetched.body, max_urls=max_urls - len(urls))
            except SitemapError:
                continue
            if not sitemap.is_index:
                urls.extend(sitemap.urls)
                continue
            for child in sitemap.urls:
                if (
                    children < self.settings.discovery_max_sitemap_children
                    and registrable_domain(child) == domain
                ):
                    queue.append(child)
                    children += 1
        self.book.add_sitemap_urls(urls, domain)

    async def verify_boards(self, urls: list[str], page_url: str | None = None) -> None:
        """Verify the boards `urls` name (and, for a careers page at `page_url`, the
        vendor career site it is on the company's own host), one request each."""
        verified = self.book.verified_boards()
        for board in ats.detect_boards(urls, page_url=page_url):
            if (
                verified
                or self.book.boards_tried() >= self.settings.discovery_max_ats_verifications
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
            self.book.add(board_candidate(board.api_url, board.vendor, ok=ok, rejected=reason))
            verified += int(ok)

    async def careers_page(self, homepage_url: str) -> None:
        """Fetch the best careers page (if any) and verify the ATS board it names or is."""
        best = self.book.best(Surface.CAREERS)
        if best is None or best.url in self.fetched_urls:
            return
        if not self.affordable(best.url):
            self._cut("ats")
            return
        fetched = await self.get(best.url)
        rejected = ""
        if fetched is None:
            rejected = "robots.txt disallows it"
        elif fetched.failure_class is not None or fetched.status != 200:
            rejected = f"answered {fetched.status}"
        elif same_url(fetched.final_url, homepage_url):
            rejected = "redirects to the homepage"
        if rejected or fetched is None:
            self.book.mark(best.url, Surface.CAREERS, rejected=rejected)
            return
        self.book.mark(best.url, Surface.CAREERS, verified=True)
        page = extract_links(fetched.body, fetched.content_type, fetched.final_url)
        urls = [fetched.final_url, *page.all_urls()]
        if ats.detect_boards(urls, page_url=fetched.final_url):
            await self.verify_boards(urls, page_url=fetched.final_url)
            return
        await self.careers_subdomain_page(page, fetched.final_url)

    async def careers_subdomain_page(self, page: PageLinks, careers_url: str) -> None:
        """A careers page with no board that links the careers site on a subdomain
        (`/careers` -> "Open positions" -> `jobs.acme.com`, which embeds the ATS): that page
        is read too, once, and is the careers candidate it links."""
        domain = registrable_domain(careers_url)
        here = urlsplit(careers_url).hostname
        for link in page.links:
            if urlsplit(link.url).hostname == here or link.url in self.fetched_urls:
                continue
            found = classify_url(link.url, company_domain=domain, text=link.text)
            if found is None or found.surface is not Surface.CAREERS:
                continue
            if not self.affordable(link.url):
                self._cut("ats")
                return
            fetched = await self.ok_get(link.url)
            if fetched is None:
                return
            self.book.add_links(PageLinks(links=[link]), domain)
            self.book.mark(link.url, Surface.CAREERS, verified=True)
            other = extract_links(fetched.body, fetched.content_type, fetched.final_url)
            await self.verify_boards(
                [fetched.final_url, *other.all_urls()], page_url=fetched.final_url
            )
            return

    async def status_from_links(self, status_hosts: list[str]) -> None:
        for status_origin in status_hosts:
            url = status_origin + SUMMARY_PATH
            if not self.affordable(url):
                self._cut("status")
                return
            fetched = await self.get(url)
            if (
                fetched is not None
                and fetched.status == 200
                and ats.is_statuspage_summary(fetched.body)
            ):
                self.book.add(status_api_candidate(url, DiscoveryMethod.NAV))

    async def feed_listings(self, domain: str) -> None:
        """The blog/newsroom page beside each feed (spec: `feed` next to `blog`/`newsroom`).

        A feed in a section names its listing by its URL (no request); a feed at the root
        is read once, for its `<link>` or its items' section, while neither surface is found.
        """
        for feed_url in self.book.add_feed_listings(domain):
            if self.book.has(Surface.BLOG) or self.book.has(Surface.NEWSROOM):
                return
            if self.left() <= self.settings.discovery_ats_reserve or not self.affordable(feed_url):
                self._cut("feed listing")
                return
            fetched = await self.ok_get(feed_url)
            listing = listing_from_feed_body(fetched.body, feed_url) if fetched else None
            if listing is not None:
                self.book.add_feed_listing(listing, domain)

    async def probes(self, site: str, homepage_url: str) -> None:
        wanted = [(s, p) for s, p in PROBE_PATHS if not self.book.has(s)]
        if not wanted:
            return
        # A page that surely does not exist: what the site's soft-404s read like.
        token = hashlib.sha256(site.encode()).hexdigest()[:12]
        reference = f"{site}/catlas-check-{token}-missing"
        if not self.affordable(reference):
            self._cut("probes")
            return
        missing_text: str | None = None
        fetched = await self.get(reference)
        if fetched is not None and fetched.status == 200 and fetched.failure_class is None:
            missing_text = extract_links(fetched.body, fetched.content_type, reference).text
        probes = 0
        for surface, path in wanted:
            if self.book.has(surface):
                continue
            if probes >= self.settings.discovery_max_probes:
                break
            url = site + path
            if not self.affordable(url):
                self._cut("probes")
                return
            probes += 1
            fetched = await self.get(url)
            if fetched is None:
                self.book.add(probe_candidate(url, surface, rejected="robots.txt disallows it"))
                probes -= 1  # no request was made
                continue
            if fetched.failure_class is not None or fetched.status != 200:
                status = fetched.status or (
                    fetched.failure_class.value if fetched.failure_class else "?"
                )
                self.book.add(probe_candidate(url, surface, rejected=f"answered {status}"))
                continue
            page = extract_links(fetched.body, fetched.content_type, fetched.final_url)
            rejected = ""
            if same_url(fetched.final_url, homepage_url):
                rejected = "redirects to the homepage"
            elif is_soft_404(page.text, page.title, missing_text):
                rejected = "soft-404 (reads like a known-missing page)"
            self.book.add(probe_candidate(fetched.final_url, surface, rejected=rejected))
            if not rejected and surface is Surface.CAREERS:
                await self.verify_boards(page.all_urls(), page_url=fetched.final_url)

    async def subdomains(self, site: str, domain: str, only: Surface | None = None) -> None:
        """The surface subdomains still missing (DNS first); `only` one surface's labels.

        `careers.`/`jobs.` run early, as part of the careers/ATS step (`only=CAREERS`), when
        no careers page was found: the page that answers there is the best careers page,
        and its ATS is detected on it. The GET cap covers both calls.
        """
        scheme = urlsplit(site).scheme
        seen_hosts = {urlsplit(u).hostname for u in self.fetched_urls}
        for label, surface in SUBDOMAIN_SURFACES:
            if self.book.has(surface) or (only is not None and surface is not only):
                continue
            host = f"{label}.{domain}"
            if host in seen_hosts:
                continue
            if self.subdomain_gets >= self.settings.discovery_max_subdomain_gets:
                return
            if not await self.resolves(host, 443 if scheme == "https" else 80):
                continue  # DNS first: a name that does not resolve costs no request
            url = f"{scheme}://{host}" + (SUMMARY_PATH if surface is Surface.STATUS else "/")
            if not self.affordable(url):
                self._cut("subdomains")
                return
            self.subdomain_gets += 1
            fetched = await self.ok_get(url)
            if fetched is None:
                continue
            if surface is Surface.STATUS:
                if ats.is_statuspage_summary(fetched.body):
                    self.book.add(status_api_candidate(url, DiscoveryMethod.SUBDOMAIN))
                continue
            if registrable_domain(fetched.final_url) != domain:
                if surface is Surface.CAREERS:
                    # careers.acme.com -> the ATS's own board: that board is the find.
                    await self.verify_boards([fetched.final_url])
                continue
            self.book.add(subdomain_candidate(fetched.final_url, surface))
            if surface is Surface.CAREERS:
                page = extract_links(fetched.body, fetched.content_type, fetched.final_url)
                await self.verify_boards(page.all_urls(), page_url=fetched.final_url)

    # -- the whole run -------------------------------------------------------------------
    async def run(self, website: str) -> DiscoveryResult:
        original = registrable_domain(website)
        result = DiscoveryResult(
            website=website,
            status=OnboardingStatus.FAILED,
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
        # A URL robots.txt forbids never becomes a sensor (checked without a request).
        self.robots_refused += self.book.reject(
            lambda url: self.allowed(url) is False, "robots.txt disallows it"
        )
        result.candidates = select(
            self.book.candidates, max_sensors=self.settings.discovery_max_sensors_per_company
        )
        result.requests = self.used
        result.elapsed_s = time.monotonic() - self.started
        result.cut = self.cut
        result.robots_refused = self.robots_refused
        return result

    async def _steps(self, website: str, original: str, result: DiscoveryResult) -> None:
        fetched, error, resolved = await self.homepage(website)
        if fetched is None:
            result.error = f"homepage unreachable: {error}"
            if not resolved:
                # Spec: a website none of whose variants is in DNS is no website at all;
                # asking again changes nothing until someone gives another website.
                result.status = OnboardingStatus.NO_WEBSITE
            return
        home = fetched.final_url
        domain = registrable_domain(home)
        result.homepage_url = home
        result.domain = domain
        result.status = OnboardingStatus.ACTIVE
        if domain != original:
            result.redirected_from = original
        site = origin(home)
        self.book.add(homepage_candidate(home))
        page = (
            extract_links(fetched.body, fetched.content_type, home)
            if fetched.content_type.startswith(HTML_TYPES) or not fetched.content_type
            else PageLinks()
        )
        result.same_as = page.same_as
        self.book.add_links(page, domain)
        self.robots_named(site, domain)
        status_hosts = self.book.status_origins(home)
        await self.sitemaps(site, domain)
        await self.verify_boards(page.all_urls())
        await self.careers_page(home)
        await self.subdomains(site, domain, only=Surface.CAREERS)
        await self.status_from_links(status_hosts)
        await self.feed_listings(domain)
        await self.probes(site, home)
        await self.subdomains(site, domain)


async def discover_async(
    runtime: Runtime, website: str | None, fetcher: Fetcher
) -> DiscoveryResult:
    if not website:
        return DiscoveryResult(website=None, status=OnboardingStatus.NO_WEBSITE)
    website = normalize_website(website)
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

    return event_loop.run(_run())

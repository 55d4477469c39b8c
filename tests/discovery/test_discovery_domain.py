"""The pure parts of discovery: URL classification, sitemaps, ATS patterns, selection."""

from __future__ import annotations

import gzip

import pytest

from catlas_assets.domain.ats import detect_board, detect_boards, is_statuspage_summary
from catlas_assets.domain.candidates import Candidate
from catlas_assets.domain.classify import classify_url
from catlas_assets.domain.page_links import extract_links, is_soft_404
from catlas_assets.domain.selection import select
from catlas_assets.domain.sitemap import SitemapError, parse_sitemap
from catlas_assets.domain.vocabulary import DiscoveryMethod, Surface

D = "example.com"


@pytest.mark.parametrize(
    ("url", "text", "surface"),
    [
        ("https://example.com/careers", "", Surface.CAREERS),
        ("https://www.example.com/company/careers/", "", Surface.CAREERS),
        ("https://example.com/pricing", "", Surface.PRICING),
        ("https://example.com/press", "", Surface.NEWSROOM),
        ("https://example.com/about/team", "", Surface.PEOPLE),
        ("https://example.com/life-here", "Join us", Surface.CAREERS),
        ("https://status.example.com", "", Surface.STATUS),
        ("https://ir.example.com/", "", Surface.INVESTORS),
        ("https://example.com/blog/feed.xml", "", Surface.FEED),
        ("https://example.com/", "", Surface.HOMEPAGE),
    ],
)
def test_classify_url_names_the_surface_of_a_section(url: str, text: str, surface: Surface) -> None:
    found = classify_url(url, company_domain=D, text=text)
    assert found is not None and found.surface is surface and 0 < found.confidence <= 1


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/blog/why-we-moved-to-rust",  # an article, not the blog
        "https://other.com/careers",  # another site
        "https://dashboard.example.com/signup",  # an app subdomain
        "mailto:hello@example.com",
    ],
)
def test_classify_url_leaves_articles_apps_and_other_sites_alone(url: str) -> None:
    assert classify_url(url, company_domain=D) is None


URLSET = b"""<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://example.com/a</loc></url><url><loc>https://example.com/b</loc></url>
<url><loc>https://example.com/c</loc></url></urlset>"""


def test_sitemap_reads_plain_and_gzip_and_caps_the_urls() -> None:
    assert parse_sitemap(URLSET, max_urls=10).urls == (
        "https://example.com/a",
        "https://example.com/b",
        "https://example.com/c",
    )
    capped = parse_sitemap(gzip.compress(URLSET), max_urls=2)
    assert capped.urls == ("https://example.com/a", "https://example.com/b") and capped.truncated
    index = parse_sitemap(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<sitemap><loc>https://example.com/s1.xml.gz</loc></sitemap></sitemapindex>",
        max_urls=10,
    )
    assert index.is_index and index.urls == ("https://example.com/s1.xml.gz",)


def test_sitemap_refuses_entities_and_external_references() -> None:
    bomb = b"""<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY l2 "&lol;&lol;">]>
    <urlset><url><loc>&l2;</loc></url></urlset>"""
    external = b"""<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>
    <urlset><url><loc>&x;</loc></url></urlset>"""
    for body in (bomb, external, b"not xml", gzip.compress(b"<html></html>")):
        with pytest.raises(SitemapError):
            parse_sitemap(body, max_urls=10)


@pytest.mark.parametrize(
    ("url", "vendor", "api"),
    [
        ("https://boards.greenhouse.io/embed/job_board?for=acme&b=x", "greenhouse",
         "https://boards-api.greenhouse.io/v1/boards/acme/jobs"),
        ("https://boards.greenhouse.io/acme", "greenhouse",
         "https://boards-api.greenhouse.io/v1/boards/acme/jobs"),
        ("https://jobs.lever.co/acme/1234", "lever", "https://api.lever.co/v0/postings/acme?mode=json"),
        ("https://jobs.ashbyhq.com/acme", "ashby", "https://api.ashbyhq.com/posting-api/job-board/acme"),
        ("https://apply.workable.com/acme/", "workable",
         "https://apply.workable.com/api/v1/widget/accounts/acme"),
        ("https://acme.wd5.myworkdayjobs.com/en-US/External", "workday",
         "https://acme.wd5.myworkdayjobs.com/wday/cxs/acme/External/jobs"),
        ("https://acme.wd5.myworkdayjobs.com/wday/cxs/acme/External/jobs", "workday",
         "https://acme.wd5.myworkdayjobs.com/wday/cxs/acme/External/jobs"),
        ("https://acme.recruitee.com/", "recruitee", "https://acme.recruitee.com/api/offers/"),
        ("https://acme.jobs.personio.de/", "personio", "https://acme.jobs.personio.de/xml"),
        ("https://acme.teamtailor.com/jobs", "teamtailor", "https://acme.teamtailor.com/jobs.rss"),
        ("https://jobs.smartrecruiters.com/Acme1", "smartrecruiters",
         "https://api.smartrecruiters.com/v1/companies/Acme1/postings"),
    ],
)  # fmt: skip
def test_ats_boards_of_the_nine_vendors_are_detected_with_their_api(
    url: str, vendor: str, api: str
) -> None:
    board = detect_board(url)
    assert board is not None and (board.vendor, board.api_url) == (vendor, api)


def test_workday_is_verified_by_its_public_board_page_not_the_post_only_list() -> None:
    board = detect_board("https://acme.wd5.myworkdayjobs.com/en-US/External/job/Berlin/x_R-1")
    assert board is not None
    assert board.api_url == "https://acme.wd5.myworkdayjobs.com/wday/cxs/acme/External/jobs"
    assert board.verification_url == "https://acme.wd5.myworkdayjobs.com/External"
    lever = detect_board("https://jobs.lever.co/acme")
    assert lever is not None and lever.verification_url == lever.api_url


def test_ats_detection_ignores_ordinary_links_and_dedupes_boards() -> None:
    assert detect_board("https://example.com/careers") is None
    assert detect_board("https://apply.workable.com/j/ABC123") is None
    boards = detect_boards(["https://jobs.lever.co/acme", "https://jobs.lever.co/acme/42"])
    assert len(boards) == 1


def test_statuspage_summary_shape_is_recognised() -> None:
    assert is_statuspage_summary(b'{"page": {}, "status": {}, "components": []}')
    assert not is_statuspage_summary(b'{"status": "ok"}')


def test_page_links_split_navigation_from_body_and_read_embeds_feeds_same_as() -> None:
    html = b"""<html><head><link rel="alternate" type="application/rss+xml" href="/feed.xml">
    <script type="application/ld+json">{"@graph": [{"sameAs": ["https://x.com/acme"]}]}</script>
    </head><body><nav><a href="/careers">Careers</a></nav><main><a href="/pricing">Pricing</a>
    <iframe src="https://boards.greenhouse.io/embed/job_board?for=acme"></iframe></main></body></html>"""
    page = extract_links(html, "text/html", "https://example.com/")
    assert {(link.url, link.region) for link in page.links} == {
        ("https://example.com/careers", "nav"),
        ("https://example.com/pricing", "main"),
    }
    assert page.feeds == ["https://example.com/feed.xml"]
    assert page.same_as == ["https://x.com/acme"]
    assert page.embeds == ["https://boards.greenhouse.io/embed/job_board?for=acme"]


def test_soft_404_is_a_page_that_reads_like_a_known_missing_one() -> None:
    missing = "Oops, we looked everywhere. We could not find what you were after."
    assert is_soft_404(missing, "Acme", missing)
    assert is_soft_404("anything", "Page not found", None)
    assert not is_soft_404("Pricing: Starter $19, Pro $49, Enterprise", "Pricing", missing)


def _c(surface: Surface, url: str, method: DiscoveryMethod, verified: bool = False, depth: int = 1,
       confidence: float = 0.9, rejected: str = "") -> Candidate:  # fmt: skip
    return Candidate(
        url=url,
        surface=surface,
        method=method,
        confidence=confidence,
        verified=verified,
        depth=depth,
        rejected=rejected,
    )


def test_selection_takes_the_best_score_per_surface_and_keeps_jobs_board_and_feed() -> None:
    candidates = [
        _c(Surface.CAREERS, "https://e.com/careers", DiscoveryMethod.NAV),
        _c(Surface.CAREERS, "https://e.com/about/company/careers", DiscoveryMethod.NAV, depth=3),
        _c(Surface.JOBS_BOARD, "https://api/board", DiscoveryMethod.ATS, True, confidence=1.0),
        _c(Surface.BLOG, "https://e.com/blog", DiscoveryMethod.SITEMAP),
        _c(Surface.FEED, "https://e.com/blog/feed.xml", DiscoveryMethod.FEED),
        _c(Surface.PRICING, "https://e.com/pricing", DiscoveryMethod.PROBE, rejected="soft-404"),
    ]
    chosen = select(candidates, max_sensors=10)
    selected = {c.surface: c.url for c in chosen if c.selected}
    assert selected == {
        Surface.CAREERS: "https://e.com/careers",
        Surface.JOBS_BOARD: "https://api/board",
        Surface.BLOG: "https://e.com/blog",
        Surface.FEED: "https://e.com/blog/feed.xml",
    }
    reasons = {c.url: c.reason for c in chosen if not c.selected}
    assert reasons["https://e.com/pricing"] == "soft-404"
    assert "scored higher" in reasons["https://e.com/about/company/careers"]


def test_selection_cap_keeps_the_most_important_surfaces() -> None:
    candidates = [
        _c(Surface.LOCATIONS, "https://e.com/locations", DiscoveryMethod.NAV),
        _c(Surface.CAREERS, "https://e.com/careers", DiscoveryMethod.NAV),
        _c(Surface.DOCS, "https://e.com/docs", DiscoveryMethod.NAV),
    ]
    chosen = select(candidates, max_sensors=2)
    assert {c.surface for c in chosen if c.selected} == {Surface.CAREERS, Surface.DOCS}
    [dropped] = [c for c in chosen if not c.selected]
    assert dropped.reason == "over the cap of 2 sensors per company"

"""Discovery on sites shaped like Ghost, WordPress, Webflow, Hugo and Next.js sites, and on
a Teamtailor career site on a company's own host (fixtures/discovery_sites/README.md):
section words in nested paths, footer-only surfaces, status pages on a vendor's host, an
ATS recognised from its page's asset host, and the CMS archive pages that must never be a
surface's page."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from catlas_assets.domain.ats import detect_boards, detect_site_board
from catlas_assets.domain.candidates import Candidate, CandidateBook
from catlas_assets.domain.classify import classify_url, is_archive, is_comments_feed
from catlas_assets.domain.feed_listing import listing_from_feed_body, listing_from_feed_url
from catlas_assets.domain.page_links import PageLinks
from catlas_assets.domain.selection import select
from catlas_assets.domain.status_hosts import is_offsite_status_page
from catlas_assets.domain.vocabulary import DiscoveryMethod, Surface
from fixture_web import FixtureWeb, default_root

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_harness import Catlas

D = "acme-corp.com"
SITES = default_root().parent / "discovery_sites"
MAX_REQUESTS = 25


# -- the rules, pure --------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/tag/news/",
        "/tag/press",
        "/author/team/",
        "/authors/leadership",
        "/category/press/",
        "/blog/category/careers/",
        "/page/2/",
        "/news/page/3/",
        "/2025/11/",
        "/topics/pricing/",
    ],
)
def test_cms_archive_pages_are_never_a_surface(path: str) -> None:
    assert is_archive(f"https://{D}{path}")
    assert classify_url(f"https://{D}{path}", company_domain=D) is None
    assert classify_url(f"https://{D}{path}", company_domain=D, text="Press") is None


@pytest.mark.parametrize("path", ["/tag", "/page", "/team", "/pages/pricing", "/authoring"])
def test_a_section_that_only_looks_like_an_archive_word_is_not_one(path: str) -> None:
    assert not is_archive(f"https://{D}{path}")


@pytest.mark.parametrize(
    ("path", "text", "surface"),
    [
        ("/writing/", "", Surface.BLOG),
        ("/company/writing", "Writing", Surface.BLOG),
        ("/about/journal", "", Surface.BLOG),
        ("/resources/insights/", "", Surface.BLOG),
        ("/membership/", "", Surface.PRICING),
        ("/en/plans", "", Surface.PRICING),
        ("/de/preise", "", Surface.PRICING),
        ("/fr/tarifs", "", Surface.PRICING),
        ("/nl/prijzen", "", Surface.PRICING),
        ("/about/press", "", Surface.NEWSROOM),
        ("/company/news/", "Updates", Surface.BLOG),  # the menu's name decides a news section
        ("/company/news/", "", Surface.NEWSROOM),
        ("/fr/presse", "Presse", Surface.NEWSROOM),
    ],
)
def test_section_words_in_nested_paths(path: str, text: str, surface: Surface) -> None:
    found = classify_url(f"https://{D}{path}", company_domain=D, text=text)
    assert found is not None and found.surface is surface


def test_a_press_word_outranks_a_plain_news_word_which_may_be_the_blog() -> None:
    press = classify_url(f"https://{D}/fr/presse", company_domain=D)
    news = classify_url(f"https://{D}/fr/actualites", company_domain=D)
    assert press is not None and news is not None
    assert press.confidence > news.confidence
    assert press.alternative is None and news.alternative is Surface.BLOG


def _nav(url: str, surface: Surface, confidence: float) -> Candidate:
    return Candidate(
        url=url,
        surface=surface,
        method=DiscoveryMethod.NAV,
        confidence=confidence,
        verified=False,
        depth=1,
    )


def test_one_page_is_one_sensor_a_news_section_is_the_newsroom_or_else_the_blog() -> None:
    only_news = [_nav(f"https://{D}/news", Surface.NEWSROOM, 0.85)]
    only_news.append(_nav(f"https://{D}/news/", Surface.BLOG, 0.6))
    chosen = [(c.surface, c.url) for c in select(only_news, max_sensors=10) if c.selected]
    assert chosen == [(Surface.NEWSROOM, f"https://{D}/news")]
    both = [*only_news, _nav(f"https://{D}/press", Surface.NEWSROOM, 0.9)]
    chosen = [(c.surface, c.url) for c in select(both, max_sensors=10) if c.selected]
    assert chosen == [
        (Surface.NEWSROOM, f"https://{D}/press"),
        (Surface.BLOG, f"https://{D}/news/"),
    ]


def test_comments_feeds_are_not_the_posts_feed() -> None:
    assert is_comments_feed(f"https://{D}/comments/feed/")
    assert not is_comments_feed(f"https://{D}/feed/")
    book = CandidateBook()
    book.add_links(PageLinks(feeds=[f"https://{D}/comments/feed/", f"https://{D}/tag/x/feed/"]), D)
    assert book.candidates == []


def test_a_language_roots_feed_has_no_listing_of_its_own() -> None:
    assert listing_from_feed_url(f"https://{D}/nl/index.xml") is None
    assert listing_from_feed_url(f"https://{D}/de-ch/feed/") is None
    assert listing_from_feed_url(f"https://{D}/nl/blog/index.xml") == f"https://{D}/nl/blog"
    body = (
        f"<rss version='2.0'><channel><title>x</title><link>https://{D}/nl/</link>"
        f"<item><title>a</title><link>https://{D}/nl/a/</link></item>"
        f"<item><title>b</title><link>https://{D}/nl/b/</link></item></channel></rss>"
    ).encode()
    assert listing_from_feed_body(body, f"https://{D}/nl/index.xml") is None


@pytest.mark.parametrize(
    ("url", "text", "expected"),
    [
        ("https://acme.statuspage.io/", "", True),
        ("https://acme.instatus.com/", "Status", True),
        ("https://acme.betteruptime.com/", "Uptime", True),
        ("https://status.acme-cloud.io/", "System status", True),
        ("https://status.acme-cloud.io/", "Blog", False),  # a status host the text does not name
        ("https://www.statuspage.io/", "Status", False),  # the vendor's own site
        ("https://www.atlassian.com/software/statuspage", "Status", False),
        ("https://status.acme-corp.com/", "Status", False),  # own domain: classify_url's
    ],
)
def test_status_pages_off_the_company_domain(url: str, text: str, expected: bool) -> None:
    assert is_offsite_status_page(url, text, company_domain=D) is expected


def test_a_teamtailor_career_site_on_the_companys_host_is_known_by_its_assets() -> None:
    assets = ["https://assets.teamtailor-cdn.com/assets/packs/js/careersite-1a2b.js"]
    board = detect_site_board("https://careers.acme-corp.com/", assets)
    assert board is not None and board.vendor == "teamtailor"
    assert board.api_url == "https://careers.acme-corp.com/jobs.rss"
    assert (
        detect_site_board("https://careers.acme-corp.com/", ["https://cdn.example.net/a.js"])
        is None
    )
    # teamtailor.com's own hosts are no board, and a hosted board is not found twice.
    assert detect_boards(["https://www.teamtailor.com/?utm_source=careersite"]) == []
    hosted = detect_boards(
        ["https://acme.teamtailor.com/", *assets], page_url="https://acme.teamtailor.com/"
    )
    assert [b.api_url for b in hosted] == ["https://acme.teamtailor.com/jobs.rss"]


# -- whole discoveries on the sites ----------------------------------------------------
@pytest.fixture(scope="module")
def sites_web():
    with FixtureWeb(root=SITES) as web:
        yield web


@pytest.fixture
def catlas(tmp_path: Path, sites_web: FixtureWeb) -> Catlas:
    hosts = sites_web.write_hosts_file(tmp_path / "hosts")
    return Catlas(tmp_path, {"CATLAS_HOSTS": str(hosts), "CATLAS_DOMAIN_SPACING_S": "0"})


def _discover(catlas: Catlas, website: str) -> tuple[dict[str, dict], dict]:
    data = json.loads(catlas.ok("discover", website, "--json").out)
    assert data["requests"] <= MAX_REQUESTS
    return {c["surface"]: c for c in data["candidates"] if c["selected"]}, data


def _no_archive_selected(data: dict) -> None:
    assert not [c["url"] for c in data["candidates"] if c["selected"] and is_archive(c["url"])]


def test_ghost_writing_and_membership_without_tag_or_author_archives(catlas: Catlas) -> None:
    selected, data = _discover(catlas, "http://inkpot-journal.org")
    assert selected["blog"]["url"] == "http://inkpot-journal.org/writing/"
    assert selected["pricing"]["url"] == "http://inkpot-journal.org/membership/"
    assert selected["feed"]["url"] == "http://inkpot-journal.org/rss/"
    assert "newsroom" not in selected and "people" not in selected
    _no_archive_selected(data)


def test_wordpress_updates_is_the_blog_and_the_footer_press_page_the_newsroom(
    catlas: Catlas,
) -> None:
    selected, data = _discover(catlas, "http://orchardline.com")
    assert selected["blog"]["url"] == "http://orchardline.com/company/news/"
    assert selected["newsroom"]["url"] == "http://orchardline.com/company/press/"
    assert selected["careers"]["url"] == "http://orchardline.com/company/jobs/"
    assert selected["feed"]["url"] == "http://orchardline.com/feed/"
    assert "people" not in selected and "pricing" not in selected
    assert not [c for c in data["candidates"] if "comments" in c["url"] and c["selected"]]
    _no_archive_selected(data)


def test_a_french_press_page_in_the_footer_is_the_newsroom_and_the_news_the_blog(
    catlas: Catlas,
) -> None:
    selected, _ = _discover(catlas, "http://atelier-brume.fr/fr/")
    assert selected["newsroom"]["url"] == "http://atelier-brume.fr/fr/presse"
    assert selected["blog"]["url"] == "http://atelier-brume.fr/fr/actualites"
    assert selected["feed"]["url"] == "http://atelier-brume.fr/feed/"
    assert selected["careers"]["url"] == "http://atelier-brume.fr/fr/emplois"


def test_a_footer_status_page_on_statuspages_host_is_watched_through_its_api(
    catlas: Catlas,
) -> None:
    selected, _ = _discover(catlas, "http://quarrylane.io")
    status = selected["status"]
    assert status["url"] == "http://quarrylane.statuspage.io/api/v2/summary.json"
    assert status["connector"] == "statuspage" and status["verified"]


def test_a_status_page_on_a_vendor_without_the_api_is_watched_as_a_page(catlas: Catlas) -> None:
    selected, _ = _discover(catlas, "http://brambleworks.dev")
    assert selected["status"]["url"] == "https://brambleworks.instatus.com/"
    assert selected["status"]["connector"] == "generic_html"


def test_a_teamtailor_board_on_the_companys_own_careers_host(catlas: Catlas) -> None:
    selected, data = _discover(catlas, "http://tallyforge.com")
    assert selected["careers"]["url"] == "http://work.tallyforge.com/"
    board = selected["jobs_board"]
    assert board["url"] == "http://work.tallyforge.com/jobs.rss"
    assert board["connector"] == "teamtailor" and board["verified"]
    assert not [c for c in data["candidates"] if "www.teamtailor.com" in c["url"]]


def test_a_language_roots_feed_names_its_blog_by_its_items(catlas: Catlas) -> None:
    selected, data = _discover(catlas, "http://dijkwerf.nl/nl")
    assert selected["feed"]["url"] == "http://dijkwerf.nl/nl/index.xml"
    assert selected["blog"]["url"] == "http://dijkwerf.nl/nl/blog"
    assert not [
        c for c in data["candidates"] if c["surface"] == "blog" and c["url"].endswith("/nl")
    ]

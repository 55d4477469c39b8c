"""Sections under other names and surfaces on subdomains, on sites written here for the rule
(WordPress-, Hugo- and Next.js-shaped markup), served by the fixture server from a folder
of their own: a blog called Journal with its feed, a German site, a root feed whose items
name the listing, docs and investor sites on subdomains, an unlinked careers subdomain
whose page names its ATS in a JSON blob, and a site with every surface subdomain (the
request budget holds)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from catlas_assets.domain.candidates import CandidateBook
from catlas_assets.domain.classify import classify_url
from catlas_assets.domain.feed_listing import listing_from_feed_body, listing_from_feed_url
from catlas_assets.domain.vocabulary import Surface
from fixture_web import FixtureWeb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_harness import Catlas

D = "acme-corp.com"


@pytest.mark.parametrize(
    ("path", "surface"),
    [
        ("/resources/blog", Surface.BLOG),
        ("/en/journal/", Surface.BLOG),
        ("/stories", Surface.BLOG),
        ("/insights", Surface.BLOG),
        ("/updates", Surface.BLOG),
        ("/field-notes", Surface.BLOG),
        ("/engineering", Surface.BLOG),
        ("/de/magazin", Surface.BLOG),
        ("/company/news", Surface.NEWSROOM),
        ("/in-the-news", Surface.NEWSROOM),
        ("/media", Surface.NEWSROOM),
        ("/de/presse", Surface.NEWSROOM),
        ("/fr/actualites", Surface.NEWSROOM),
        ("/nl/nieuws", Surface.NEWSROOM),
        ("/es/prensa", Surface.NEWSROOM),
        ("/it/stampa", Surface.NEWSROOM),
        ("/sv/nyheter", Surface.NEWSROOM),
        ("/join-us", Surface.CAREERS),
        ("/work-with-us", Surface.CAREERS),
        ("/open-roles", Surface.CAREERS),
        ("/de/karriere", Surface.CAREERS),
        ("/fr/carri%C3%A8res", Surface.CAREERS),
        ("/nl/werken-bij", Surface.CAREERS),
        ("/es/trabaja-con-nosotros", Surface.CAREERS),
        ("/it/lavora-con-noi", Surface.CAREERS),
        ("/sv/karriär", Surface.CAREERS),
    ],
)
def test_sections_under_other_names_and_languages_are_classified(
    path: str, surface: Surface
) -> None:
    found = classify_url(f"https://{D}{path}", company_domain=D)
    assert found is not None and found.surface is surface


@pytest.mark.parametrize(
    ("text", "surface"),
    [
        ("Journal", Surface.BLOG),
        ("Field notes", Surface.BLOG),
        ("In the news", Surface.NEWSROOM),
        ("Press", Surface.NEWSROOM),
        ("Work with us", Surface.CAREERS),
        ("Open roles", Surface.CAREERS),
        ("Karriere", Surface.CAREERS),
        ("Nous rejoindre", Surface.CAREERS),
        ("Werken bij", Surface.CAREERS),
        ("Únete", Surface.CAREERS),
        ("Lavora con noi", Surface.CAREERS),
        ("Jobba hos oss", Surface.CAREERS),
    ],
)
def test_link_text_under_other_names_names_the_surface(text: str, surface: Surface) -> None:
    found = classify_url(f"https://{D}/x1", company_domain=D, text=text)
    assert found is not None and found.surface is surface


@pytest.mark.parametrize(
    ("url", "surface"),
    [
        ("https://docs.acme-corp.com/", Surface.DOCS),
        ("https://docs.acme-corp.com/en/latest/", Surface.DOCS),
        ("https://investors.acme-corp.com", Surface.INVESTORS),
        ("https://ir.acme-corp.com/", Surface.INVESTORS),
        ("https://careers.acme-corp.com/open-positions", Surface.CAREERS),
        ("https://help.acme-corp.com/", Surface.DOCS),
        ("https://about.acme-corp.com/careers", Surface.CAREERS),
    ],
)
def test_subdomain_links_are_classified_like_same_host_links(url: str, surface: Surface) -> None:
    found = classify_url(url, company_domain=D)
    assert found is not None and found.surface is surface


def test_subdomain_apps_stay_unclassified() -> None:
    assert classify_url("https://app.acme-corp.com/", company_domain=D) is None
    assert classify_url("https://dashboard.acme-corp.com/login", company_domain=D) is None


@pytest.mark.parametrize(
    ("feed", "listing"),
    [
        ("https://acme-corp.com/journal/feed/", "https://acme-corp.com/journal"),  # WordPress
        ("https://acme-corp.com/blog/rss/", "https://acme-corp.com/blog"),  # Ghost
        ("https://acme-corp.com/posts/index.xml", "https://acme-corp.com/posts"),  # Hugo
        ("https://acme-corp.com/blog/feed/atom/", "https://acme-corp.com/blog"),
        ("https://acme-corp.com/rss.xml", None),  # Next.js: only the feed can say
        ("https://acme-corp.com/feed/", None),
    ],
)
def test_a_feed_url_names_its_listing_page(feed: str, listing: str | None) -> None:
    assert listing_from_feed_url(feed) == listing


ROOT_RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Acme</title>
<link>https://acme-corp.com/</link>
<item><title>One</title><link>https://acme-corp.com/field-notes/one</link></item>
<item><title>Two</title><link>https://acme-corp.com/field-notes/two</link></item>
<item><title>Three</title><link>https://acme-corp.com/field-notes/three</link></item>
</channel></rss>"""


def test_a_root_feed_names_its_listing_by_its_link_or_its_items_section() -> None:
    assert listing_from_feed_body(ROOT_RSS, "https://acme-corp.com/rss.xml") == (
        "https://acme-corp.com/field-notes"
    )
    linked = ROOT_RSS.replace(b"acme-corp.com/</link>", b"acme-corp.com/writing</link>")
    assert listing_from_feed_body(linked, "https://acme-corp.com/rss.xml") == (
        "https://acme-corp.com/writing"
    )
    assert listing_from_feed_body(b"not a feed", "https://acme-corp.com/rss.xml") is None


def test_a_feed_listing_under_a_news_word_is_the_newsroom_and_never_duplicates() -> None:
    book = CandidateBook()
    book.add_feed_listing("https://acme-corp.com/en/presse/aktuell", D)
    book.add_feed_listing("https://acme-corp.com/en/presse/aktuell/", D)
    book.add_feed_listing("https://acme-corp.com/careers", D)  # a jobs feed is no blog
    assert [(c.surface, c.url) for c in book.candidates] == [
        (Surface.NEWSROOM, "https://acme-corp.com/en/presse/aktuell")
    ]


# -- whole discoveries on sites of their own --------------------------------------------
def _page(body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


SITES: dict[str, str] = {
    # WordPress-shaped: the blog is a "Journal" under /en/journal with its feed.
    "journal-co.net/index.html": _page(
        '<header><nav class="menu"><ul>'
        '<li class="menu-item"><a href="/en/journal/">Journal</a></li>'
        '<li class="menu-item"><a href="/about/life-at-journal-co/">Work with us</a></li>'
        "</ul></nav></header><main><h1>Journal Co</h1></main>",
        '<link rel="alternate" type="application/rss+xml" title="Journal Co » Feed" '
        'href="http://journal-co.net/en/journal/feed/">',
    ),
    "journal-co.net/en/journal/index.html": _page("<main><h1>Journal</h1></main>"),
    "journal-co.net/about/life-at-journal-co/index.html": _page("<main>Join us</main>"),
    # Next.js-shaped: a root feed, and no blog link at all; the feed's items say where.
    "rootfeed.io/index.html": _page(
        '<div id="__next"><main><h1>Rootfeed</h1></main></div>',
        '<link rel="alternate" type="application/rss+xml" href="/rss.xml">',
    ),
    "rootfeed.io/rss.xml": ROOT_RSS.decode().replace("https://acme-corp.com", "http://rootfeed.io"),
    # Docs and investors on subdomains linked from the navigation; careers on an
    # unlinked subdomain whose client-rendered page names its Greenhouse board in JSON.
    "brightside-labs.com/index.html": _page(
        '<header><nav><a href="http://docs.brightside-labs.com/">Docs</a>'
        '<a href="http://ir.brightside-labs.com/">Investors</a></nav></header><main>Hi</main>'
    ),
    "docs.brightside-labs.com/index.html": _page("<main>Docs</main>"),
    "ir.brightside-labs.com/index.html": _page("<main>Investor relations</main>"),
    "careers.brightside-labs.com/index.html": _page(
        '<div id="root"></div><script id="__DATA__" type="application/json">'
        '{"board":{"url":"http:\\/\\/boards.greenhouse.io\\/brightside"}}</script>'
    ),
    "boards-api.greenhouse.io/v1/boards/brightside/jobs": json.dumps(
        {"jobs": [], "meta": {"total": 0}}
    ),
    # The careers page on the main host has no board; it links the careers site on a
    # subdomain, whose page embeds the Lever board in a script tag.
    "twohop-works.com/index.html": _page('<nav><a href="/careers">Careers</a></nav>'),
    "twohop-works.com/careers.html": _page(
        '<main><a href="http://jobs.twohop-works.com/">See open positions</a></main>'
    ),
    "jobs.twohop-works.com/index.html": _page(
        '<main>Open positions</main><script src="http://jobs.lever.co/twohop/embed.js"></script>'
    ),
    "api.lever.co/v0/postings/twohop": "[]",
}
SURFACE_HOSTS = [
    "careers",
    "jobs",
    "news",
    "blog",
    "docs",
    "developer",
    "developers",
    "status",
    "investors",
    "ir",
    "shop",
]


@pytest.fixture(scope="module")
def own_web(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("sites")
    files = dict(SITES)
    # Every surface subdomain answers, and the homepage links 40 sections: the budget holds.
    links = "".join(f'<a href="/section-{i}/careers">Careers {i}</a>' for i in range(40))
    files["manyhosts.org/index.html"] = _page(f"<main>{links}</main>")
    for label in SURFACE_HOSTS:
        files[f"{label}.manyhosts.org/index.html"] = _page(f"<main>{label}</main>")
    for path, body in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    with FixtureWeb(root=root) as web:
        yield web


@pytest.fixture
def catlas(tmp_path: Path, own_web: FixtureWeb) -> Catlas:
    hosts = own_web.write_hosts_file(tmp_path / "hosts")
    return Catlas(tmp_path, {"CATLAS_HOSTS": str(hosts), "CATLAS_DOMAIN_SPACING_S": "0"})


def _selected(catlas: Catlas, website: str) -> tuple[dict[str, dict], dict]:
    data = json.loads(catlas.ok("discover", website, "--json").out)
    return {c["surface"]: c for c in data["candidates"] if c["selected"]}, data


def test_a_blog_named_journal_is_selected_beside_its_feed(catlas: Catlas) -> None:
    selected, data = _selected(catlas, "http://journal-co.net")
    assert selected["blog"]["url"] == "http://journal-co.net/en/journal/"
    assert selected["feed"]["url"] == "http://journal-co.net/en/journal/feed/"
    assert selected["careers"]["url"] == "http://journal-co.net/about/life-at-journal-co/"
    assert data["requests"] <= 25


def test_a_root_feed_gives_its_listing_page_as_the_blog(catlas: Catlas) -> None:
    selected, _ = _selected(catlas, "http://rootfeed.io")
    assert selected["feed"]["url"] == "http://rootfeed.io/rss.xml"
    assert selected["blog"]["url"] == "http://rootfeed.io/field-notes"
    assert selected["blog"]["method"] == "feed"


def test_docs_investors_and_an_unlinked_careers_subdomain_with_its_ats(catlas: Catlas) -> None:
    selected, data = _selected(catlas, "http://brightside-labs.com")
    assert selected["docs"]["url"] == "http://docs.brightside-labs.com/"
    assert selected["investors"]["url"] == "http://ir.brightside-labs.com/"
    assert selected["careers"]["url"] == "http://careers.brightside-labs.com/"
    assert selected["careers"]["method"] == "subdomain"
    board = selected["jobs_board"]
    assert board["connector"] == "greenhouse" and board["verified"]
    assert board["url"] == "http://boards-api.greenhouse.io/v1/boards/brightside/jobs"
    assert data["requests"] <= 25


def test_the_request_budget_holds_with_every_surface_subdomain_answering(
    catlas: Catlas,
) -> None:
    selected, data = _selected(catlas, "http://manyhosts.org")
    assert data["requests"] <= data["max_requests"] == 25
    assert "careers" in selected


def test_a_careers_page_without_a_board_leads_to_the_careers_subdomain_that_has_it(
    catlas: Catlas,
) -> None:
    selected, data = _selected(catlas, "http://twohop-works.com")
    board = selected["jobs_board"]
    assert board["connector"] == "lever" and board["verified"]
    assert data["requests"] <= 25

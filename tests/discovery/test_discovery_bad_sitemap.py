"""A sitemap nobody can read costs the sitemap alone: `discover` answers and `onboard`
seeds the sensors its homepage's nav links found (the real fixture server serves it)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from catlas_assets.domain.vocabulary import OnboardingStatus
from catlas_assets.services import catalog
from catlas_assets.services.discovery import discover_company
from catlas_assets.services.onboarding import onboard_company
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock

HOME = """<html><head><title>{name}</title></head><body>
<nav><a href="/">Home</a> <a href="/careers">Careers</a> <a href="/pricing">Pricing</a>
<a href="/blog">Blog</a></nav><h1>{name}</h1></body></html>"""
PAGES = {
    "careers.html": "<html><body><h1>Careers</h1><p>Open roles at our company.</p></body></html>",
    "pricing.html": "<html><body><h1>Pricing</h1><p>Plans from 10 EUR a month.</p></body></html>",
    "blog.html": "<html><body><h1>Blog</h1><article><h2>Hello</h2></article></body></html>",
}
NAV = {"http://{site}/careers", "http://{site}/pricing", "http://{site}/blog"}

# site -> (content type, body) of its /sitemap.xml
BAD_SITEMAPS = {
    "rot13-sitemap.com": (
        "application/xml",
        '<?xml version="1.0" encoding="rot13"?><urlset><url><loc>/a</loc></url></urlset>',
    ),
    "hex-sitemap.com": (
        "application/xml; charset=hex",
        "<urlset><url><loc>/a</loc></url></urlset>",
    ),
    "html-sitemap.com": ("text/html", "<html><body>not a sitemap</body></html>"),
    "broken-sitemap.com": ("application/xml", "<urlset><url><loc>http://[::1</loc></url><url>"),
    "gzip-sitemap.com": ("application/x-gzip", "\x1f\x8b\x08 this is no gzip stream"),
}


@pytest.fixture(scope="module")
def sitemap_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureWeb]:
    root = tmp_path_factory.mktemp("bad-sitemaps")
    for site, (ctype, body) in BAD_SITEMAPS.items():
        folder = root / site
        folder.mkdir()
        (folder / "index.html").write_text(HOME.format(name=site))
        for name, text in PAGES.items():
            (folder / name).write_text(text)
        (folder / "robots.txt").write_text(
            f"User-agent: *\nAllow: /\nSitemap: http://{site}/sitemap.xml\n"
        )
        (folder / "_site.toml").write_text(
            "[[route]]\n"
            'path = "/sitemap.xml"\n'
            "status = 200\n"
            f'headers = {{ "Content-Type" = {json.dumps(ctype)} }}\n'
            f"body = {json.dumps(body)}\n"
        )
    with FixtureWeb(root=root) as web:
        yield web


@pytest.fixture
def runtime(sitemap_web: FixtureWeb, tmp_path: Path) -> Iterator[Runtime]:
    settings = Settings(
        state_dir=str(tmp_path / "state"),
        hosts=str(sitemap_web.write_hosts_file(tmp_path / "hosts")),
        fetch_retries=0,
        domain_spacing_s=0.0,
    )
    built = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))
    yield built
    built.close()


@pytest.mark.parametrize("site", sorted(BAD_SITEMAPS))
def test_a_bad_sitemap_keeps_the_nav_links_for_discover_and_onboard(
    runtime: Runtime, sitemap_web: FixtureWeb, site: str
) -> None:
    nav = {url.format(site=site) for url in NAV}
    sitemap_web.clear_requests()

    found = discover_company(runtime, f"http://{site}", dry_run=True)

    assert found.status is OnboardingStatus.ACTIVE, found.error
    assert any(r.path == "/sitemap.xml" for r in sitemap_web.requests)  # it was read
    assert nav <= {c.url for c in found.selected}

    catalog.add_company(runtime, name=site, website=f"http://{site}")
    report = onboard_company(runtime, site)

    [company] = report.companies
    assert (company.status, company.error) == ("active", "")
    assert nav <= {s["url"] for s in runtime.store.list_sensors()}
    assert report.report.outcome.value != "failed"

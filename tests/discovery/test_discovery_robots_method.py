"""Discovery method `robots` and the vendor boards of the fixture companies.

A surface robots.txt names (`Allow: /newsroom`) becomes a candidate with method `robots`
when this crawler may fetch it, never when robots.txt disallows it; and every ATS vendor is
verified by one request, Workday through its public board page (its list endpoint answers
a POST only, so discovery never depends on how that endpoint is asked).
"""

from __future__ import annotations

from typing import Any

from catlas_assets.domain.robots import RobotsTxt
from catlas_assets.domain.surfaces_from_robots import path_of_rule, robots_candidates
from catlas_assets.domain.vocabulary import DiscoveryMethod, Surface
from catlas_assets.services.discovery import discover_company
from fixture_web import FixtureWeb

AGENT = "catlas/0.1 (+https://example.com/bot)"
SITE = "https://example.com"


def _robots(text: str) -> dict[str, tuple[Surface, DiscoveryMethod]]:
    rules = RobotsTxt.parse(text)
    found = robots_candidates(rules, SITE, domain="example.com", agent=AGENT)
    return {c.url: (c.surface, c.method) for c in found}


def test_allowed_paths_robots_txt_names_become_robots_candidates() -> None:
    found = _robots("User-agent: *\nDisallow: /\nAllow: /careers\nAllow: /blog/\nAllow: /app\n")
    assert found == {
        "https://example.com/careers": (Surface.CAREERS, DiscoveryMethod.ROBOTS),
        "https://example.com/blog/": (Surface.BLOG, DiscoveryMethod.ROBOTS),
    }


def test_a_path_robots_txt_disallows_is_never_a_candidate() -> None:
    found = _robots("User-agent: *\nDisallow: /investors\nDisallow: /jobs/\nAllow: /pricing\n")
    assert list(found) == ["https://example.com/pricing"]


def test_a_path_allowed_to_others_but_disallowed_to_catlas_is_not_a_candidate() -> None:
    text = "User-agent: *\nAllow: /pricing\n\nUser-agent: catlas\nDisallow: /pricing\n"
    assert _robots(text) == {}


def test_rule_patterns_are_read_up_to_their_wildcard() -> None:
    assert path_of_rule("/careers/*") == "/careers/"
    assert path_of_rule("/press$") == "/press"
    for pattern in ("/*.pdf$", "/", "*", "/search?q=*", "careers"):
        assert path_of_rule(pattern) is None
    assert _robots("User-agent: *\nDisallow: /*.pdf$\nAllow: /news/*\n") == {
        "https://example.com/news/": (Surface.NEWSROOM, DiscoveryMethod.ROBOTS)
    }


def test_named_paths_lists_every_rule_path_once_in_file_order() -> None:
    rules = RobotsTxt.parse(
        "User-agent: a\nDisallow: /x\nAllow: /y\n\nUser-agent: *\nDisallow: /x\nAllow: /z$\n"
    )
    assert rules.named_paths() == ("/x", "/y", "/z$")


def test_plover_newsroom_is_found_through_robots_txt_without_a_request(
    make_runtime, web: FixtureWeb, companies: list[dict[str, Any]]
) -> None:
    [plover] = [c for c in companies if c["name"] == "Plover Medical"]
    result = discover_company(make_runtime(), plover["website"])
    selected = {c.surface.value: (c.url, c.method.value) for c in result.selected}
    assert selected["newsroom"] == ("http://plover-medical.de/newsroom", "robots")
    requested = {r.path for r in web.requests if r.host == "plover-medical.de"}
    # robots.txt was read before the homepage anyway: naming the newsroom cost nothing.
    assert "/robots.txt" in requested and "/newsroom" not in requested
    for path in plover["robots_disallowed"]:
        assert path not in requested
        assert not any(
            c.url.endswith(path) and c.method is DiscoveryMethod.ROBOTS for c in result.candidates
        )
        assert not any(c.url.endswith(path) for c in result.selected)


def test_workday_is_verified_by_its_public_page_and_never_by_the_list_endpoint(
    make_runtime, web: FixtureWeb
) -> None:
    result = discover_company(make_runtime(), "http://wrenfield-freight.com")
    [board] = [c for c in result.selected if c.surface is Surface.JOBS_BOARD]
    assert (board.url, board.connector, board.verified) == (
        "http://wren.wd1.myworkdayjobs.com/wday/cxs/wren/External/jobs",
        "workday",
        True,
    )
    asked = [(r.method, r.path) for r in web.requests if r.host == "wren.wd1.myworkdayjobs.com"]
    assert asked == [("GET", "/robots.txt"), ("GET", "/External")]


def test_each_of_the_five_further_vendors_is_verified_with_one_request(
    make_runtime, web: FixtureWeb
) -> None:
    runtime = make_runtime()
    vendors = {
        "http://wrenfield-freight.com": ("workday", "wren.wd1.myworkdayjobs.com"),
        "http://swiftline.eu": ("recruitee", "swift.recruitee.com"),
        "http://plover-medical.de": ("personio", "plover.jobs.personio.de"),
        "http://finchgames.io": ("teamtailor", "finch.teamtailor.com"),
        "http://ternway.com": ("smartrecruiters", "api.smartrecruiters.com"),
    }
    for website, (vendor, host) in vendors.items():
        web.clear_requests()
        result = discover_company(runtime, website)
        boards = [c for c in result.selected if c.surface is Surface.JOBS_BOARD]
        assert [(c.connector, c.verified, c.method) for c in boards] == [
            (vendor, True, DiscoveryMethod.ATS)
        ], website
        on_vendor = [r.path for r in web.requests if r.host == host]
        assert len(on_vendor) == 2 and on_vendor[0] == "/robots.txt", website

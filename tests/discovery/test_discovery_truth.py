"""Discovery against every fixture company, compared with the planted truth.

Every planted surface is found with the right method and URL, nothing unplanted is
selected, no company uses more requests than its budget (counted by the fixture server's
own request log), and robots.txt is honoured.
"""

from __future__ import annotations

from typing import Any

from catlas_assets.services.discovery import discover_company
from fixture_web import FixtureWeb

MAX_REQUESTS = 25


def _selected(result) -> set[tuple[str, str, str]]:
    return {(c.surface.value, c.url, c.method.value) for c in result.selected}


def _planted(company: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(s["surface"], s["url"], s["method"]) for s in company["surfaces"]}


def test_discovery_finds_every_planted_surface_and_nothing_else(
    make_runtime, web: FixtureWeb, companies: list[dict[str, Any]]
) -> None:
    runtime = make_runtime()
    found_total = planted_total = true_positive = 0
    per_company = {}
    over_budget = {}
    for company in companies:
        web.clear_requests()
        result = discover_company(runtime, company.get("website"))
        served = len(web.requests)
        assert result.requests == served, company["name"]  # the budget counts every request
        if served > MAX_REQUESTS:
            over_budget[company["name"]] = served
        selected, planted = _selected(result), _planted(company)
        found_total += len(selected)
        planted_total += len(planted)
        true_positive += len(selected & planted)
        per_company[company["name"]] = (sorted(selected - planted), sorted(planted - selected))
        assert result.status == company["onboarding"]
        connectors = {(c.surface.value, c.connector) for c in result.selected}
        for surface in company["surfaces"]:
            if "connector" in surface:
                assert (surface["surface"], surface["connector"]) in connectors
    precision = true_positive / found_total
    recall = true_positive / planted_total
    print(
        f"\ndiscovery over {len(companies)} fixture companies: "
        f"precision {precision:.3f}, recall {recall:.3f} "
        f"({true_positive} of {planted_total} planted, {found_total} selected)"
    )
    assert over_budget == {}
    assert {name: diff for name, diff in per_company.items() if diff != ([], [])} == {}
    assert precision >= 0.95 and recall >= 0.95


def test_robots_txt_disallowed_paths_are_never_requested_nor_selected(
    make_runtime, web: FixtureWeb, companies: list[dict[str, Any]]
) -> None:
    [cobalt] = [c for c in companies if c["name"] == "Cobalt Mills"]
    result = discover_company(make_runtime(), cobalt["website"])
    requested = {r.path for r in web.requests if r.host == "cobaltmills.com"}
    for path in cobalt["robots_disallowed"]:
        assert path not in requested
        assert not any(c.url.endswith(path) for c in result.selected)
    refused = {c.url: c.reason for c in result.candidates if c.url.endswith("/investors")}
    assert refused == {"http://cobaltmills.com/investors": "robots.txt disallows it"}


def test_a_small_budget_cuts_subdomain_probes_first_and_is_never_exceeded(
    make_runtime, web: FixtureWeb
) -> None:
    # Pinecrest's status page is only reachable by a subdomain probe, the last step.
    result = discover_company(make_runtime(discovery_max_requests=8), "http://pinecrest.cloud")
    assert len(web.requests) == result.requests <= 8
    assert "status" not in {c.surface.value for c in result.selected}
    assert "probes" in result.cut or "budget exhausted" in result.cut
    assert {"homepage", "docs", "pricing"} <= {c.surface.value for c in result.selected}


def test_off_domain_redirect_moves_the_site_and_sitemaps_gzip_index_are_read(
    make_runtime, web: FixtureWeb
) -> None:
    runtime = make_runtime()
    renamed = discover_company(runtime, "http://oldname-systems.com")
    assert (renamed.redirected_from, renamed.domain) == ("oldname-systems.com", "novapeak.io")
    web.clear_requests()
    drift = discover_company(runtime, "http://driftwood-labs.io")
    paths = [r.path for r in web.requests]
    assert "/sitemap_index.xml" in paths and "/sitemaps/pages.xml.gz" in paths
    assert {c.method.value for c in drift.selected if c.surface.value != "homepage"} == {"sitemap"}


def test_soft_404_and_redirect_to_home_are_rejected(make_runtime, web: FixtureWeb) -> None:
    result = discover_company(make_runtime(), "http://mossgrove.com")
    reasons = {c.url: c.reason for c in result.candidates if c.method.value == "probe"}
    assert reasons["http://mossgrove.com/pricing"].startswith("soft-404")
    assert any(r == "redirects to the homepage" for r in reasons.values())


def test_no_website_makes_no_request(make_runtime, web: FixtureWeb) -> None:
    result = discover_company(make_runtime(), None)
    assert (result.status, result.requests, web.requests) == ("no_website", 0, [])


def test_the_time_budget_is_enforced_too(make_runtime, web: FixtureWeb) -> None:
    # A budget already spent before the first request: nothing is fetched, the cut is said.
    result = discover_company(make_runtime(discovery_budget_s=1e-9), "http://harborlight.com")
    assert (result.status, result.requests, web.requests) == ("failed", 0, [])
    assert result.cut == ["time exhausted"] and "budget ran out" in result.error

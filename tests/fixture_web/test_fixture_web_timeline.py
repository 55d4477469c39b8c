"""The planted timeline: each change appears on its day, and nothing else changes."""

from __future__ import annotations

import tomllib
from urllib.parse import urlsplit

import pytest

from fixture_web import FixtureWeb, default_root

NORTHWIND = "northwind-robotics.com"
BLUEFIN = "bluefin-analytics.io"
STATUS = "status.bluefin-analytics.io"
ORBIT = "orbitpay.com"
LAST_DAY = 16


def facts_changes() -> list[dict]:
    """The extraction timeline (ATS boards, Kestrel Labs): changes, noise and degradation."""
    return tomllib.loads((default_root().parent / "facts_timeline.toml").read_text())["change"]


@pytest.mark.parametrize(
    "change", facts_changes(), ids=lambda c: f"d{c['day']}-{c['host']}{c['path']}-{c['expect']}"
)
def test_every_planted_fact_change_moves_the_bytes_on_its_day(client, change) -> None:
    before = client.on_day(change["day"] - 1, change["host"], change["path"])
    after = client.on_day(change["day"], change["host"], change["path"])
    assert before.status_code == after.status_code == 200
    assert after.content != before.content


def changes() -> list[dict]:
    return tomllib.loads((default_root() / "timeline.toml").read_text())["change"]


def test_northwind_careers_gains_two_roles_on_day_3(client) -> None:
    before = client.on_day(2, NORTHWIND, "/careers").text
    after = client.on_day(3, NORTHWIND, "/careers").text
    for title in ("Staff Robotics Engineer", "Field Service Technician"):
        assert title not in before
        assert f'<h3 class="job-title">{title}</h3>' in after
    assert "Berlin, Germany" in after
    assert after.count('<li class="job"') == before.count('<li class="job"') + 2


def test_northwind_careers_drops_junior_qa_analyst_on_day_8(client) -> None:
    assert "Junior QA Analyst" in client.on_day(7, NORTHWIND, "/careers").text
    day8 = client.on_day(8, NORTHWIND, "/careers").text
    assert "Junior QA Analyst" not in day8
    assert "Staff Robotics Engineer" in day8


def test_northwind_pro_plan_goes_from_49_to_59_on_day_6(client) -> None:
    day5 = client.on_day(5, NORTHWIND, "/pricing").text
    day6 = client.on_day(6, NORTHWIND, "/pricing").text
    assert '<span class="amount">$49</span>' in day5
    assert '<span class="amount">$59</span>' in day6 and "$49" not in day6
    for text in (day5, day6):
        assert '<span class="amount">$19</span>' in text and "Contact us" in text


def test_northwind_blog_post_and_its_page_appear_on_day_11(client) -> None:
    assert "Northwind Dock" not in client.on_day(10, NORTHWIND, "/blog").text
    assert client.get(NORTHWIND, "/blog/introducing-northwind-dock").status_code == 404
    day11 = client.on_day(11, NORTHWIND, "/blog").text
    assert '<time datetime="2026-01-16">' in day11 and "Northwind Dock" in day11
    assert client.get(NORTHWIND, "/blog/introducing-northwind-dock").status_code == 200


def test_bluefin_careers_moves_with_a_301_on_day_5(client) -> None:
    day4 = client.on_day(4, BLUEFIN, "/careers")
    assert day4.status_code == 200
    assert client.get(BLUEFIN, "/company/careers").status_code == 404
    day5 = client.on_day(5, BLUEFIN, "/careers")
    assert day5.status_code == 301
    assert day5.headers["location"] == "/company/careers"
    moved = client.get(BLUEFIN, "/company/careers")
    assert moved.status_code == 200

    def roles(html: str) -> list[str]:
        return [line.strip() for line in html.splitlines() if '<td class="role">' in line]

    assert roles(moved.text) == roles(day4.text) and len(roles(day4.text)) == 4


def test_bluefin_company_careers_adds_a_role_on_day_10(client) -> None:
    assert "Machine Learning Engineer" not in client.on_day(9, BLUEFIN, "/company/careers").text
    assert "Machine Learning Engineer" in client.on_day(10, BLUEFIN, "/company/careers").text
    assert client.get(BLUEFIN, "/careers").status_code == 301


def test_bluefin_newsroom_gets_a_press_release_on_day_9(client) -> None:
    assert "Snowline" not in client.on_day(8, BLUEFIN, "/news").text
    assert "Snowline" in client.on_day(9, BLUEFIN, "/news").text
    assert client.get(BLUEFIN, "/news/snowline-partnership").status_code == 200


def test_status_summary_has_the_statuspage_shape(client) -> None:
    summary = client.get(STATUS, "/api/v2/summary.json").json()
    assert set(summary) == {"page", "components", "incidents", "scheduled_maintenances", "status"}
    assert {"id", "name", "url", "time_zone", "updated_at"} <= set(summary["page"])
    assert summary["status"] == {"indicator": "none", "description": "All Systems Operational"}
    assert summary["incidents"] == [] and summary["scheduled_maintenances"] == []
    assert {c["status"] for c in summary["components"]} == {"operational"}


def test_status_incident_on_day_7_resolved_on_day_8(client) -> None:
    day7 = client.on_day(7, STATUS, "/api/v2/summary.json").json()
    assert day7["status"]["indicator"] == "major"
    [incident] = day7["incidents"]
    assert incident["name"] == "API latency" and incident["impact"] == "major"
    statuses = {c["name"]: c["status"] for c in day7["components"]}
    assert statuses["API"] == "major_outage"
    assert set(statuses.values()) <= {
        "operational",
        "degraded_performance",
        "partial_outage",
        "major_outage",
    }

    day8 = client.on_day(8, STATUS, "/api/v2/summary.json").json()
    assert day8["status"] == {"indicator": "none", "description": "All Systems Operational"}
    assert day8["incidents"] == []
    assert {c["status"] for c in day8["components"]} == {"operational"}


def test_orbit_pricing_adds_scale_between_growth_and_enterprise_on_day_10(client) -> None:
    assert 'data-plan="scale"' not in client.on_day(9, ORBIT, "/pricing").text
    day10 = client.on_day(10, ORBIT, "/pricing").text
    order = [day10.index(f'data-plan="{plan}"') for plan in ("starter", "growth", "scale")]
    order.append(day10.index('data-plan="enterprise"'))
    assert order == sorted(order)


def test_orbit_docs_return_404_from_day_12(client) -> None:
    assert client.on_day(11, ORBIT, "/docs").status_code == 200
    assert client.on_day(12, ORBIT, "/docs").status_code == 404
    assert client.on_day(20, ORBIT, "/docs").status_code == 404
    assert client.get(ORBIT, "/blog").status_code == 200


@pytest.mark.parametrize("change", changes(), ids=lambda c: f"d{c['day']}-{c['host']}{c['path']}")
def test_every_planted_change_is_served_on_its_day(client, change) -> None:
    host, path, day = change["host"], change["path"], change["day"]
    before = client.on_day(day - 1, host, path)
    after = client.on_day(day, host, path)
    assert before.status_code == 200
    if change["expect"] == "change":
        assert after.status_code == 200 and after.content != before.content
    elif change["expect"] == "redirect":
        assert after.status_code in (301, 302, 307, 308)
        assert after.headers["location"] == change["location"]
    else:
        assert change["expect"] == "removed"
        assert after.status_code in (404, 410)


# Fault fixtures: hosts whose pages fail on demand (slow, reset, bombs) for the fetch layer.
FAULT_DOMAINS = ("faultline.dev", "faultline-labs.com", "patient-crawler.dev")
# The one planted change among them: robots-flip's robots.txt allows everything from day 3.
FAULT_CHANGES = {("robots-flip.faultline.dev", "/robots.txt", 3)}


def is_fault_host(host: str) -> bool:
    return any(host == d or host.endswith("." + d) for d in FAULT_DOMAINS)


def _every_url(web: FixtureWeb, *, faults: bool = False) -> list[tuple[str, str]]:
    urls = set()
    for host in web.hosts:
        if is_fault_host(host) is not faults:
            continue
        site = web.site(host)
        urls.update((host, page.url_path) for page in site.pages.values())
        urls.update(
            (host, route.path.rstrip("*") or "/")
            for route in site.routes
            # Slow, dropped, corrupt and multi-megabyte answers are exercised by the fetch tests.
            if not (
                route.delay_ms
                or route.fault
                or route.repeat > 1
                or "Content-Encoding" in route.headers
            )
        )
    return sorted(urls)


def test_fault_fixtures_answer_alike_every_day_but_the_robots_flip(client, web) -> None:
    urls = _every_url(web, faults=True)
    assert len(urls) > 30

    def answer(host: str, path: str) -> tuple[int, bytes]:
        response = client.get(host, path)
        return response.status_code, response.content

    web.set_day(0)
    previous = {url: answer(*url) for url in urls}
    changed = set()
    for day in range(1, LAST_DAY + 1):
        web.set_day(day)
        for host, path in urls:
            now = answer(host, path)
            if now != previous[host, path]:
                changed.add((host, path, day))
            previous[host, path] = now
    assert changed == FAULT_CHANGES


# Scheduler fixtures (tests/scheduler): a meaningful change, a removal, and a page whose
# validators lie (it changes, yet conditional requests keep getting 304).
SCHEDULER_CHANGES = {
    ("cadence-works.com", "/launches", 3),
    ("cadence-works.com", "/retired-line", 2),
    ("cadence-works.com", "/cache", 4),
}
# The site-crawl fixture (inkwell-press.com): a page that fails on day 1 and recovers, a
# post edited on day 1 and a news listing that gains an item on day 1 (tests/site_crawl).
SITE_CRAWL_CHANGES = {
    ("inkwell-press.com", "/news", 1),
    ("inkwell-press.com", "/blog/flaky", 1),
    ("inkwell-press.com", "/blog/flaky", 2),
    ("inkwell-press.com", "/blog/flaky", 3),
    ("inkwell-press.com", "/blog/post-03", 1),
}


def repair_changes() -> set[tuple[str, str, int]]:
    """The repair scenarios (fixtures/repair_scenarios.toml) and what says where pages went."""
    scenarios = tomllib.loads((default_root().parent / "repair_scenarios.toml").read_text())
    day = scenarios["day"]
    moved = {
        (urlsplit(s["url"]).hostname or "", urlsplit(s["url"]).path, day)
        for s in scenarios["scenario"]
    }
    return moved | {
        ("wayfarer-tools.com", "/", day),
        ("wayfarer-tools.com", "/sitemap.xml", day),
        ("wayfarer-tools.com", "/investors", day + 3),  # back after three days of 5xx
        ("tidewater-supply.com", "/sitemap.xml", 4),  # lists the demo's moved careers page
    }


def test_nothing_changes_except_what_the_timeline_plants(client, web: FixtureWeb) -> None:
    repairs = repair_changes()
    planted = (
        {(c["host"], c["path"], c["day"]) for c in changes()}
        | SCHEDULER_CHANGES
        | SITE_CRAWL_CHANGES
        | {(c["host"], c["path"], c["day"]) for c in facts_changes()}
        | repairs
    )
    planted_days = (
        {(c["host"], c["day"]) for c in (*changes(), *facts_changes())}
        | {(host, day) for host, _, day in repairs}
        | {("blog.wayfarer-tools.com", 3)}
    )
    urls = _every_url(web)
    assert len(urls) > 25

    def answer(host: str, path: str) -> tuple[int, bytes]:
        response = client.get(host, path)
        return response.status_code, response.content

    web.set_day(0)
    previous = {url: answer(*url) for url in urls}
    unplanned = []
    for day in range(1, LAST_DAY + 1):
        web.set_day(day)
        for host, path in urls:
            now = answer(host, path)
            was = previous[host, path]
            # A new page linked from a planted change (a post, a moved page) may appear that day.
            appears = was[0] == 404 and now[0] == 200 and (host, day) in planted_days
            if now != was and (host, path, day) not in planted and not appears:
                unplanned.append((day, host, path, was[0], now[0]))
            previous[host, path] = now
    assert unplanned == []


def test_discovery_fixture_companies_are_served_and_static(web: FixtureWeb) -> None:
    # The discovery fixtures (fixtures/discovery_truth.toml) plant no timeline changes; the
    # test above checks they never change. Here: every company's website and every planted
    # surface host is a host the fixture web serves.
    from urllib.parse import urlsplit

    truth = tomllib.loads((default_root().parent / "discovery_truth.toml").read_text())
    hosts = set(web.hosts)
    for company in truth["company"]:
        urls = [company.get("website")] + [s["url"] for s in company["surfaces"]]
        for url in filter(None, urls):
            assert urlsplit(url).hostname in hosts, (company["name"], url)


def test_the_workday_post_fixture_host_is_covered_and_static(web: FixtureWeb) -> None:
    # relay.wd3.myworkdayjobs.com (the fetcher's POST redirect/retry cases) plants no change:
    # the test above checks every one of its files and routes over days 0-16.
    relay = {path for host, path in _every_url(web) if host == "relay.wd3.myworkdayjobs.com"}
    assert "/wday/cxs/relay/External/jobs?limit=20&offset=0" in relay
    assert {"/wday/cxs/relay/Moved/jobs", "/wday/cxs/relay/SeeOther/jobs"} <= relay


# The companies whose sites link or embed the five further ATS vendors (discovery truth).
VENDOR_COMPANY_HOSTS = (
    "wrenfield-freight.com",
    "swiftline.eu",
    "plover-medical.de",
    "finchgames.io",
    "ternway.com",
)


def test_the_vendor_board_companies_are_covered_and_static(client, web: FixtureWeb) -> None:
    # The static-timeline test above checks every file of these hosts over days 0-16.
    urls = set(_every_url(web))
    assert set(VENDOR_COMPANY_HOSTS) <= {host for host, _ in urls}
    assert ("wren.wd1.myworkdayjobs.com", "/External") in urls  # the board's public page
    for host in VENDOR_COMPANY_HOSTS:
        assert client.get(host, "/").status_code == 200
    robots = client.get("plover-medical.de", "/robots.txt").text
    assert "Allow: /newsroom" in robots and "Disallow: /investors" in robots

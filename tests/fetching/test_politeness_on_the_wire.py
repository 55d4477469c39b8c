"""Politeness through the real fixture server: robots.txt, budgets, Retry-After, spacing, safety.

The server's request log is the witness: what was never requested, and when what was
requested arrived (real monotonic time; the virtual clock only moves the sites' days).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from catlas_assets.domain.vocabulary import FailureClass, Outcome, ReviewKind, SensorStatus
from catlas_assets.services import sql
from catlas_assets.services.tick import run_tick
from resources.resolver import Destination, Resolver
from resources.state.domain_budgets import DomainBudgets

F = "http://faultline.dev"


def _observations(w) -> int:
    return sql.query(w.runtime, "select count(*) from observations").rows[0][0]


# -- robots.txt -------------------------------------------------------------------------------
def test_robots_5xx_postpones_the_fetch_as_skipped_not_blocked(watch) -> None:
    w = watch(robots_unavailable_retry_s=1800)
    sensor_id = w.sensor("http://robots-500.faultline.dev/")
    before = w.row(sensor_id)
    result = w.run(sensor_id)
    assert result.outcome is Outcome.SKIPPED and "robots_unavailable" in result.summary
    row = w.row(sensor_id)
    assert row["status"] == before["status"] == SensorStatus.PENDING
    assert row["consecutive_failures"] == 0
    assert row["current_interval_s"] == before["current_interval_s"]
    assert row["next_run_at"] == w.runtime.clock.now() + timedelta(seconds=1800)
    assert w.requested() == ["robots-500.faultline.dev/robots.txt"]
    assert _observations(w) == 0 and w.reviews() == []


def test_robots_4xx_means_no_rules(watch) -> None:
    w = watch()
    assert w.run(w.sensor("http://robots-404.faultline.dev/")).outcome is Outcome.OK
    assert w.requested() == [
        "robots-404.faultline.dev/robots.txt",
        "robots-404.faultline.dev/",
    ]


def test_a_redirected_robots_txt_is_followed_and_governs_the_original_origin(watch) -> None:
    w = watch()
    result = w.run(w.sensor("http://robots-moved.faultline.dev/private/secret"))
    assert result.failure_class is FailureClass.ROBOTS
    assert w.requested() == [
        "robots-moved.faultline.dev/robots.txt",
        "faultline.dev/robots.txt",
    ]


def test_a_robots_redirect_loop_makes_robots_unavailable(watch) -> None:
    w = watch()
    assert w.run(w.sensor("http://robots-loop.faultline.dev/")).outcome is Outcome.SKIPPED
    assert "robots-loop.faultline.dev/" not in w.requested()


def test_binary_and_huge_robots_files_are_read_without_failing(watch) -> None:
    w = watch()
    assert w.run(w.sensor("http://robots-binary.faultline.dev/")).outcome is Outcome.OK
    huge = w.sensor("http://robots-huge.faultline.dev/")
    deep = w.sensor("http://robots-huge.faultline.dev/deep")
    assert w.run(huge).outcome is Outcome.OK
    assert w.run(deep).failure_class is FailureClass.ROBOTS
    assert w.requested("robots-huge.faultline.dev") == [
        "robots-huge.faultline.dev/robots.txt",
        "robots-huge.faultline.dev/",
    ]


def test_robots_txt_is_cached_per_origin_until_its_ttl(watch) -> None:
    w = watch(robots_ttl_s=3600)
    a, b = w.sensor(f"{F}/ok"), w.sensor(f"{F}/")
    w.run(a)
    w.run(b)
    w.advance(timedelta(minutes=30))
    w.run(a)
    assert w.requested().count("faultline.dev/robots.txt") == 1
    w.advance(timedelta(minutes=31))
    w.run(a)
    assert w.requested().count("faultline.dev/robots.txt") == 2


def test_a_new_process_trusts_the_robots_txt_another_fetched_until_it_expires(
    watch, database_url: str
) -> None:
    """The files live in the state store: a worker that starts later (a `schedule --once`,
    a lane) asks no site for a robots.txt another worker fetched within its TTL, and reads
    the same rules, unavailability included."""
    w = watch(database_url, robots_ttl_s=3600, robots_unavailable_retry_s=1800)
    ok, hidden = w.sensor(f"{F}/ok"), w.sensor("http://robots-moved.faultline.dev/private/x")
    down = w.sensor("http://robots-500.faultline.dev/")
    assert w.run(ok).outcome is Outcome.OK
    assert w.run(hidden).failure_class is FailureClass.ROBOTS
    assert w.run(down).outcome is Outcome.SKIPPED
    fetched = [p for p in w.requested() if p.endswith("/robots.txt")]
    assert len(fetched) == 4  # faultline.dev, robots-moved (redirected) and robots-500

    def new_process() -> None:
        w.runtime.__dict__.pop("robots_cache")  # what a new process starts with
        w.web.clear_requests()

    new_process()
    w.advance(timedelta(minutes=20))
    assert w.run(ok).outcome is Outcome.UNCHANGED  # fetched (allowed), as before
    hidden_run = w.run(hidden)
    assert hidden_run.failure_class is FailureClass.ROBOTS
    assert "faultline.dev/robots.txt" in hidden_run.summary  # the file it was read from
    assert w.run(down).outcome is Outcome.SKIPPED
    assert [p for p in w.requested() if p.endswith("/robots.txt")] == []

    new_process()
    w.advance(timedelta(minutes=45))  # 65 minutes after the fetch: the files have expired
    assert w.run(ok).outcome is Outcome.UNCHANGED
    assert w.requested().count("faultline.dev/robots.txt") == 1


def test_a_blocked_sensor_returns_to_active_when_robots_allows_it_again(
    watch, database_url: str
) -> None:
    w = watch(database_url, robots_ttl_s=86400)
    sensor_id = w.sensor("http://robots-flip.faultline.dev/jobs")
    assert w.run(sensor_id).failure_class is FailureClass.ROBOTS
    assert w.row(sensor_id)["status"] == SensorStatus.BLOCKED
    [item] = w.reviews(ReviewKind.BLOCKED_SOURCE)
    assert item["status"] == "open"

    # Before its next run the sensor is not looked at, though the cached file has expired.
    due = w.row(sensor_id)["next_run_at"]
    assert due > w.runtime.clock.now() + timedelta(days=1)
    w.advance(timedelta(days=1, hours=1))
    run_tick(w.runtime)
    assert w.row(sensor_id)["status"] == SensorStatus.BLOCKED
    assert w.requested().count("robots-flip.faultline.dev/robots.txt") == 1

    # Day 3 the site allows /jobs: once due, the fresh robots.txt unblocks it.
    w.advance(max(due - w.runtime.clock.now(), timedelta(days=2)) + timedelta(seconds=1))
    assert w.web.day >= 3
    run_tick(w.runtime)
    assert w.row(sensor_id)["status"] == SensorStatus.ACTIVE
    assert w.reviews(ReviewKind.BLOCKED_SOURCE)[0]["status"] == "closed"
    jobs = [r for r in w.web.requests if r.path == "/jobs"]
    assert [r.day for r in jobs] == [w.web.day]  # fetched in the same tick, never before day 3
    assert jobs[0].day >= 3


# -- domain budgets and Retry-After -------------------------------------------------------------
def test_an_exhausted_daily_budget_skips_and_never_asks_the_domain(watch, database_url) -> None:
    w = watch(database_url)
    ids = [w.sensor(f"{F}/{p}") for p in ("ok", "", "private/press-kit", "hop/12")]
    w.budgets.set_budget("faultline.dev", 3, w.runtime.clock.now())
    outcomes = [w.run(i).outcome for i in ids]
    assert outcomes == [Outcome.OK, Outcome.OK, Outcome.SKIPPED, Outcome.SKIPPED]
    assert len(w.requested("faultline.dev")) == 3  # robots.txt and two pages: the budget
    skipped = w.row(ids[3])
    midnight = datetime(2026, 1, 6, tzinfo=UTC)
    assert skipped["next_run_at"] == midnight
    assert skipped["consecutive_failures"] == 0 and skipped["status"] == SensorStatus.PENDING
    assert w.budgets.get("faultline.dev")["used_today"] == 3
    # A new UTC day resets the count lazily, at its first request.
    w.advance(timedelta(days=1))
    assert w.run(ids[3]).outcome is Outcome.OK
    assert w.budgets.get("faultline.dev")["used_today"] == 2  # robots.txt (its TTL ran out), page


@pytest.mark.parametrize(
    ("path", "blocked_until"),
    [
        ("/rate-limited", datetime(2026, 1, 5, 8, 10, tzinfo=UTC)),
        ("/rate-limited-until", datetime(2026, 1, 5, 10, 0, tzinfo=UTC)),
        ("/unavailable", datetime(2026, 1, 5, 8, 2, tzinfo=UTC)),
        ("/rate-limited-forever", datetime(2026, 1, 5, 11, 0, tzinfo=UTC)),  # capped: 3 h
        ("/rate-limited-past", None),
    ],
)
def test_retry_after_blocks_the_whole_domain_until_the_instant_it_names(
    watch, path: str, blocked_until: datetime | None
) -> None:
    w = watch(retry_after_max_s=3 * 3600)
    limited, other = w.sensor(f"{F}{path}"), w.sensor(f"{F}/ok")
    assert w.run(limited).outcome is Outcome.FAILED
    assert w.budgets.get("faultline.dev")["blocked_until"] == blocked_until
    result = w.run(other)
    if blocked_until is None:
        assert result.outcome is Outcome.OK
        return
    assert result.outcome is Outcome.SKIPPED
    assert w.row(other)["next_run_at"] == blocked_until
    assert "faultline.dev/ok" not in w.requested()
    assert w.requested().count(f"faultline.dev{path}") == 1  # a Retry-After is not retried
    w.runtime.clock.set(blocked_until)  # type: ignore[attr-defined]
    assert w.run(other).outcome is Outcome.OK


# -- spacing and concurrency --------------------------------------------------------------------
def test_crawl_delay_spaces_requests_to_one_domain_across_concurrent_sensors(watch) -> None:
    w = watch(domain_spacing_s=0.0, domain_concurrency=4)
    for page in ("a", "b", "c"):
        w.sensor(f"http://patient-crawler.dev/{page}")
    report = run_tick(w.runtime).report
    assert report.counters["ok"] == 3
    arrivals = sorted(r.received for r in w.web.requests if r.host == "patient-crawler.dev")
    assert len(arrivals) == 4  # robots.txt, then the three pages
    gaps = [b - a for a, b in pairwise(arrivals)]
    # robots.txt comes before its Crawl-delay is known; the pages keep one second apart.
    assert min(gaps[1:]) >= 0.95
    # ...and the delay robots.txt asked for is kept where operators can read it.
    budgets = DomainBudgets(w.runtime.store, default_budget=1)
    assert (budgets.get("patient-crawler.dev") or {}).get("crawl_delay_s") == 1.0


def test_default_spacing_holds_per_registrable_domain_not_per_host(watch) -> None:
    w = watch(domain_spacing_s=0.3, domain_concurrency=4)
    w.sensor(f"{F}/ok")
    w.sensor(f"{F}/")
    w.sensor("http://robots-404.faultline.dev/")
    w.sensor("http://orbitpay.com/pricing")
    run_tick(w.runtime)
    ours = sorted(r.received for r in w.web.requests if r.host.endswith("faultline.dev"))
    assert len(ours) == 5
    assert min(b - a for a, b in pairwise(ours)) >= 0.28


class StallingResolver(Resolver):
    """Blocks the event loop once, while the first connection is being made: a busy machine
    between a request's wake-up on its slot and its bytes leaving."""

    def __init__(self, base: Resolver, stall_s: float) -> None:
        super().__init__(base.host_map)
        self.stall_s = stall_s
        self.stalled = False

    async def resolve(self, host: str, port: int) -> Destination:
        if not self.stalled:
            self.stalled = True
            time.sleep(self.stall_s)  # the whole loop stops, as when its process is not run
        return await super().resolve(host, port)


def test_a_request_late_on_its_way_keeps_the_next_worker_a_spacing_away(watch) -> None:
    """Two workers share the domain's turns. The first takes its turn, then its connection
    is ready late (its loop stalled): whatever the delay, the second worker's request
    reaches the site a full spacing after the first one's answer."""
    spacing = 0.4
    w = watch(domain_spacing_s=spacing, domain_concurrency=1)
    w.run(w.sensor(f"{F}/ok"))  # robots.txt is cached: each worker then asks one page
    w.web.clear_requests()
    base = w.runtime.resolver
    used = w.budgets.get("faultline.dev")["used_today"]

    async def main() -> None:
        w.runtime.__dict__["resolver"] = StallingResolver(base, stall_s=spacing * 0.85)
        stalled = w.runtime.fetcher()
        w.runtime.__dict__["resolver"] = base
        other = w.runtime.fetcher()
        async with stalled, other:
            first = asyncio.create_task(stalled.fetch(f"{F}/ok"))
            await asyncio.sleep(0)  # the stalled worker takes the turn first
            results = await asyncio.gather(first, other.fetch(f"{F}/"))
        assert [r.status for r in results] == [200, 200]

    asyncio.run(main())
    arrivals = sorted(r.received for r in w.web.requests if r.host == "faultline.dev")
    assert len(arrivals) == 2
    assert arrivals[1] - arrivals[0] >= spacing
    assert w.budgets.get("faultline.dev")["used_today"] == used + 2


# -- destination safety through DNS ----------------------------------------------------------
class FakeDNS(Resolver):
    """The fixture host map plus fake DNS answers for chosen names (no real DNS here).

    A name in `answers` goes through the production DNS path (lookup, then the address
    check); if that path ever handed out such an address, the test fails instead of
    connecting anywhere.
    """

    def __init__(self, base: Resolver, answers: dict[str, list[str]]) -> None:
        super().__init__(base.host_map)
        self.answers = answers
        self.looked_up: list[str] = []

    async def resolve(self, host: str, port: int) -> Destination:
        if host.lower() in self.answers:
            destination = await self.resolve_by_dns(host, port)
            raise AssertionError(f"would have connected to {destination}")
        return await super().resolve(host, port)

    async def lookup(self, name: str, port: int) -> list[str]:
        self.looked_up.append(name)
        return self.answers[name]


@pytest.mark.parametrize(
    "answer", [["10.0.0.7"], ["::ffff:192.168.1.9"], ["169.254.169.254"], ["100.64.0.1", "fe80::1"]]
)
def test_a_redirect_whose_dns_answer_is_private_is_a_blocked_destination(watch, answer) -> None:
    w = watch()
    fake = FakeDNS(w.runtime.resolver, {"intranet.faultline.dev": answer})
    w.runtime.__dict__["resolver"] = fake
    result = w.run(w.sensor(f"{F}/to-intranet"))
    assert result.failure_class is FailureClass.BLOCKED_DESTINATION
    assert fake.looked_up  # the answer was checked, not trusted
    assert w.row(result.sensor_id)["status"] == SensorStatus.FAILING  # threshold 1
    assert [r.host for r in w.web.requests if r.host.startswith("intranet")] == []


def test_a_url_naming_a_private_address_is_refused_before_any_request(watch) -> None:
    w = watch()
    # The stub's guard: an address the DNS path would hand out fails the test instead.
    with pytest.raises(AssertionError):
        asyncio.run(FakeDNS(w.runtime.resolver, {"x": ["93.184.216.34"]}).resolve("x", 80))
    for url in ("http://127.0.0.1:9/", "http://[::1]/", "http://169.254.169.254/"):
        fetched = asyncio.run(_fetch(w.runtime, url))
        assert fetched.failure_class is FailureClass.BLOCKED_DESTINATION, url
        assert fetched.requests == 0


async def _fetch(runtime, url: str):
    async with runtime.fetcher() as fetcher:
        return await fetcher.fetch(url)

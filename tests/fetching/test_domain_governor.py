"""The DomainGovernor on its own: per-domain concurrency and spacing, budgets in the store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
import sqlalchemy

from resources import governor as governor_module
from resources.governor import DomainGovernor, GovernorConfig, Postponed
from resources.state.domain_budgets import DomainBudgets
from resources.state.store import StateStore

NOW = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


async def _hold(governor: DomainGovernor, url: str, log: list, seconds: float) -> None:
    async with governor.permit(url):
        log.append(("in", url, time.monotonic()))
        await asyncio.sleep(seconds)
        log.append(("out", url, time.monotonic()))


def _peak(log: list, domain: str) -> int:
    inside = peak = 0
    for event, url, _at in sorted(log, key=lambda e: e[2]):
        if domain in url:
            inside += 1 if event == "in" else -1
            peak = max(peak, inside)
    return peak


@pytest.mark.parametrize("concurrency", [1, 2])
def test_at_most_concurrency_requests_per_domain_are_in_flight(concurrency: int) -> None:
    governor = DomainGovernor(GovernorConfig(spacing_s=0, concurrency=concurrency), now=lambda: NOW)
    log: list = []

    async def main() -> None:
        urls = [f"http://www.acme.co.uk/{i}" for i in range(3)] + ["http://shop.acme.co.uk/x"]
        urls += ["http://other.io/a", "http://other.io/b"]
        await asyncio.gather(*(_hold(governor, u, log, 0.05) for u in urls))

    asyncio.run(main())
    assert _peak(log, "acme.co.uk") == concurrency  # www. and shop. are one domain
    assert _peak(log, "other.io") == min(2, concurrency)


def test_spacing_applies_per_domain_and_never_between_domains() -> None:
    governor = DomainGovernor(GovernorConfig(spacing_s=0.2, concurrency=4), now=lambda: NOW)
    log: list = []

    async def main() -> None:
        urls = ["http://a.com/1", "http://a.com/2", "http://b.com/1", "http://b.com/2"]
        await asyncio.gather(*(_hold(governor, u, log, 0) for u in urls))

    started = time.monotonic()
    asyncio.run(main())
    starts = {u: at for event, u, at in log if event == "in"}
    assert starts["http://a.com/2"] - starts["http://a.com/1"] >= 0.19
    assert starts["http://b.com/2"] - starts["http://b.com/1"] >= 0.19
    assert starts["http://b.com/1"] - started < starts["http://a.com/2"] - started


def test_crawl_delay_of_any_origin_raises_the_domain_spacing() -> None:
    governor = DomainGovernor(GovernorConfig(spacing_s=1, crawl_delay_max_s=30), now=lambda: NOW)
    asyncio.run(governor.set_crawl_delay("http://docs.acme.co.uk:80", 12))
    asyncio.run(governor.set_crawl_delay("http://www.acme.co.uk:80", 3))
    assert governor.spacing_for("acme.co.uk") == 12
    asyncio.run(governor.set_crawl_delay("http://docs.acme.co.uk:80", None))
    assert governor.spacing_for("acme.co.uk") == 3


def test_budget_reservations_are_exact_under_concurrency(database_url: str) -> None:
    store = StateStore.open(database_url)
    try:
        budgets = DomainBudgets(store, default_budget=5)
        governor = DomainGovernor(
            GovernorConfig(spacing_s=0, concurrency=8), now=lambda: NOW, budgets=budgets
        )
        outcomes: list[str] = []

        async def one(i: int) -> None:
            try:
                async with governor.permit(f"http://acme.co.uk/{i}"):
                    outcomes.append("granted")
            except Postponed as postponed:
                outcomes.append(postponed.reason)

        async def main() -> None:
            await asyncio.gather(*(one(i) for i in range(8)))

        asyncio.run(main())
        assert sorted(outcomes) == ["budget_exhausted"] * 3 + ["granted"] * 5
        assert budgets.get("acme.co.uk")["used_today"] == 5
        # A Retry-After block wins over a fresh day's budget until it passes.
        budgets.block("acme.co.uk", NOW + timedelta(days=2), NOW)
        later = budgets.reserve("acme.co.uk", NOW + timedelta(days=1))
        assert (later.granted, later.reason) == (False, "domain_blocked")
        assert budgets.reserve("acme.co.uk", NOW + timedelta(days=2, seconds=1)).granted
    finally:
        store.close()


def _permits(governor: DomainGovernor, urls: list[str]) -> list[str]:
    outcomes: list[str] = []

    async def one(url: str) -> None:
        try:
            async with governor.permit(url):
                outcomes.append("granted")
        except Postponed as postponed:
            outcomes.append(postponed.reason)

    async def main() -> None:
        await asyncio.gather(*(one(u) for u in urls))
        await governor.release()

    asyncio.run(main())
    return outcomes


@pytest.fixture
def budgets(database_url: str) -> Iterator[DomainBudgets]:
    store = StateStore.open(database_url)
    try:
        yield DomainBudgets(store, default_budget=100)
    finally:
        store.close()


def _governed(budgets: DomainBudgets, **config: Any) -> DomainGovernor:
    return DomainGovernor(GovernorConfig(**config), now=lambda: NOW, budgets=budgets)


def test_a_fast_domain_leases_units_and_gives_back_what_it_did_not_use(
    budgets: DomainBudgets,
) -> None:
    governor = _governed(budgets, spacing_s=0, concurrency=2, budget_lease=4)
    taken: list[int] = []
    reserve = budgets.reserve

    def counting(*args: Any, **kwargs: Any) -> Any:
        reservation = reserve(*args, **kwargs)
        taken.append(reservation.units)
        return reservation

    budgets.reserve = counting  # type: ignore[method-assign]  # counts the transactions
    outcomes = _permits(governor, [f"http://acme.co.uk/{i}" for i in range(10)])
    assert outcomes == ["granted"] * 10
    assert taken == [4, 4, 4]  # three transactions for ten requests, not ten
    assert budgets.get("acme.co.uk")["used_today"] == 10  # the two left over went back


def test_the_leases_of_many_domains_go_back_in_one_transaction(budgets: DomainBudgets) -> None:
    governor = _governed(budgets, spacing_s=0, concurrency=2, budget_lease=8)
    returned: list[dict[str, int]] = []
    give_back = budgets.give_back

    def counting(units: dict[str, int], now: datetime) -> None:
        returned.append(dict(units))
        give_back(units, now)

    budgets.give_back = counting  # type: ignore[method-assign]  # counts the transactions
    urls = [f"http://{host}/{i}" for host in ("a.com", "b.io", "c.co.uk") for i in range(3)]
    urls.append("http://d.org/only")
    assert _permits(governor, urls) == ["granted"] * 10
    assert returned == [{"a.com": 5, "b.io": 5, "c.co.uk": 5, "d.org": 7}]
    assert [budgets.get(d)["used_today"] for d in ("a.com", "b.io", "c.co.uk", "d.org")] == [
        3, 3, 3, 1,
    ]  # fmt: skip
    # A day that has started over keeps its own count.
    budgets.reserve("a.com", NOW + timedelta(days=1), units=2)
    budgets.give_back({"a.com": 2, "b.io": 0}, NOW)
    assert budgets.get("a.com")["used_today"] == 2
    assert budgets.get("b.io")["used_today"] == 3


def test_many_domains_are_leased_in_one_read_and_one_write(budgets: DomainBudgets) -> None:
    domains = [f"d{i:03d}.com" for i in range(40)]
    budgets.reserve_many(domains[:30], NOW, units=2)  # ten domains stay new
    budgets.set_budget("d005.com", 3, NOW)  # 2 of 3 used: one unit left
    budgets.block("d006.com", NOW + timedelta(hours=1), NOW)
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "domain_budgets" in statement:
            statements.append(statement.split(None, 1)[0].upper())

    sqlalchemy.event.listen(budgets.store.engine, "before_cursor_execute", seen)
    try:
        got = budgets.reserve_many(domains, NOW, units=4, returning={"d001.com": 2})
    finally:
        sqlalchemy.event.remove(budgets.store.engine, "before_cursor_execute", seen)
    # One SELECT of every row, one INSERT of the new ones, one UPDATE for all (executemany).
    assert statements == ["SELECT", "INSERT", "UPDATE"]
    assert (got["d005.com"].granted, got["d005.com"].units) == (True, 1)
    assert got["d006.com"].reason == "domain_blocked"
    assert {d: r.units for d, r in got.items() if d not in ("d005.com", "d006.com")} == {
        d: 4 for d in domains if d not in ("d005.com", "d006.com")
    }
    used = {d: budgets.get(d)["used_today"] for d in domains}
    assert used["d001.com"] == 4  # 2 of its first lease came back, then 4 more
    assert used["d005.com"] == 3 and used["d006.com"] == 2
    assert used["d000.com"] == 6 and used["d039.com"] == 4


def test_a_lease_never_takes_more_than_the_budget_left(budgets: DomainBudgets) -> None:
    budgets.set_budget("acme.co.uk", 5, NOW)
    governor = _governed(budgets, spacing_s=0, concurrency=8, budget_lease=16)
    outcomes = _permits(governor, [f"http://acme.co.uk/{i}" for i in range(8)])
    assert sorted(outcomes) == ["budget_exhausted"] * 3 + ["granted"] * 5
    assert budgets.get("acme.co.uk")["used_today"] == 5


def test_a_retry_after_drops_the_lease_and_blocks_at_once(budgets: DomainBudgets) -> None:
    governor = _governed(budgets, spacing_s=0, concurrency=1, budget_lease=8)

    async def main() -> str:
        async with governor.permit("http://acme.co.uk/1"):
            pass
        await governor.retry_after("http://acme.co.uk/1", "120")
        try:
            async with governor.permit("http://acme.co.uk/2"):
                return "granted"
        except Postponed as postponed:
            return postponed.reason

    assert asyncio.run(main()) == "domain_blocked"
    assert budgets.get("acme.co.uk")["used_today"] == 1  # seven leased units went back


def test_a_slow_domain_takes_its_units_one_at_a_time(budgets: DomainBudgets) -> None:
    governor = _governed(budgets, spacing_s=1.0, concurrency=1, budget_lease=8)

    async def main() -> None:
        async with governor.permit("http://acme.co.uk/1"):
            pass

    asyncio.run(main())  # not released: what the store holds is what was taken
    assert budgets.get("acme.co.uk")["used_today"] == 1


def test_the_store_hears_of_a_crawl_delay_only_when_it_changes(budgets: DomainBudgets) -> None:
    governor = _governed(budgets)
    written: list[float | None] = []
    record = budgets.record_crawl_delay

    def counting(domain: str, delay_s: float | None, now: datetime) -> None:
        written.append(delay_s)
        record(domain, delay_s, now)

    budgets.record_crawl_delay = counting  # type: ignore[method-assign]

    async def requests() -> None:
        for _ in range(5):  # every request checks robots.txt and reports the same delay
            await governor.set_crawl_delay("http://www.acme.co.uk:80", 2.0)
        await governor.set_crawl_delay("http://docs.acme.co.uk:80", 5.0)
        await governor.set_crawl_delay("http://docs.acme.co.uk:80", None)

    asyncio.run(requests())
    assert written == [2.0, 5.0, 2.0]
    assert budgets.get("acme.co.uk")["crawl_delay_s"] == 2.0

    # The next process reads the stored delay with its budget units: the same delay
    # again is not written, a new one is.
    written.clear()
    later = _governed(budgets, spacing_s=0)

    async def next_tick() -> None:
        async with later.permit("http://www.acme.co.uk/robots.txt"):
            pass
        await later.set_crawl_delay("http://www.acme.co.uk:80", 2.0)
        assert written == []
        await later.set_crawl_delay("http://www.acme.co.uk:80", 4.0)

    asyncio.run(next_tick())
    assert written == [4.0]
    assert budgets.get("acme.co.uk")["crawl_delay_s"] == 4.0


def test_recording_the_crawl_delay_the_store_holds_writes_nothing(
    budgets: DomainBudgets,
) -> None:
    budgets.record_crawl_delay("acme.co.uk", 2.0, NOW)
    budgets.record_crawl_delay("other.io", None, NOW)  # a row with no delay
    later = NOW + timedelta(hours=1)
    budgets.record_crawl_delay("acme.co.uk", 2.0, later)
    budgets.record_crawl_delay("other.io", None, later)
    assert budgets.get("acme.co.uk")["updated_at"].replace(tzinfo=UTC) == NOW
    assert budgets.get("other.io")["updated_at"].replace(tzinfo=UTC) == NOW
    budgets.record_crawl_delay("acme.co.uk", None, later)  # the site dropped its delay
    assert budgets.get("acme.co.uk")["crawl_delay_s"] is None
    assert budgets.get("acme.co.uk")["updated_at"].replace(tzinfo=UTC) == later


def test_two_workers_keep_a_domains_spacing_between_them(budgets: DomainBudgets) -> None:
    """Each worker has its own governor; the store's turns space them together."""
    spacing = 0.2
    workers = [_governed(budgets, spacing_s=spacing, concurrency=2) for _ in range(2)]
    starts: list[float] = []

    async def one(governor: DomainGovernor, i: int) -> None:
        async with governor.permit(f"http://acme.co.uk/{i}"):
            starts.append(time.monotonic())

    async def main() -> None:
        await asyncio.gather(*(one(workers[i % 2], i) for i in range(6)))

    asyncio.run(main())
    gaps = [b - a for a, b in pairwise(sorted(starts))]
    assert len(starts) == 6
    # Without shared turns the two start together (gaps near 0). Half a spacing: a start
    # is read when its task wakes, which a loaded machine may delay by tens of ms.
    assert min(gaps) >= spacing / 2
    assert budgets.get("acme.co.uk")["used_today"] == 6


def test_one_at_a_time_the_next_worker_waits_a_spacing_after_the_answer_ends(
    budgets: DomainBudgets,
) -> None:
    """A slow answer holds the domain's turn: another worker's request starts a full spacing
    after it was read, not a spacing after it started (when the site is still answering)."""
    spacing, answer_s = 0.2, 0.5
    slow, other = (_governed(budgets, spacing_s=spacing, concurrency=1) for _ in range(2))
    at: dict[str, float] = {}

    async def first() -> None:
        async with slow.permit("http://acme.co.uk/slow"):
            at["slow in"] = time.monotonic()
            await asyncio.sleep(answer_s)
            at["slow out"] = time.monotonic()

    async def second() -> None:
        await asyncio.sleep(0.05)  # asks while the slow answer is still being read
        async with other.permit("http://acme.co.uk/next"):
            at["next in"] = time.monotonic()

    async def main() -> None:
        await asyncio.gather(first(), second())

    asyncio.run(main())
    assert at["next in"] - at["slow out"] >= spacing - 0.01
    assert budgets.get("acme.co.uk")["used_today"] == 2  # waiting for a turn took no unit
    assert budgets.get("acme.co.uk")["turns"] == {}  # both handed back


def test_a_turn_held_by_a_dead_worker_is_free_once_its_hold_runs_out(
    budgets: DomainBudgets,
) -> None:
    hold = 0.4
    dead = budgets.take_turn(
        "acme.co.uk", NOW, turn="dead-1", spacing_s=0.05, concurrency=1, hold_s=hold
    )
    assert dead.granted  # and never handed back: its worker was killed
    taken = time.monotonic()
    governor = _governed(budgets, spacing_s=0.05, concurrency=1)

    async def main() -> float:
        async with governor.permit("http://acme.co.uk/1"):
            return time.monotonic()

    started = asyncio.run(main())
    assert hold - 0.05 <= started - taken < hold + 1.0
    assert list(budgets.get("acme.co.uk")["turns"]) == []


def test_concurrency_counts_the_turns_of_every_worker(budgets: DomainBudgets) -> None:
    """Two workers, each allowed two at once: the domain sees two at once, not four."""
    workers = [_governed(budgets, spacing_s=0.01, concurrency=2) for _ in range(2)]
    log: list = []

    async def main() -> None:
        await asyncio.gather(
            *(_hold(workers[i % 2], f"http://acme.co.uk/{i}", log, 0.15) for i in range(6))
        )

    asyncio.run(main())
    assert _peak(log, "acme.co.uk") == 2
    assert budgets.get("acme.co.uk")["used_today"] == 6


def test_a_spent_budget_postpones_a_spaced_domain_without_a_turn(budgets: DomainBudgets) -> None:
    budgets.set_budget("acme.co.uk", 1, NOW)
    governor = _governed(budgets, spacing_s=0.05, concurrency=1)
    outcomes = _permits(governor, ["http://acme.co.uk/1", "http://acme.co.uk/2"])
    assert outcomes == ["granted", "budget_exhausted"]
    row = budgets.get("acme.co.uk")
    assert (row["used_today"], row["turns"]) == (1, {})


@pytest.fixture
def long_leases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases that outlive a slow machine: a lease lives a second, and one that ran out
    before the last request rightly takes another (not what these tests count)."""
    monkeypatch.setattr(governor_module, "LEASE_TTL_S", 3600.0)


def _count_calls(budgets: DomainBudgets, name: str) -> list[tuple[Any, ...]]:
    """Record each call of `budgets.<name>` that returned (one store transaction each; a try
    that found SQLite's write lock taken wrote nothing and is tried again) and pass it on."""
    calls: list[tuple[Any, ...]] = []
    method = getattr(budgets, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = method(*args, **kwargs)
        calls.append(args)
        return result

    setattr(budgets, name, counted)
    return calls


@pytest.mark.usefixtures("long_leases")
def test_the_leases_of_many_domains_are_taken_in_one_transaction(budgets: DomainBudgets) -> None:
    """What a worker that starts many domains at once does (a lane told its domains): one
    transaction, which their first requests wait for, and none of their own after it."""
    governor = _governed(budgets, spacing_s=0, concurrency=4, budget_lease=8)
    together = _count_calls(budgets, "reserve_many")
    alone = _count_calls(budgets, "reserve")
    domains = ["a.com", "b.io", "c.co.uk"]
    urls = [f"http://www.{d}/{i}" for d in domains for i in range(5)]

    async def main() -> list[str]:
        governor.lease(domains)
        outcomes = []
        for url in urls:  # the requests come while the lease is under way
            async with governor.permit(url):
                outcomes.append("granted")
        await governor.release()
        return outcomes

    assert asyncio.run(main()) == ["granted"] * 15
    assert [sorted(call[0]) for call in together] == [sorted(domains)]
    assert alone == []  # no domain took a lease of its own
    assert [budgets.get(d)["used_today"] for d in domains] == [5, 5, 5]  # the rest went back


@pytest.mark.usefixtures("long_leases")
def test_leases_taken_together_keep_blocks_budgets_and_spacing(budgets: DomainBudgets) -> None:
    budgets.block("blocked.com", NOW + timedelta(hours=1), NOW)
    budgets.set_budget("spent.com", 3, NOW)
    governor = _governed(budgets, spacing_s=0, concurrency=8, budget_lease=16)
    together = _count_calls(budgets, "reserve_many")
    urls = [f"http://{d}/{i}" for d in ("blocked.com", "spent.com", "fine.com") for i in range(4)]

    async def main() -> list[str]:
        governor.lease(["blocked.com", "spent.com", "fine.com"])
        governor.lease(["fine.com"])  # leased already (under way): not asked again
        outcomes = []
        for url in urls:
            try:
                async with governor.permit(url):
                    outcomes.append("granted")
            except Postponed as postponed:
                outcomes.append(postponed.reason)
        await governor.release()
        return outcomes

    outcomes = asyncio.run(main())
    assert outcomes[:4] == ["domain_blocked"] * 4  # refused by the store, as alone
    assert outcomes[4:8] == ["granted"] * 3 + ["budget_exhausted"]  # 3 units were left
    assert outcomes[8:] == ["granted"] * 4
    assert len(together) == 1
    assert budgets.get("spent.com")["used_today"] == 3
    assert budgets.get("fine.com")["used_today"] == 4

    spaced = _governed(budgets, spacing_s=1.0, concurrency=1, budget_lease=16)

    async def spaced_lease() -> None:
        spaced.lease(["slow.com"])  # a spaced domain takes turns, never a lease

    asyncio.run(spaced_lease())
    assert len(together) == 1 and budgets.get("slow.com") is None


@pytest.mark.usefixtures("long_leases")
def test_a_failed_lease_together_leaves_each_domain_to_lease_its_own(
    budgets: DomainBudgets, caplog: pytest.LogCaptureFixture
) -> None:
    governor = _governed(budgets, spacing_s=0, concurrency=2, budget_lease=4)

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError("disk full")

    budgets.reserve_many = broken  # type: ignore[method-assign]
    alone = _count_calls(budgets, "reserve")

    async def main() -> None:
        governor.lease(["a.com", "b.com"])
        for url in ("http://a.com/1", "http://b.com/1", "http://a.com/2"):
            async with governor.permit(url):
                pass
        await governor.release()

    asyncio.run(main())
    assert sorted(call[0] for call in alone) == ["a.com", "b.com"]
    assert "leases of 2 domains not taken together (disk full)" in caplog.text
    assert budgets.get("a.com")["used_today"] == 2


class _LeaseClock:
    """The governor's clocks, its monotonic one moved by the test: a lease's age is the
    test's to set, not the machine's speed."""

    def __init__(self) -> None:
        self.at = 1000.0

    def monotonic(self) -> float:
        return self.at

    @staticmethod
    def time() -> float:
        return time.time()


@pytest.fixture
def lease_clock(monkeypatch: pytest.MonkeyPatch) -> _LeaseClock:
    clock = _LeaseClock()
    monkeypatch.setattr(governor_module, "time", clock)
    return clock


def _recorded(budgets: DomainBudgets, name: str) -> list[tuple[list[str], dict[str, int]]]:
    """Each call of `budgets.<name>` that returned (as `_count_calls`): its domains and the
    units each gave back."""
    calls: list[tuple[list[str], dict[str, int]]] = []
    method = getattr(budgets, name)

    def recorded(domains: Any, *args: Any, **kwargs: Any) -> Any:
        many = name == "reserve_many"
        back = kwargs.get("returning")
        entry = (
            (sorted(domains), dict(back or {}))
            if many
            else ([domains], {domains: back} if back else {})
        )
        result = method(domains, *args, **kwargs)
        calls.append(entry)
        return result

    setattr(budgets, name, recorded)
    return calls


def test_leases_that_run_out_together_are_renewed_together(
    budgets: DomainBudgets, lease_clock: _LeaseClock
) -> None:
    """Leases taken together run out together: the first domain that needs a new one renews
    the others in its transaction, each giving back what it had left (they were a
    transaction each, one after the other on the write lock, a second into every tick)."""
    governor = _governed(budgets, spacing_s=0, concurrency=4, budget_lease=8)
    domains = ["a.com", "b.io", "c.co.uk"]
    together = _recorded(budgets, "reserve_many")
    alone = _recorded(budgets, "reserve")

    async def main() -> None:
        governor.lease(domains)
        for domain in domains:
            for i in range(3):
                async with governor.permit(f"http://{domain}/{i}"):
                    pass
        lease_clock.at += 1.5  # every lease has run out
        for domain in domains:
            async with governor.permit(f"http://{domain}/later"):
                pass
        await governor.release()

    asyncio.run(main())
    assert together == [
        (sorted(domains), {}),
        (sorted(domains), {"a.com": 5, "b.io": 5, "c.co.uk": 5}),  # renewed with a.com's
    ]
    assert alone == []
    assert [budgets.get(d)["used_today"] for d in domains] == [4, 4, 4]  # exact after release


def test_a_domain_with_nothing_left_and_no_request_is_not_renewed(
    budgets: DomainBudgets, lease_clock: _LeaseClock
) -> None:
    governor = _governed(budgets, spacing_s=0, concurrency=2, budget_lease=3)
    together = _recorded(budgets, "reserve_many")
    alone = _recorded(budgets, "reserve")

    async def main() -> None:
        governor.lease(["a.com", "b.io", "c.net"])
        for url in ("http://a.com/1", "http://a.com/2", "http://a.com/3"):  # a.com spent
            async with governor.permit(url):
                pass
        for url in ("http://b.io/1", "http://c.net/1"):
            async with governor.permit(url):
                pass
        lease_clock.at += 0.6  # past half of a lease's life: renewed with another's
        async with governor.permit("http://b.io/2"):
            pass  # b.io's lease is usable still: nothing renewed
        lease_clock.at += 0.6
        async with governor.permit("http://b.io/3"):
            pass  # renews c.net with it, not a.com (nothing left, no request)
        async with governor.permit("http://a.com/4"):
            pass  # its own lease: the others' are new
        await governor.release()

    asyncio.run(main())
    assert together == [
        (["a.com", "b.io", "c.net"], {}),
        (["b.io", "c.net"], {"b.io": 1, "c.net": 2}),
    ]
    assert alone == [(["a.com"], {})]
    assert [budgets.get(d)["used_today"] for d in ("a.com", "b.io", "c.net")] == [4, 3, 1]


def test_a_failed_renewal_gives_each_domain_its_units_back_with_its_own_lease(
    budgets: DomainBudgets, lease_clock: _LeaseClock, caplog: pytest.LogCaptureFixture
) -> None:
    governor = _governed(budgets, spacing_s=0, concurrency=2, budget_lease=4)
    alone = _recorded(budgets, "reserve")

    async def main() -> None:
        governor.lease(["a.com", "b.io"])
        for url in ("http://a.com/1", "http://b.io/1"):
            async with governor.permit(url):
                pass

        def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise OSError("disk full")

        budgets.reserve_many = broken  # type: ignore[method-assign]
        lease_clock.at += 1.5
        for url in ("http://a.com/2", "http://b.io/2"):
            async with governor.permit(url):
                pass
        await governor.release()

    asyncio.run(main())
    assert "leases of 2 domains not taken together (disk full)" in caplog.text
    # What each had left went back with the lease it then took alone: the count is exact.
    assert alone == [(["a.com"], {"a.com": 3}), (["b.io"], {"b.io": 3})]
    assert [budgets.get(d)["used_today"] for d in ("a.com", "b.io")] == [2, 2]

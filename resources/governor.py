"""The DomainGovernor: how often, how many at once, and whether at all we ask one domain.

Per registrable domain (`shop.example.co.uk` and `www.example.co.uk` are one domain):
requests start at least `spacing_s` apart (raised by the domain's robots.txt Crawl-delay),
at most `concurrency` are in flight, and each one first reserves a unit of the domain's
daily budget in the state store, which also refuses while `blocked_until` (set from a
Retry-After) lies ahead. A refusal is `Postponed`, which the fetch turns into the
`skipped` outcome: the sensor is rescheduled, nothing counts as a failure.

Spacing holds across workers, by turns: a spaced domain's requests of every worker take
turns kept in the store (`DomainBudgets.take_turn`). A turn is granted only while fewer than
`concurrency` are held and `spacing_s` has passed since the last start; it is handed back
once the answer has been read (`end_turn`), and one at a time the next start also waits
`spacing_s` from that end. The next worker asks only after the hand-back commits, so the
site answered the last request a full spacing before the next one leaves, however late
either's bytes were on their way (a busy machine, a new connection): the order is causal,
not a matter of timing. A worker that dies holding a turn holds it `turn_hold_s` at most.

A domain with no spacing would cost one write transaction per request, so there the
governor leases `budget_lease` units at once and hands them out in memory; a lease lives
a second at most (the first domain to need a new one renews, in its transaction, every
other lease past half its life), a Retry-After drops it, and what is left goes back to
the budget when the governor is released (a killed worker's leftover stays spent: the
budget errs on the polite side).

One governor serves one event loop (its locks belong to it), so the fetcher of a tick
owns one and every concurrent sensor of that tick goes through it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from catlas_assets.domain.pacing import budget_day, retry_after_until, spacing_s
from catlas_assets.domain.urls import registrable_domain
from resources.state.loop_writes import write_from_loop

if TYPE_CHECKING:  # the budgets live in the state store (SQLAlchemy): not needed to import
    from resources.state.domain_budgets import DomainBudgets, Reservation

log = logging.getLogger(__name__)
# The store's answer when a spaced domain's turns are all held or its spacing has not
# passed yet (`DomainBudgets.take_turn`): ask again later.
TURN_BUSY = "turn_busy"


class Postponed(Exception):
    """Politeness says not now; come back at `retry_at`."""

    def __init__(self, reason: str, detail: str, retry_at: datetime | None) -> None:
        super().__init__(detail)
        self.reason = reason  # domain_blocked, budget_exhausted, robots_unavailable
        self.detail = detail
        self.retry_at = retry_at


@dataclass
class _Domain:
    semaphore: asyncio.Semaphore
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_start: float | None = None  # monotonic: when the last request started
    last_end: float | None = None  # monotonic: when the last request's answer was read
    crawl_delays: dict[str, float] = field(default_factory=dict)  # per origin (robots.txt)
    refill: asyncio.Lock = field(default_factory=asyncio.Lock)
    leased: int = 0  # budget units taken and not yet used
    leased_at: float = 0.0  # monotonic
    lease_day: str = ""
    recorded_delay: tuple[float | None] | None = None  # (delay,) the store was last told
    leasing: asyncio.Future[None] | None = None  # a lease taken with others (`lease`)
    busy: int = 0  # requests that hold or wait for a permit


# A lease older than this is given back before new units are taken: blocks and budget
# changes made by other workers are seen within it.
LEASE_TTL_S = 1.0


@dataclass(frozen=True)
class GovernorConfig:
    spacing_s: float = 1.0
    concurrency: int = 2
    crawl_delay_max_s: float = 60.0
    retry_after_max_s: float = 86400.0
    budget_lease: int = 1
    turn_hold_s: float = 120.0  # the longest a request may take: then its turn is free


class DomainGovernor:
    def __init__(
        self,
        config: GovernorConfig,
        *,
        now: Callable[[], datetime],
        budgets: DomainBudgets | None = None,
    ) -> None:
        self.config = config
        self.now = now
        self.budgets = budgets
        self._domains: dict[str, _Domain] = {}
        self._holder = uuid.uuid4().hex[:12]  # names this governor's turns in the store
        self._turns = itertools.count(1)
        self._leasing: set[asyncio.Task[None]] = set()

    def _domain(self, domain: str) -> _Domain:
        state = self._domains.get(domain)
        if state is None:
            state = _Domain(asyncio.Semaphore(self.config.concurrency))
            self._domains[domain] = state
        return state

    def spacing_for(self, domain: str) -> float:
        delays = self._domain(domain).crawl_delays.values()
        return spacing_s(
            self.config.spacing_s,
            max(delays) if delays else None,
            max_delay_s=self.config.crawl_delay_max_s,
        )

    async def set_crawl_delay(
        self, origin: str, delay_s: float | None, *, domain: str | None = None
    ) -> None:
        """Crawl-delay of one origin; the domain waits for the largest of its origins'.

        `domain` is the origin's registrable domain when the caller knows it already.
        """
        domain = domain or registrable_domain(origin)
        state = self._domain(domain)
        delays = state.crawl_delays
        if delay_s is None:
            delays.pop(origin, None)
        else:
            delays[origin] = delay_s
        largest = max(delays.values(), default=None)
        # Every request checks robots.txt; the store hears of a delay only when it differs
        # from what it holds (read with the domain's budget units), in a thread: a write
        # waits for the store's lock, and on the loop it would hold every fetch.
        if self.budgets is not None and state.recorded_delay != (largest,):
            state.recorded_delay = (largest,)
            await asyncio.to_thread(self.budgets.record_crawl_delay, domain, largest, self.now())

    @asynccontextmanager
    async def permit(self, url: str, *, domain: str | None = None) -> AsyncIterator[None]:
        """Hold a request slot for `url`; raises Postponed when the domain may not be asked.

        `domain` is `url`'s registrable domain when the caller knows it already.
        """
        domain = domain or registrable_domain(url)
        state = self._domain(domain)
        state.busy += 1
        try:
            async with state.semaphore:
                turn = None
                async with state.lock:
                    # Taken under the lock, so this worker's requests start in order. Spacing
                    # is real time (the load on the site), not the virtual clock.
                    if self.budgets is None:
                        await self._wait_locally(domain, state)
                    elif self.spacing_for(domain) > 0:
                        turn = await self._take_turn(domain, state)
                    else:
                        await self._take_unit(domain, state)
                    state.last_start = time.monotonic()
                try:
                    yield
                finally:
                    state.last_end = time.monotonic()
                    if turn is not None:
                        await self._end_turn(domain, turn)
        finally:
            state.busy -= 1

    def _ready_in(self, domain: str, state: _Domain) -> float:
        """Seconds until this worker's own spacing lets `domain` be asked again.

        It counts from the start of the last request, and one at a time also from the end
        of its answer (as Nutch's fetcher does). It also keeps a Crawl-delay learnt after
        the store was last told the domain's spacing.
        """
        spacing = self.spacing_for(domain)
        ready = state.last_start + spacing if state.last_start is not None else 0.0
        if self.config.concurrency == 1 and state.last_end is not None:
            ready = max(ready, state.last_end + spacing)
        return max(0.0, ready - time.monotonic())

    async def _wait_locally(self, domain: str, state: _Domain) -> None:
        """No store (one process, nothing shared): this worker's own spacing is all."""
        if (wait := self._ready_in(domain, state)) > 0:
            await asyncio.sleep(wait)

    async def _take_turn(self, domain: str, state: _Domain) -> str:
        """Wait for a turn of a spaced domain (a budget unit with it); its id."""
        assert self.budgets is not None
        turn = f"{self._holder}-{next(self._turns)}"
        returning = self._unused_lease(state)
        while True:
            spacing = self.spacing_for(domain)
            reservation = await asyncio.to_thread(
                self.budgets.take_turn,
                domain,
                self.now(),
                turn=turn,
                spacing_s=spacing,
                concurrency=self.config.concurrency,
                hold_s=self.config.turn_hold_s,
                not_before=time.time() + self._ready_in(domain, state),
                returning=returning,
            )
            returning = 0
            self._heard_delay(state, reservation)
            if reservation.granted:
                return turn
            if reservation.reason != TURN_BUSY:
                raise Postponed(reservation.reason, reservation.detail, reservation.retry_at)
            await asyncio.sleep(max(0.0, (reservation.retry_at_s or 0.0) - time.time()))

    async def _end_turn(self, domain: str, turn: str) -> None:
        assert self.budgets is not None
        try:
            await asyncio.to_thread(
                self.budgets.end_turn,
                domain,
                self.now(),
                turn=turn,
                spacing_s=self.spacing_for(domain),
                from_end=self.config.concurrency == 1,
            )
        except Exception as exc:  # the request's own outcome stands; the hold runs out
            log.warning(
                "turn %s of %s not handed back (%s); it is free in %g s at most",
                turn, domain, exc, self.config.turn_hold_s,
            )  # fmt: skip

    @staticmethod
    def _heard_delay(state: _Domain, reservation: Reservation) -> None:
        if state.recorded_delay is None:
            state.recorded_delay = (reservation.crawl_delay_s,)

    @staticmethod
    def _unused_lease(state: _Domain) -> int:
        """Units leased while the domain had no spacing (a Crawl-delay came since): they go
        back with the next store transaction."""
        left, state.leased = state.leased, 0
        return left

    def lease(self, domains: Iterable[str]) -> None:
        """Take the leases of `domains` together, in one store transaction, before their first
        requests (which wait for it): a worker that starts many domains at once took one
        write transaction each, one after the other on the store's write lock. Domains with
        a usable lease, a spacing, or a lease under way are left out; one the store refuses
        (blocked, spent) gets nothing here, and its first request hears why."""
        if self.budgets is None:
            return
        day = budget_day(self.now())
        wanted = []
        for domain in dict.fromkeys(domains):
            state = self._domain(domain)
            if (
                state.leasing is None
                and not state.refill.locked()
                and not self._lease_usable(state, day)
                and self.spacing_for(domain) == 0
            ):
                wanted.append(domain)
        self._lease_together(wanted, day)

    def _lease_together(self, domains: list[str], day: str) -> asyncio.Future[None] | None:
        """Start one transaction that leases `domains` (each giving back what is left of
        its lease); their requests wait for the future returned."""
        if not domains:
            return None
        done = asyncio.get_running_loop().create_future()
        returning = {}
        for domain in domains:
            state = self._domains[domain]
            state.leasing = done
            if state.leased and state.lease_day == day:
                returning[domain] = state.leased
            state.leased = 0
        task = asyncio.create_task(self._lease(domains, day, done, returning))
        self._leasing.add(task)
        task.add_done_callback(self._leasing.discard)
        return done

    async def _lease(
        self, domains: list[str], day: str, done: asyncio.Future[None], returning: dict[str, int]
    ) -> None:
        assert self.budgets is not None
        budgets, now, units = self.budgets, self.now(), self.config.budget_lease
        try:
            reservations = await write_from_loop(
                budgets.store,
                lambda wait: budgets.reserve_many(
                    domains, now, units=units, returning=returning, wait=wait
                ),
            )
            for domain, reservation in reservations.items():
                state = self._domains[domain]
                self._heard_delay(state, reservation)
                if reservation.granted:
                    state.leased, state.leased_at, state.lease_day = (
                        reservation.units, time.monotonic(), day,
                    )  # fmt: skip
        except Exception as exc:  # each domain's next request then takes its own lease
            log.warning("leases of %d domains not taken together (%s)", len(domains), exc)
            for domain, left in returning.items():  # still ours: they go back with the next
                self._domains[domain].leased = left
        finally:
            for domain in domains:
                self._domains[domain].leasing = None
            done.set_result(None)

    def _renewable(self, domain: str, day: str, now: float) -> bool:
        """A domain whose lease is in the second half of its life, with units left or a
        request under way: renewed with another domain's lease, not in a transaction of its
        own a moment later (leases taken together run out together). One whose requests are
        over holds its units until the release, as its first lease did."""
        state = self._domains[domain]
        return (
            (state.leased > 0 or state.busy > 0)
            and state.leasing is None
            and not state.refill.locked()
            and state.lease_day == day
            and now - state.leased_at >= LEASE_TTL_S / 2
            and self.spacing_for(domain) == 0
        )

    async def _take_unit(self, domain: str, state: _Domain) -> None:
        """Take a budget unit of a domain with no spacing, from a lease when one is left."""
        assert self.budgets is not None
        if state.leasing is not None:
            await asyncio.shield(state.leasing)  # taken with other domains' (`lease`)
        day = budget_day(self.now())
        if self._lease_usable(state, day):
            state.leased -= 1
            return
        async with state.refill:  # one refill at a time; the others use what it took
            if self._lease_usable(state, day):
                state.leased -= 1
                return
            clock = time.monotonic()
            others = [d for d in self._domains if d != domain and self._renewable(d, day, clock)]
            if others:  # renewed together; refused or failed, it goes on alone below
                renewed = self._lease_together([domain, *others], day)
                assert renewed is not None
                await asyncio.shield(renewed)
                if self._lease_usable(state, day):
                    state.leased -= 1
                    return
            returning = state.leased if state.lease_day == day else 0
            state.leased = 0
            budgets, now, units = self.budgets, self.now(), self.config.budget_lease
            reservation = await write_from_loop(
                budgets.store,
                lambda wait: budgets.reserve(
                    domain, now, units=units, returning=returning, wait=wait
                ),
            )
            self._heard_delay(state, reservation)
            if not reservation.granted:
                raise Postponed(reservation.reason, reservation.detail, reservation.retry_at)
            state.leased = reservation.units - 1
            state.leased_at = time.monotonic()
            state.lease_day = day

    @staticmethod
    def _lease_usable(state: _Domain, day: str) -> bool:
        return (
            state.leased > 0
            and state.lease_day == day
            and time.monotonic() - state.leased_at < LEASE_TTL_S
        )

    async def release(self) -> None:
        """Give every unused leased unit back to its domain's budget."""
        if self.budgets is None:
            return
        if self._leasing:  # what they take is given back with the rest
            await asyncio.gather(*self._leasing, return_exceptions=True)
        now = self.now()
        day = budget_day(now)
        unused: dict[str, int] = {}
        for domain, state in self._domains.items():
            left, state.leased = state.leased, 0
            if left and state.lease_day == day:
                unused[domain] = left
        if unused:  # one transaction: a tick's lanes end together, each with many domains
            await asyncio.to_thread(self.budgets.give_back, unused, now)

    async def retry_after(
        self, url: str, header: str | None, *, domain: str | None = None
    ) -> datetime | None:
        """Block the domain as a 429/503's Retry-After asks (capped); returns the instant."""
        now = self.now()
        until = retry_after_until(header, now, max_s=self.config.retry_after_max_s)
        if until is not None and self.budgets is not None:
            blocked = domain or registrable_domain(url)
            await asyncio.to_thread(self.budgets.block, blocked, until, now)
            state = self._domain(blocked)
            left, state.leased = state.leased, 0  # the block holds from now on
            if left and state.lease_day == budget_day(now):
                await asyncio.to_thread(self.budgets.give_back, {blocked: left}, now)
        return until

"""The DomainGovernor: how often, how many at once, and whether at all we ask one domain.

Per registrable domain (`shop.example.co.uk` and `www.example.co.uk` are one domain):
requests start at least `spacing_s` apart (raised by the domain's robots.txt Crawl-delay),
at most `concurrency` are in flight, and each one first reserves a unit of the domain's
daily budget in the state store, which also refuses while `blocked_until` (set from a
Retry-After) lies ahead. A refusal is `Postponed`, which the fetch turns into the
`skipped` outcome: the sensor is rescheduled, nothing counts as a failure.

Spacing holds across workers: for a spaced domain each unit reserved also books the
domain's next start slot in the store (`next_start_at`), and the request waits for it, so
four schedulers asking one domain start its requests `spacing_s` apart between them too.
Slots only keep requests apart if requests start on them: a request that wakes more than
a fifth of the spacing after its slot (its event loop was busy) gives the slot up and books
a new one, so a late start never lands just before another worker's next slot. The same
bound is checked again when the request's connection is ready (`send_gate`), just before
its bytes leave: a new connection on a busy machine can take longer than the spacing.

A domain with no spacing would cost one write transaction per request, so there the
governor leases `budget_lease` units at once and hands them out in memory; a lease lives
a second at most, a Retry-After drops it, and what is left goes back to the budget when
the governor is released (a killed worker's leftover stays spent: the budget errs on the
polite side).

One governor serves one event loop (its locks belong to it), so the fetcher of a tick
owns one and every concurrent sensor of that tick goes through it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from catlas_assets.domain.pacing import budget_day, retry_after_until, spacing_s
from catlas_assets.domain.urls import registrable_domain
from resources import send_gate

if TYPE_CHECKING:  # the budgets live in the state store (SQLAlchemy): not needed to import
    from resources.state.domain_budgets import DomainBudgets, Reservation


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
    last_start: float | None = None  # monotonic: the slot the last request started on
    last_end: float | None = None  # monotonic: when the last request's answer was read
    crawl_delays: dict[str, float] = field(default_factory=dict)  # per origin (robots.txt)
    refill: asyncio.Lock = field(default_factory=asyncio.Lock)
    leased: int = 0  # budget units taken and not yet used
    leased_at: float = 0.0  # monotonic
    lease_day: str = ""
    recorded_delay: tuple[float | None] | None = None  # (delay,) the store was last told
    missed: int = 0  # units of slots missed at the send gate, given back at the next booking


# A lease older than this is given back before new units are taken: blocks and budget
# changes made by other workers are seen within it.
LEASE_TTL_S = 1.0
# A booked slot is kept if the request wakes within this fraction of the spacing after it.
LATE_SLOT_FRACTION = 0.2
# Slots given up in a row before a request starts late anyway (a loop that is always late
# would otherwise book for ever); each re-booking is a store transaction.
MAX_REBOOKINGS = 3


@dataclass(frozen=True)
class GovernorConfig:
    spacing_s: float = 1.0
    concurrency: int = 2
    crawl_delay_max_s: float = 60.0
    retry_after_max_s: float = 86400.0
    budget_lease: int = 1


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
    async def permit(
        self, url: str, *, domain: str | None = None, missed: int = 0
    ) -> AsyncIterator[None]:
        """Hold a request slot for `url`; raises Postponed when the domain may not be asked.

        `domain` is `url`'s registrable domain when the caller knows it already. On a shared
        slot the request must leave soon after it (`send_gate`); one that could not raises
        `SlotMissed` out of the block, and its caller asks again with `missed` + 1 (the unit
        goes back with the next booking; after MAX_REBOOKINGS misses it sends however late).
        """
        domain = domain or registrable_domain(url)
        state = self._domain(domain)
        async with state.semaphore:
            async with state.lock:
                # Booked under the lock, so this worker's requests start in the order of
                # their slots. Spacing is real time (the load on the site), not the virtual clock.
                start_at = await self._take_unit(domain, state) if self.budgets else None
                state.last_start, start_at = await self._wait_for_slot(domain, state, start_at)
            deadline = None
            if start_at is not None and missed < MAX_REBOOKINGS:
                deadline = start_at + self.spacing_for(domain) * LATE_SLOT_FRACTION
            try:
                with send_gate.send_by(deadline):
                    yield
            except send_gate.SlotMissed:
                state.missed += 1
                raise
            finally:
                state.last_end = time.monotonic()

    def _ready_in(self, domain: str, state: _Domain) -> float:
        """Seconds until this worker's own spacing lets `domain` be asked again.

        It counts from the slot the last request started on, and one at a time also from
        the end of its answer (as Nutch's fetcher does): then the site sees the gap even when
        a request spent long on its way (a new connection on a busy machine) and the next
        did not. It also keeps a Crawl-delay learnt after the next slot was booked.
        """
        spacing = self.spacing_for(domain)
        ready = state.last_start + spacing if state.last_start is not None else 0.0
        if self.config.concurrency == 1 and state.last_end is not None:
            ready = max(ready, state.last_end + spacing)
        return max(0.0, ready - time.monotonic())

    async def _wait_for_slot(
        self, domain: str, state: _Domain, start_at: float | None
    ) -> tuple[float, float | None]:
        """Sleep until the request may start: the monotonic instant of the slot it starts on,
        and that slot's wall-clock second when it is a shared one.

        `start_at` is the shared slot booked in the store (wall clock), if any.
        """
        rebooked = 0
        while True:
            wait = self._ready_in(domain, state)
            if start_at is not None:
                wait = max(wait, start_at - time.time())
            if wait > 0:
                await asyncio.sleep(wait)
            if start_at is None:
                return time.monotonic(), None
            late = time.time() - start_at
            if late <= self.spacing_for(domain) * LATE_SLOT_FRACTION or rebooked == MAX_REBOOKINGS:
                # The slot, not the wake-up, is what the next local bound counts from:
                # counting lateness in would push every later request off its slot too.
                return time.monotonic() - max(0.0, late), start_at
            start_at = (await self._book(domain, state, returning=1)).start_at
            rebooked += 1

    async def _book(
        self, domain: str, state: _Domain, *, units: int = 1, returning: int = 0
    ) -> Reservation:
        """Reserve budget units in the store, for a spaced domain with the next start slot
        no earlier than this worker's own spacing allows (one transaction)."""
        assert self.budgets is not None
        reservation = await asyncio.to_thread(
            self.budgets.reserve,
            domain,
            self.now(),
            units=units,
            returning=returning,
            spacing_s=self.spacing_for(domain),
            not_before=time.time() + self._ready_in(domain, state),
        )
        if state.recorded_delay is None:
            state.recorded_delay = (reservation.crawl_delay_s,)
        if not reservation.granted:  # a re-booking's unit went back with the refusal
            raise Postponed(reservation.reason, reservation.detail, reservation.retry_at)
        return reservation

    async def _take_unit(self, domain: str, state: _Domain) -> float | None:
        """Take a budget unit; for a spaced domain, the wall-clock second its slot starts."""
        day = budget_day(self.now())
        if self._lease_usable(state, day):
            state.leased -= 1
            return None
        async with state.refill:  # one refill at a time; the others use what it took
            if self._lease_usable(state, day):
                state.leased -= 1
                return None
            returning = state.leased + state.missed if state.lease_day == day else 0
            state.leased = state.missed = 0
            reservation = await self._book(
                domain, state, units=self.config.budget_lease, returning=returning
            )
            state.leased = reservation.units - 1
            state.leased_at = time.monotonic()
            state.lease_day = day
            return reservation.start_at

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
        now = self.now()
        day = budget_day(now)
        for domain, state in self._domains.items():
            left, state.leased, state.missed = state.leased + state.missed, 0, 0
            if left and state.lease_day == day:
                await asyncio.to_thread(self.budgets.give_back, domain, left, now)

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
                await asyncio.to_thread(self.budgets.give_back, blocked, left, now)
        return until

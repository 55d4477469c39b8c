"""The DomainGovernor: how often, how many at once, and whether at all we ask one domain.

Per registrable domain (`shop.example.co.uk` and `www.example.co.uk` are one domain):
requests start at least `spacing_s` apart (raised by the domain's robots.txt Crawl-delay),
at most `concurrency` are in flight, and each one first reserves a unit of the domain's
daily budget in the state store, which also refuses while `blocked_until` (set from a
Retry-After) lies ahead. A refusal is `Postponed`, which the fetch turns into the
`skipped` outcome: the sensor is rescheduled, nothing counts as a failure.

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

from catlas_assets.domain.pacing import retry_after_until, spacing_s
from catlas_assets.domain.urls import registrable_domain

if TYPE_CHECKING:  # the budgets live in the state store (SQLAlchemy): not needed to import
    from resources.state.domain_budgets import DomainBudgets


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
    last_start: float | None = None
    crawl_delays: dict[str, float] = field(default_factory=dict)  # per origin (robots.txt)


@dataclass(frozen=True)
class GovernorConfig:
    spacing_s: float = 1.0
    concurrency: int = 2
    crawl_delay_max_s: float = 60.0
    retry_after_max_s: float = 86400.0


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

    def set_crawl_delay(
        self, origin: str, delay_s: float | None, *, domain: str | None = None
    ) -> None:
        """Crawl-delay of one origin; the domain waits for the largest of its origins'.

        `domain` is the origin's registrable domain when the caller knows it already.
        """
        domain = domain or registrable_domain(origin)
        delays = self._domain(domain).crawl_delays
        if delay_s is None:
            delays.pop(origin, None)
        else:
            delays[origin] = delay_s
        if self.budgets is not None:
            self.budgets.record_crawl_delay(domain, max(delays.values(), default=None), self.now())

    @asynccontextmanager
    async def permit(self, url: str, *, domain: str | None = None) -> AsyncIterator[None]:
        """Hold a request slot for `url`; raises Postponed when the domain may not be asked.

        `domain` is `url`'s registrable domain when the caller knows it already.
        """
        domain = domain or registrable_domain(url)
        state = self._domain(domain)
        async with state.semaphore:
            if self.budgets is not None:
                reservation = await asyncio.to_thread(self.budgets.reserve, domain, self.now())
                if not reservation.granted:
                    raise Postponed(reservation.reason, reservation.detail, reservation.retry_at)
            async with state.lock:
                # Spacing is real time: it is about the load on the site, not the virtual clock.
                if state.last_start is not None:
                    wait = state.last_start + self.spacing_for(domain) - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                state.last_start = time.monotonic()
            yield

    async def retry_after(
        self, url: str, header: str | None, *, domain: str | None = None
    ) -> datetime | None:
        """Block the domain as a 429/503's Retry-After asks (capped); returns the instant."""
        now = self.now()
        until = retry_after_until(header, now, max_s=self.config.retry_after_max_s)
        if until is not None and self.budgets is not None:
            blocked = domain or registrable_domain(url)
            await asyncio.to_thread(self.budgets.block, blocked, until, now)
        return until

"""Domain budgets in the state store: the daily request units and Retry-After blocks.

Budgets live in `domain_budgets` so every worker on every machine sees the same count:
a request unit is reserved by one atomic check-and-increment before each request, and a
Retry-After answer sets `blocked_until` for the whole registrable domain.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from catlas_assets.domain.pacing import budget_day
from resources.governor import TURN_BUSY
from resources.state.schema import domain_budgets
from resources.state.store import StateStore


@dataclass(frozen=True)
class Reservation:
    granted: bool
    reason: str = ""  # why not: "domain_blocked" or "budget_exhausted"
    detail: str = ""
    retry_at: datetime | None = None
    units: int = 0  # granted: how many request units were taken (at least 1)
    crawl_delay_s: float | None = None  # the Crawl-delay the store holds for the domain
    retry_at_s: float | None = None  # TURN_BUSY: the wall-clock second worth asking again


def _next_utc_midnight(now: datetime) -> datetime:
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return start + timedelta(days=1)


class DomainBudgets:
    def __init__(self, store: StateStore, default_budget: int) -> None:
        self.store = store
        self.default_budget = default_budget

    def _row(self, conn: Connection, domain: str, now: datetime) -> dict[str, Any]:
        query = select(domain_budgets).where(domain_budgets.c.domain == domain)
        if self.store.is_postgres:
            query = query.with_for_update()
        row = conn.execute(query).mappings().first()
        if row is not None:
            return dict(row)
        values = {
            "domain": domain,
            "daily_budget": self.default_budget,
            "used_today": 0,
            "budget_day": budget_day(now),
            "blocked_until": None,
            "updated_at": now,
        }
        conn.execute(insert(domain_budgets).values(**values))
        return values

    def _locked(self, action: Any, *, wait: bool = True) -> Any:
        # Two workers may insert the same new domain at once: the loser retries and finds it.
        for attempt in range(3):
            try:
                with self.store.transaction(write_lock=True, wait=wait) as conn:
                    return action(conn)
            except IntegrityError:
                if attempt == 2:
                    raise
        return None  # unreachable

    def reset_day(self, now: datetime) -> int:
        """Start `now`'s budget day for every domain still counting an earlier one.

        Reservations already reset lazily at a new day's first request; this makes the
        counts true for readers too (`catlas stats-crawl`, the UI) before that request.
        """
        today = budget_day(now)
        with self.store.transaction(write_lock=True) as conn:
            result = conn.execute(
                update(domain_budgets)
                .where(
                    (domain_budgets.c.budget_day != today) | domain_budgets.c.budget_day.is_(None)
                )
                .values(used_today=0, budget_day=today, updated_at=now)
            )
        return int(result.rowcount or 0)

    def reserve(
        self,
        domain: str,
        now: datetime,
        *,
        units: int = 1,
        returning: int = 0,
        wait: bool = True,
    ) -> Reservation:
        """Take up to `units` request units of `domain`'s daily budget (at least one, or none
        when it is blocked or spent), first giving back `returning` units of today's that
        were taken and not used; one transaction either way (`wait`: see
        `StateStore.transaction`)."""

        def action(conn: Connection) -> Reservation:
            return self._grant(conn, domain, now, units, returning)

        return self._locked(action, wait=wait)

    def reserve_many(
        self,
        domains: Iterable[str],
        now: datetime,
        *,
        units: int,
        returning: Mapping[str, int] | None = None,
        wait: bool = True,
    ) -> dict[str, Reservation]:
        """`reserve` of `units` for each of `domains`, in one transaction: the leases of a
        worker that starts (or renews) many domains at once, each first giving back its
        `returning` units. The domains are taken in order (two PostgreSQL workers lock their
        rows in the same order); a blocked or spent domain gets its refusal and the others
        their units."""

        ordered = sorted(set(domains))  # once: a retried transaction sees the same domains
        back = returning or {}

        def action(conn: Connection) -> dict[str, Reservation]:
            return {d: self._grant(conn, d, now, units, back.get(d, 0)) for d in ordered}

        return self._locked(action, wait=wait)

    def _grant(
        self, conn: Connection, domain: str, now: datetime, units: int, returning: int
    ) -> Reservation:
        row = self._row(conn, domain, now)
        used, refusal = self._refusal(conn, row, domain, now, returning)
        if refusal is not None:
            return refusal
        granted = min(max(1, units), row["daily_budget"] - used)
        self._set_used(conn, domain, used + granted, budget_day(now), now)
        return Reservation(True, units=granted, crawl_delay_s=row.get("crawl_delay_s"))

    def take_turn(
        self,
        domain: str,
        now: datetime,
        *,
        turn: str,
        spacing_s: float,
        concurrency: int,
        hold_s: float,
        not_before: float = 0.0,
        returning: int = 0,
    ) -> Reservation:
        """One request of a spaced `domain`, shared by every worker: a unit of the budget and
        one of the domain's `concurrency` turns, granted only once `spacing_s` has passed
        since the last start (and, one at a time, since the last answer ended: `end_turn`).

        Not granted while the turns are all held or the spacing has not passed: `reason` is
        TURN_BUSY and `retry_at_s` the wall-clock second worth asking again; no unit is taken.
        A turn is held until `end_turn` or for `hold_s` at most (its worker may have died).
        `not_before` is the caller's own spacing (wall clock); `returning` as for `reserve`.
        """

        def action(conn: Connection) -> Reservation:
            row = self._row(conn, domain, now)
            used, refusal = self._refusal(conn, row, domain, now, returning)
            if refusal is not None:
                return refusal
            wall = time.time()
            held = {k: v for k, v in (row.get("turns") or {}).items() if v > wall}
            free_at = max(row.get("next_start_at") or 0.0, not_before)
            if len(held) >= concurrency or free_at > wall:
                # All turns held: an answer that ends now frees one a spacing later at the
                # earliest, so asking sooner is wasted; else the next start is known.
                retry_at = wall + spacing_s if len(held) >= concurrency else free_at
                if len(held) != len(row.get("turns") or {}):
                    self._set_turns(conn, domain, held)  # expired turns of dead workers
                if returning:
                    self._set_used(conn, domain, used, budget_day(now), now)
                return Reservation(
                    False,
                    TURN_BUSY,
                    f"{domain}: next request at {retry_at:.3f}",
                    crawl_delay_s=row.get("crawl_delay_s"),
                    retry_at_s=retry_at,
                )
            held[turn] = wall + hold_s
            self._set_used(conn, domain, used + 1, budget_day(now), now)
            self._set_turns(conn, domain, held, next_start_at=wall + spacing_s)
            return Reservation(True, units=1, crawl_delay_s=row.get("crawl_delay_s"))

        return self._locked(action)

    def end_turn(
        self, domain: str, now: datetime, *, turn: str, spacing_s: float, from_end: bool
    ) -> None:
        """The answer of `turn`'s request has been read: the turn is free again, and with
        `from_end` (one request at a time) the next start waits `spacing_s` from now.

        The next worker asks only after this commits, so the site has seen this request
        (it answered it) a full spacing before the next one leaves, however late either's
        bytes were on their way: the order is causal, not a matter of timing.
        """

        def action(conn: Connection) -> None:
            row = self._row(conn, domain, now)
            wall = time.time()
            held = {k: v for k, v in (row.get("turns") or {}).items() if k != turn and v > wall}
            next_start = row.get("next_start_at") or 0.0
            if from_end:
                next_start = max(next_start, wall + spacing_s)
            self._set_turns(conn, domain, held, next_start_at=next_start)

        self._locked(action)

    def _refusal(
        self, conn: Connection, row: dict[str, Any], domain: str, now: datetime, returning: int
    ) -> tuple[int, Reservation | None]:
        """Today's units in use once `returning` went back, and why not, if the domain may
        not be asked (blocked or spent); a refusal still gives the units back."""
        day = budget_day(now)
        # Lazy daily reset: what was left over on another day is not today's to return.
        today = row["budget_day"] == day
        used = max(0, row["used_today"] - returning) if today else 0
        blocked_until = row["blocked_until"]
        refusal = None
        if blocked_until is not None and blocked_until > now:
            refusal = Reservation(
                False,
                "domain_blocked",
                f"{domain} blocked until {blocked_until:%Y-%m-%d %H:%M:%S}Z",
                blocked_until,
                crawl_delay_s=row.get("crawl_delay_s"),
            )
        elif used >= row["daily_budget"]:
            refusal = Reservation(
                False,
                "budget_exhausted",
                f"daily budget of {row['daily_budget']} requests to {domain} used",
                _next_utc_midnight(now),
                crawl_delay_s=row.get("crawl_delay_s"),
            )
        if refusal is not None and returning and today:
            self._set_used(conn, domain, used, day, now)
        return used, refusal

    @staticmethod
    def _set_turns(
        conn: Connection,
        domain: str,
        held: dict[str, float],
        *,
        next_start_at: float | None = None,
    ) -> None:
        values: dict[str, Any] = {"turns": held}
        if next_start_at is not None:
            values["next_start_at"] = next_start_at
        conn.execute(
            update(domain_budgets).where(domain_budgets.c.domain == domain).values(**values)
        )

    def give_back(self, units: Mapping[str, int], now: datetime) -> None:
        """Return units taken today and not used, per domain (the leases left over at the end
        of a tick): one transaction for all of them, the domains in order (two workers on
        PostgreSQL lock their rows in the same order)."""
        returned = sorted((domain, left) for domain, left in units.items() if left > 0)
        if not returned:
            return
        day = budget_day(now)

        def action(conn: Connection) -> None:
            for domain, left in returned:
                row = self._row(conn, domain, now)
                if row["budget_day"] == day:  # else a new day has started over already
                    self._set_used(conn, domain, max(0, row["used_today"] - left), day, now)

        self._locked(action)

    @staticmethod
    def _set_used(conn: Connection, domain: str, used: int, day: str, now: datetime) -> None:
        conn.execute(
            update(domain_budgets)
            .where(domain_budgets.c.domain == domain)
            .values(used_today=used, budget_day=day, updated_at=now)
        )

    def block(self, domain: str, until: datetime, now: datetime) -> None:
        """Keep every request off `domain` until `until` (a later block is never shortened)."""

        def action(conn: Connection) -> None:
            row = self._row(conn, domain, now)
            current = row["blocked_until"]
            if current is None or current < until:
                conn.execute(
                    update(domain_budgets)
                    .where(domain_budgets.c.domain == domain)
                    .values(blocked_until=until, updated_at=now)
                )

        self._locked(action)

    def get(self, domain: str) -> dict[str, Any] | None:
        with self.store.engine.connect() as conn:
            row = (
                conn.execute(select(domain_budgets).where(domain_budgets.c.domain == domain))
                .mappings()
                .first()
            )
        return dict(row) if row else None

    def record_crawl_delay(self, domain: str, delay_s: float | None, now: datetime) -> None:
        """Keep the Crawl-delay the domain's robots.txt asks for where operators can see it.

        Read first: a process meets each domain's robots.txt before it hears the stored
        delay, and the delay is almost always the one stored. A write transaction per
        domain, per process, per tick queued behind the other workers' commits (a lane's
        first requests waited 10-50 ms on it); a read takes no lock."""
        query = select(domain_budgets.c.crawl_delay_s).where(domain_budgets.c.domain == domain)
        with self.store.transaction() as conn:
            stored = conn.execute(query).first()
        if stored is not None and stored.crawl_delay_s == delay_s:
            return

        def action(conn: Connection) -> None:
            self._row(conn, domain, now)
            conn.execute(
                update(domain_budgets)
                .where(domain_budgets.c.domain == domain)
                .values(crawl_delay_s=delay_s, updated_at=now)
            )

        self._locked(action)

    def set_budget(self, domain: str, daily_budget: int, now: datetime) -> None:
        def action(conn: Connection) -> None:
            self._row(conn, domain, now)
            conn.execute(
                update(domain_budgets)
                .where(domain_budgets.c.domain == domain)
                .values(daily_budget=daily_budget, updated_at=now)
            )

        self._locked(action)

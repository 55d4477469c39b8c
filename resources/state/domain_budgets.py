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
from functools import cached_property
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update
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


# Domains per `IN (...)`: far below every engine's limit on bound parameters.
_IN_CHUNK = 500


def _next_utc_midnight(now: datetime) -> datetime:
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return start + timedelta(days=1)


class DomainBudgets:
    def __init__(self, store: StateStore, default_budget: int) -> None:
        self.store = store
        self.default_budget = default_budget

    def _row(self, conn: Connection, domain: str, now: datetime) -> dict[str, Any]:
        return self._rows(conn, [domain], now)[domain]

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
        back = {domain: returning} if returning else {}
        return self._reserve([domain], now, units, back, wait)[domain]

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
        `returning` units. The domains' rows are read in one statement and written in
        one, in domain order (two PostgreSQL workers lock them in the same order); a
        blocked or spent domain gets its refusal and the others their units."""
        # Sorted once: a retried transaction sees the same domains.
        return self._reserve(sorted(set(domains)), now, units, returning or {}, wait)

    def _reserve(
        self,
        ordered: list[str],
        now: datetime,
        units: int,
        back: Mapping[str, int],
        wait: bool,
    ) -> dict[str, Reservation]:
        day = budget_day(now)

        def action(conn: Connection) -> dict[str, Reservation]:
            rows = self._rows(conn, ordered, now)
            out: dict[str, Reservation] = {}
            writes: list[dict[str, Any]] = []
            for domain in ordered:
                row, returned = rows[domain], back.get(domain, 0)
                used, refusal = _judged(row, domain, now, returned)
                if refusal is None:
                    granted = min(max(1, units), row["daily_budget"] - used)
                    out[domain] = Reservation(
                        True, units=granted, crawl_delay_s=row.get("crawl_delay_s")
                    )
                    used += granted
                else:
                    out[domain] = refusal
                    if not (returned and row["budget_day"] == day):
                        continue  # refused, and nothing came back to write
                writes.append(
                    {"b_domain": domain, "used_today": used, "budget_day": day, "updated_at": now}
                )
            if writes:
                conn.execute(self._used_update, writes)
            return out

        return self._locked(action, wait=wait)

    def _rows(
        self, conn: Connection, domains: list[str], now: datetime
    ) -> dict[str, dict[str, Any]]:
        """The rows of `domains` (sorted), locked on PostgreSQL; a missing one is created."""
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(domains), _IN_CHUNK):
            query = select(domain_budgets).where(
                domain_budgets.c.domain.in_(domains[start : start + _IN_CHUNK])
            )
            if self.store.is_postgres:
                query = query.order_by(domain_budgets.c.domain).with_for_update()
            found.update((r["domain"], dict(r)) for r in conn.execute(query).mappings())
        missing = [
            {
                "domain": domain,
                "daily_budget": self.default_budget,
                "used_today": 0,
                "budget_day": budget_day(now),
                "blocked_until": None,
                "updated_at": now,
            }
            for domain in domains
            if domain not in found
        ]
        if missing:
            conn.execute(insert(domain_budgets), missing)
            found.update((row["domain"], row) for row in missing)
        return found

    @cached_property
    def _used_update(self) -> Any:
        return (
            update(domain_budgets)
            .where(domain_budgets.c.domain == bindparam("b_domain"))
            .values(
                used_today=bindparam("used_today"),
                budget_day=bindparam("budget_day"),
                updated_at=bindparam("updated_at"),
            )
        )

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
        """`_judged`, and a refusal's returned units written back."""
        used, refusal = _judged(row, domain, now, returning)
        if refusal is not None and returning and row["budget_day"] == budget_day(now):
            self._set_used(conn, domain, used, budget_day(now), now)
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


def _judged(
    row: dict[str, Any], domain: str, now: datetime, returning: int
) -> tuple[int, Reservation | None]:
    """Today's units in use once `returning` went back, and why not, if the domain may not
    be asked (blocked or spent); the caller writes the units given back."""
    # Lazy daily reset: what was left over on another day is not today's to return.
    today = row["budget_day"] == budget_day(now)
    used = max(0, row["used_today"] - returning) if today else 0
    blocked_until = row["blocked_until"]
    if blocked_until is not None and blocked_until > now:
        return used, Reservation(
            False,
            "domain_blocked",
            f"{domain} blocked until {blocked_until:%Y-%m-%d %H:%M:%S}Z",
            blocked_until,
            crawl_delay_s=row.get("crawl_delay_s"),
        )
    if used >= row["daily_budget"]:
        return used, Reservation(
            False,
            "budget_exhausted",
            f"daily budget of {row['daily_budget']} requests to {domain} used",
            _next_utc_midnight(now),
            crawl_delay_s=row.get("crawl_delay_s"),
        )
    return used, None

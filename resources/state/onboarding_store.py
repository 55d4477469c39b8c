"""The onboarding queue and the writes of a finished discovery, on the state store.

Discover jobs live in `queue_jobs(kind='discover')`, at most one open (pending or running)
per company (a partial unique index). Claims use ``FOR UPDATE SKIP LOCKED`` on PostgreSQL
and, on SQLite, a ``BEGIN IMMEDIATE`` transaction that holds the single write lock while it
selects and stamps the batch, like the sensor claims in store.py. A finished discovery is
stored in one transaction: sensors (inserted or updated, never deleted), domains, the
company's status and stats, the job, and the `discovery` lake rows (through the outbox).
What to store is decided in the domain (`domain/onboarding_rules.py`): this module writes
what it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from catlas_assets.domain.onboarding_rules import DomainPlan, FailedAttempt, SensorPlan
from catlas_assets.domain.vocabulary import OnboardingStatus, QueueJobStatus
from catlas_assets.errors import CatlasError
from resources.state.schema import companies, domains, lake_outbox, queue_jobs, sensors
from resources.state.store import StateStore, _jsonable

DISCOVER = "discover"
Row = dict[str, Any]


def enqueue_discover(
    store: StateStore,
    company_id: int,
    *,
    now: datetime,
    max_attempts: int,
    payload: Mapping[str, Any] | None = None,
) -> int:
    """Queue a discover job for the company (or return its open one); company → pending."""
    with store.transaction(write_lock=True) as conn:
        existing = _open_job(conn, company_id)
        if existing is not None:
            return int(existing["id"])
        try:
            with conn.begin_nested():
                job_id = conn.execute(
                    insert(queue_jobs).values(
                        kind=DISCOVER,
                        company_id=company_id,
                        status=QueueJobStatus.PENDING,
                        attempts=0,
                        max_attempts=max_attempts,
                        run_after=now,
                        payload=dict(payload or {}),
                        created_at=now,
                        updated_at=now,
                    )
                ).inserted_primary_key[0]
        except IntegrityError:
            # Another process queued one between our read and our insert: use theirs.
            found = _open_job(conn, company_id)
            if found is None:
                raise
            return int(found["id"])
        conn.execute(
            update(companies)
            .where(companies.c.id == company_id)
            .values(onboarding_status=OnboardingStatus.PENDING, updated_at=now)
        )
        return int(job_id)


def _open_job(conn: Connection, company_id: int) -> Row | None:
    row = (
        conn.execute(
            select(queue_jobs).where(
                queue_jobs.c.kind == DISCOVER,
                queue_jobs.c.company_id == company_id,
                queue_jobs.c.status.in_([QueueJobStatus.PENDING, QueueJobStatus.RUNNING]),
            )
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


def _stamp(conn: Connection, ids: list[int], *, now: datetime, worker: str) -> list[Row]:
    conn.execute(
        update(queue_jobs)
        .where(queue_jobs.c.id.in_(ids))
        .values(
            status=QueueJobStatus.RUNNING,
            claimed_at=now,
            claimed_by=worker,
            attempts=queue_jobs.c.attempts + 1,
            updated_at=now,
        )
    )
    company_ids = [
        r[0] for r in conn.execute(select(queue_jobs.c.company_id).where(queue_jobs.c.id.in_(ids)))
    ]
    conn.execute(
        update(companies)
        .where(companies.c.id.in_(company_ids))
        .values(onboarding_status=OnboardingStatus.DISCOVERING, updated_at=now)
    )
    rows = conn.execute(select(queue_jobs).where(queue_jobs.c.id.in_(ids))).mappings()
    by_id = {r["id"]: dict(r) for r in rows}
    return [by_id[i] for i in ids]


def claim_discover_jobs(
    store: StateStore, *, now: datetime, worker: str, limit: int, lease_s: int
) -> list[Row]:
    """Claim up to `limit` due discover jobs; a job is never held by two workers at once.

    A running job whose claim is older than `lease_s` (its worker died) is due again.
    """
    stale = now - timedelta(seconds=lease_s)
    due = (
        select(queue_jobs.c.id)
        .where(
            queue_jobs.c.kind == DISCOVER,
            or_(
                and_(queue_jobs.c.status == QueueJobStatus.PENDING, queue_jobs.c.run_after <= now),
                and_(
                    queue_jobs.c.status == QueueJobStatus.RUNNING, queue_jobs.c.claimed_at < stale
                ),
            ),
        )
        .order_by(queue_jobs.c.run_after, queue_jobs.c.id)
        .limit(limit)
    )
    if store.is_postgres:
        due = due.with_for_update(skip_locked=True)
    with store.transaction(write_lock=True) as conn:
        ids = [r[0] for r in conn.execute(due)]
        return _stamp(conn, ids, now=now, worker=worker) if ids else []


def claim_company_job(
    store: StateStore, company_id: int, *, now: datetime, worker: str, lease_s: int
) -> Row:
    """Claim this company's open discover job whatever its `run_after` (`onboard --company`)."""
    stale = now - timedelta(seconds=lease_s)
    query = select(queue_jobs).where(
        queue_jobs.c.kind == DISCOVER,
        queue_jobs.c.company_id == company_id,
        queue_jobs.c.status.in_([QueueJobStatus.PENDING, QueueJobStatus.RUNNING]),
    )
    if store.is_postgres:
        query = query.with_for_update(skip_locked=True)
    with store.transaction(write_lock=True) as conn:
        row = conn.execute(query).mappings().first()
        if row is None:
            raise CatlasError(
                f"company {company_id} is being discovered by another worker right now"
            )
        if row["status"] == QueueJobStatus.RUNNING and row["claimed_at"] >= stale:
            raise CatlasError(
                f"company {company_id} is being discovered by {row['claimed_by']} right now"
            )
        return _stamp(conn, [row["id"]], now=now, worker=worker)[0]


def record_failed_attempt(
    store: StateStore,
    job: Row,
    *,
    worker: str,
    error: str,
    now: datetime,
    attempt: FailedAttempt,
) -> bool:
    """Store where a failed attempt leaves the job and its company; False if the claim was lost."""
    with store.transaction() as conn:
        result = conn.execute(
            update(queue_jobs)
            .where(queue_jobs.c.id == job["id"], queue_jobs.c.claimed_by == worker)
            .values(
                status=attempt.job_status,
                run_after=attempt.run_after,
                claimed_at=None,
                claimed_by=None,
                last_error=error,
                updated_at=now,
            )
        )
        if result.rowcount != 1:
            conn.rollback()
            return False
        conn.execute(
            update(companies)
            .where(companies.c.id == job["company_id"])
            .values(
                onboarding_status=attempt.onboarding_status,
                onboarding_error=error,
                updated_at=now,
            )
        )
    return True


@dataclass(frozen=True)
class Applied:
    created: list[int]
    updated: list[int]
    committed: bool


def complete_discover_job(
    store: StateStore,
    job: Row,
    *,
    worker: str,
    now: datetime,
    onboarding_status: str,
    company_values: Mapping[str, Any],
    stats: Mapping[str, Any],
    same_as: Sequence[str],
    plans: Sequence[SensorPlan],
    domain_plans: Sequence[DomainPlan],
    run_id: str,
    lake_rows: Sequence[Row],
    onboarding_error: str | None = None,
) -> Applied:
    """Store a finished discovery in one transaction (nothing when the claim was lost)."""
    with store.transaction() as conn:
        done = conn.execute(
            update(queue_jobs)
            .where(queue_jobs.c.id == job["id"], queue_jobs.c.claimed_by == worker)
            .values(
                status=QueueJobStatus.DONE,
                claimed_at=None,
                claimed_by=None,
                last_error=None,
                updated_at=now,
            )
        )
        if done.rowcount != 1:
            conn.rollback()
            return Applied([], [], committed=False)
        company_id = job["company_id"]
        company = (
            conn.execute(select(companies).where(companies.c.id == company_id)).mappings().one()
        )
        created, updated = _store_sensors(conn, company_id, plans, now)
        _store_domains(conn, company_id, domain_plans, now)
        company_stats = {**(company["stats"] or {}), "discovery": dict(stats)}
        source_meta = {**(company["source_meta"] or {}), "same_as": list(same_as)}
        conn.execute(
            update(companies)
            .where(companies.c.id == company_id)
            .values(
                onboarding_status=onboarding_status,
                onboarding_error=onboarding_error,
                stats=_jsonable(company_stats),
                source_meta=_jsonable(source_meta),
                updated_at=now,
                **company_values,
            )
        )
        if lake_rows:
            conn.execute(
                insert(lake_outbox).values(
                    run_id=run_id, payload=_jsonable({"discovery": list(lake_rows)}), created_at=now
                )
            )
    return Applied(created, updated, committed=True)


def _store_sensors(
    conn: Connection, company_id: int, plans: Sequence[SensorPlan], now: datetime
) -> tuple[list[int], list[int]]:
    """Insert the planned sensors that are new, refresh the known ones; (created, updated)."""
    created: list[int] = []
    updated: list[int] = []
    for plan in plans:
        existing = conn.execute(
            select(sensors.c.id, sensors.c.discovery_method).where(
                sensors.c.company_id == company_id,
                sensors.c.surface == plan.surface,
                sensors.c.url == plan.url,
            )
        ).first()
        if existing is None:
            sensor_id = conn.execute(
                insert(sensors).values(
                    company_id=company_id, created_at=now, updated_at=now, **plan.new_sensor()
                )
            ).inserted_primary_key[0]
            created.append(int(sensor_id))
            continue
        conn.execute(
            update(sensors)
            .where(sensors.c.id == existing[0])
            .values(updated_at=now, **plan.refresh(existing[1]))
        )
        updated.append(int(existing[0]))
    return created, updated


def _store_domains(
    conn: Connection, company_id: int, plans: Sequence[DomainPlan], now: datetime
) -> None:
    for plan in plans:
        known = conn.execute(
            select(domains.c.id).where(
                domains.c.company_id == company_id, domains.c.domain == plan.domain
            )
        ).first()
        if known is None:
            conn.execute(
                insert(domains).values(
                    company_id=company_id, domain=plan.domain, kind=plan.kind, created_at=now
                )
            )
        else:
            conn.execute(update(domains).where(domains.c.id == known[0]).values(kind=plan.kind))


def domain_owner(store: StateStore, domain: str) -> int | None:
    """The company whose canonical domain this is, if any."""
    with store.engine.connect() as conn:
        row = conn.execute(select(companies.c.id).where(companies.c.domain == domain)).first()
    return int(row[0]) if row else None


def list_jobs(store: StateStore, *, company_id: int | None = None) -> list[Row]:
    query = select(queue_jobs).where(queue_jobs.c.kind == DISCOVER).order_by(queue_jobs.c.id)
    if company_id is not None:
        query = query.where(queue_jobs.c.company_id == company_id)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def pending_count(store: StateStore, *, now: datetime) -> int:
    """Discover jobs due now (what the Dagster onboarding sensor looks at)."""
    from sqlalchemy import func

    query = select(func.count()).where(
        queue_jobs.c.kind == DISCOVER,
        queue_jobs.c.status == QueueJobStatus.PENDING,
        queue_jobs.c.run_after <= now,
    )
    with store.engine.connect() as conn:
        return int(conn.execute(query).scalar_one())

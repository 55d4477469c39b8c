"""Give claimed discover jobs back to the queue untouched, for a batch that stopped early.

A job the batch claimed but never reached (the request budget was spent, the deadline
passed, a signal came) did not make an attempt: it goes back to `pending` with its attempt
count and `run_after` as they were before the claim, so it waits for the next batch
instead of being charged a retry backoff.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import update

from catlas_assets.domain.vocabulary import OnboardingStatus, QueueJobStatus
from resources.state.schema import companies, queue_jobs
from resources.state.store import StateStore


def release_discover_jobs(
    store: StateStore, jobs: Sequence[dict[str, Any]], *, worker: str, now: datetime
) -> int:
    """Unclaim the jobs this worker still holds; returns how many were released."""
    released = 0
    with store.transaction() as conn:
        for job in jobs:
            result = conn.execute(
                update(queue_jobs)
                .where(
                    queue_jobs.c.id == job["id"],
                    queue_jobs.c.claimed_by == worker,
                    queue_jobs.c.status == QueueJobStatus.RUNNING,
                )
                .values(
                    status=QueueJobStatus.PENDING,
                    attempts=queue_jobs.c.attempts - 1,  # the claim counted an attempt
                    claimed_at=None,
                    claimed_by=None,
                    updated_at=now,
                )
            )
            if result.rowcount != 1:
                continue  # a stale claim another worker has taken over: theirs now
            released += 1
            conn.execute(
                update(companies)
                .where(companies.c.id == job["company_id"])
                .values(onboarding_status=OnboardingStatus.PENDING, updated_at=now)
            )
    return released

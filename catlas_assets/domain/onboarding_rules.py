"""What onboarding decides, pure: a discover job's retry or death, and what discovery stores.

Spec (Discovery): `onboard_pending` claims `queue_jobs(kind='discover')`; every claim counts
an attempt. A failed attempt (the website resolves but discovery
failed) sends the job back to `pending` after `retry backoff × attempts` with the company
`failed` and its `onboarding_error`, until the attempts reach `max_attempts`: the job is
then `dead`. A website none of whose variants resolves ends the job `done` with the company
`no_website`: it is not retried until the company's website changes. A batch interrupted while a company was in flight
gives its job back as it was: the attempt is not counted and no backoff applies.

A finished discovery is stored as plans: one `SensorPlan` per selected surface and one
`DomainPlan` per domain seen. A sensor discovery finds again keeps its schedule and
history; discovery refreshes its confidence and its method, except a method a person
declared (`manual`, `catlas sensors add`), which discovery never overwrites.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from catlas_assets.domain.vocabulary import DiscoveryMethod, OnboardingStatus, QueueJobStatus


@dataclass(frozen=True)
class FailedAttempt:
    """Where a discover job and its company stand after an attempt that failed."""

    job_status: QueueJobStatus  # pending (tried again at `run_after`) or dead
    run_after: datetime
    onboarding_status: OnboardingStatus  # pending, or failed once the job is dead


def after_failed_attempt(
    *, attempts: int, max_attempts: int, now: datetime, backoff: timedelta
) -> FailedAttempt:
    """A failed attempt: pending again after `backoff × attempts`, or dead at `max_attempts`."""
    if attempts >= max_attempts:
        return FailedAttempt(QueueJobStatus.DEAD, now, OnboardingStatus.FAILED)
    # The company says `failed` (with its `onboarding_error`) while its job waits to retry.
    return FailedAttempt(QueueJobStatus.PENDING, now + backoff * attempts, OnboardingStatus.FAILED)


def after_interruption(*, attempts: int, max_attempts: int, now: datetime) -> FailedAttempt:
    """A company in flight when its batch was interrupted: its claim's attempt does not
    count and it is due again at once."""
    back = after_failed_attempt(
        attempts=attempts - 1, max_attempts=max_attempts, now=now, backoff=timedelta(0)
    )
    return FailedAttempt(back.job_status, back.run_after, OnboardingStatus.PENDING)


def rediscovered(existing_method: str, *, method: str, confidence: float) -> dict[str, Any]:
    """The discovery columns of a sensor found again (schedule and history are kept)."""
    values: dict[str, Any] = {"discovery_confidence": confidence}
    if existing_method != DiscoveryMethod.MANUAL:
        values["discovery_method"] = method
    return values


@dataclass(frozen=True)
class SensorPlan:
    """One selected surface, with its seed values, as discovery wants it stored."""

    surface: str
    url: str
    connector: str
    method: str
    confidence: float
    values: Mapping[str, Any]  # seed columns for a new sensor (tier, intervals, next run ...)

    def new_sensor(self) -> dict[str, Any]:
        """The columns of the sensor to create when none watches this URL yet."""
        return {
            "surface": self.surface,
            "url": self.url,
            "connector": self.connector,
            "discovery_method": self.method,
            "discovery_confidence": self.confidence,
            "config": {},
            **self.values,
        }

    def refresh(self, existing_method: str) -> dict[str, Any]:
        """The columns to update on the sensor that already watches this URL."""
        return rediscovered(existing_method, method=self.method, confidence=self.confidence)


@dataclass(frozen=True)
class DomainPlan:
    domain: str
    kind: str

"""Onboarding's rules on plain inputs: a discover job's retry or death, and re-discovery."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from catlas_assets.domain.onboarding_rules import (
    SensorPlan,
    after_failed_attempt,
    after_interruption,
    rediscovered,
)
from catlas_assets.domain.vocabulary import DiscoveryMethod, OnboardingStatus, QueueJobStatus

NOW = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
BACKOFF = timedelta(minutes=30)


def test_a_failed_attempt_is_retried_after_the_backoff_times_its_attempts() -> None:
    first = after_failed_attempt(attempts=1, max_attempts=3, now=NOW, backoff=BACKOFF)
    second = after_failed_attempt(attempts=2, max_attempts=3, now=NOW, backoff=BACKOFF)
    assert first.job_status is QueueJobStatus.PENDING
    # The company reads `failed` (with its error) while its job waits for the retry.
    assert first.onboarding_status is OnboardingStatus.FAILED
    assert first.run_after == NOW + timedelta(minutes=30)
    assert second.run_after == NOW + timedelta(minutes=60)


def test_the_attempt_that_reaches_max_attempts_makes_the_job_dead_and_the_company_failed() -> None:
    dead = after_failed_attempt(attempts=3, max_attempts=3, now=NOW, backoff=BACKOFF)
    assert dead.job_status is QueueJobStatus.DEAD
    assert dead.onboarding_status is OnboardingStatus.FAILED
    assert dead.run_after == NOW


def test_an_interrupted_attempt_does_not_count_and_is_due_again_at_once() -> None:
    # The claim counted attempt 3 of 3; the interruption gives it back.
    back = after_interruption(attempts=3, max_attempts=3, now=NOW)
    assert back.job_status is QueueJobStatus.PENDING
    assert back.onboarding_status is OnboardingStatus.PENDING
    assert back.run_after == NOW


def test_rediscovery_refreshes_method_and_confidence_but_never_a_manual_method() -> None:
    found = {"method": DiscoveryMethod.SITEMAP.value, "confidence": 0.7}
    assert rediscovered(DiscoveryMethod.NAV.value, **found) == {
        "discovery_confidence": 0.7,
        "discovery_method": "sitemap",
    }
    assert rediscovered(DiscoveryMethod.MANUAL.value, **found) == {"discovery_confidence": 0.7}


def test_a_sensor_plan_says_what_a_new_sensor_holds_and_what_a_known_one_refreshes() -> None:
    plan = SensorPlan(
        surface="careers",
        url="https://example.com/careers",
        connector="generic_html",
        method="nav",
        confidence=0.9,
        values={"status": "pending", "tier": "B"},
    )
    new = plan.new_sensor()
    assert new["discovery_method"] == "nav" and new["discovery_confidence"] == 0.9
    assert new["status"] == "pending" and new["tier"] == "B" and new["config"] == {}
    assert plan.refresh("manual") == {"discovery_confidence": 0.9}
    assert "tier" not in plan.refresh("link")  # the schedule of a known sensor stays

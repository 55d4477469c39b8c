"""The rate_estimate scheduling policy inside `observe`: each run teaches the sensor's
change rate, and the interval follows √rate inside the clamp."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from test_domain_observe import (
    BASE,
    NOW,
    POLICY,
    SECTIONS,
    applied,
    baseline,
    fetch,
    page,
    run,
)

from catlas_assets.domain.rate_estimate import RateEstimate
from catlas_assets.domain.vocabulary import Outcome

RATE = dataclasses.replace(POLICY, scheduling_policy="rate_estimate")


def _later(sensor, hours: float):
    return dataclasses.replace(sensor, last_fetched_at=NOW - timedelta(hours=hours))


def test_the_first_run_starts_from_the_prior() -> None:
    sensor, _ = baseline()
    first = run(dataclasses.replace(sensor, snapshot_version=0), fetch(page(SECTIONS)), policy=RATE)
    prior = RateEstimate.prior(BASE)
    update = first.sensor_update
    assert (update["rate_fetches"], update["rate_changes"]) == (prior.fetches, prior.changes)


def test_unchanged_fetches_lengthen_the_interval_and_changes_shorten_it() -> None:
    sensor, blocks = baseline()
    quiet = sensor
    for _ in range(6):
        result = run(_later(quiet, 6), fetch(status=304, not_modified=True), policy=RATE)
        assert result.outcome is Outcome.NOT_MODIFIED
        quiet = applied(quiet, result)
    busy = sensor
    for i in range(6):
        body = page([*SECTIONS[:-8], *(f"Fresh news item {i} number {j}" for j in range(8))])
        result = run(_later(busy, 6), fetch(body), blocks, policy=RATE)
        assert result.outcome is Outcome.CHANGED
        busy = applied(busy, result)
    assert quiet.rate_changes < busy.rate_changes
    assert quiet.current_interval_s > BASE > busy.current_interval_s
    assert POLICY.limits.min_interval_s <= busy.current_interval_s


def test_a_failure_keeps_the_failure_backoff_and_the_sums() -> None:
    from catlas_assets.domain.vocabulary import FailureClass

    sensor, _ = baseline()
    failed = run(
        _later(sensor, 6),
        fetch(status=None, failure_class=FailureClass.TIMEOUT, failure_detail="slow"),
        policy=RATE,
    )
    assert "rate_fetches" not in failed.sensor_update
    spec = run(
        _later(sensor, 6),
        fetch(status=None, failure_class=FailureClass.TIMEOUT, failure_detail="slow"),
    )
    assert failed.sensor_update["current_interval_s"] == spec.sensor_update["current_interval_s"]

"""The spec's scheduling formula, to the second, and its invariants for any run history."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.scheduling import (
    QUALITY_ALPHA,
    Event,
    Limits,
    next_interval,
    next_run_at,
    quality_score,
)
from catlas_assets.domain.vocabulary import FailureClass

LIMITS = Limits(
    min_interval_s=900,
    max_interval_s=7 * 86400,
    burst_interval_s=1800,
    burst_decay=2.0,
    stability_growth=1.25,
)
BASE = 6 * 3600
NOW = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (BASE, 27000),  # at base: x1.25
        (40000, 50000),  # above base: x1.25
        (600000, 7 * 86400),  # growth capped at max
        (7 * 86400, 7 * 86400),
    ],
)
def test_unchanged_grows_by_stability_growth_up_to_max(current: int, expected: int) -> None:
    assert next_interval(current, BASE, Event.UNCHANGED, LIMITS) == expected


@pytest.mark.parametrize(
    ("current", "expected"),
    [(1800, 3600), (3600, 7200), (7200, 14400), (14400, BASE), (21599, BASE)],
)
def test_unchanged_after_burst_decays_toward_base(current: int, expected: int) -> None:
    assert next_interval(current, BASE, Event.UNCHANGED, LIMITS) == expected


def test_unchanged_burst_sequence_returns_to_base_then_grows() -> None:
    seen = []
    current = next_interval(40000, BASE, Event.MEANINGFUL, LIMITS)
    for _ in range(6):
        seen.append(current)
        current = next_interval(current, BASE, Event.UNCHANGED, LIMITS)
    assert seen == [1800, 3600, 7200, 14400, 21600, 27000]


@pytest.mark.parametrize("current", [900, BASE, 7 * 86400])
def test_meaningful_change_bursts_to_burst_interval(current: int) -> None:
    assert next_interval(current, BASE, Event.MEANINGFUL, LIMITS) == 1800


@pytest.mark.parametrize(("current", "expected"), [(40000, BASE), (BASE, BASE), (3600, 3600)])
def test_minor_change_keeps_the_shorter_of_current_and_base(current: int, expected: int) -> None:
    assert next_interval(current, BASE, Event.MINOR, LIMITS) == expected


@pytest.mark.parametrize(
    ("failure_class", "current", "expected"),
    [
        (FailureClass.DNS, 3600, 10800),
        (FailureClass.TIMEOUT, 3600, 5400),
        (FailureClass.HTTP_5XX, 1000, 1500),
        (FailureClass.BOT_CHALLENGE, 3600, 14400),
        (FailureClass.RATE_LIMIT, 3600, 10800),
        (FailureClass.ROBOTS, 3600, 28800),
        (FailureClass.ROBOTS, 100000, 7 * 86400),  # capped at max
        (FailureClass.PAGE_REMOVED, 200000, 7 * 86400),
    ],
)
def test_failure_multiplies_by_its_policy_up_to_max(
    failure_class: FailureClass, current: int, expected: int
) -> None:
    assert next_interval(current, BASE, Event.FAILURE, LIMITS, failure_class) == expected


def test_a_failure_needs_its_class() -> None:
    with pytest.raises(ValueError, match="class"):
        next_interval(3600, BASE, Event.FAILURE, LIMITS)


def test_every_result_is_clamped_to_min_and_max() -> None:
    fast = Limits(900, 86400, burst_interval_s=60, burst_decay=2.0, stability_growth=1.25)
    assert next_interval(BASE, BASE, Event.MEANINGFUL, fast) == 900
    assert next_interval(100, 3600, Event.MINOR, fast) == 900
    assert next_interval(10**7, 10**7, Event.HOLD, fast) == 86400
    assert next_interval(100, 200, Event.UNCHANGED, fast) == 900


def test_hold_keeps_the_interval() -> None:
    assert next_interval(5000, BASE, Event.HOLD, LIMITS) == 5000


def test_next_run_at_is_the_interval_times_a_seeded_jitter() -> None:
    expected_factor = random.Random(11).uniform(0.9, 1.1)
    at = next_run_at(NOW, 3600, random.Random(11))
    assert at == NOW + timedelta(seconds=3600 * expected_factor)
    assert next_run_at(NOW, 3600, random.Random(11)) == at


def test_quality_score_is_an_ema_with_alpha_015() -> None:
    assert QUALITY_ALPHA == 0.15
    assert quality_score(50.0, 1.0) == 57.5
    assert quality_score(50.0, None) == 42.5
    assert quality_score(80.0, 0.6) == 77.0
    assert quality_score(0.0, 3.0) == 15.0  # confidence is capped at 1


def test_quality_score_converges_toward_its_target() -> None:
    score = 50.0
    for _ in range(60):
        score = quality_score(score, None)
    assert score < 0.1
    for _ in range(60):
        score = quality_score(score, 0.8)
    assert 79.9 < score <= 80.0


# -- properties -------------------------------------------------------------------------

limits_strategy = st.builds(
    lambda low, span, burst, decay, growth: Limits(low, low + span, burst, decay, growth),
    st.integers(60, 3600),
    st.integers(0, 30 * 86400),
    st.integers(1, 86400),
    st.floats(1.0, 4.0),
    st.floats(1.0, 3.0),
)
events = st.one_of(
    st.sampled_from([Event.UNCHANGED, Event.MINOR, Event.MEANINGFUL, Event.HOLD]).map(
        lambda e: (e, None)
    ),
    st.sampled_from(list(FailureClass)).map(lambda c: (Event.FAILURE, c)),
)


@settings(max_examples=200, deadline=None)
@given(
    limits=limits_strategy,
    base_fraction=st.floats(0.0, 1.0),
    start=st.integers(1, 10**8),
    history=st.lists(events, min_size=1, max_size=40),
)
def test_interval_stays_within_min_and_max_for_any_event_sequence(
    limits: Limits,
    base_fraction: float,
    start: int,
    history: list[tuple[Event, FailureClass | None]],
) -> None:
    span = limits.max_interval_s - limits.min_interval_s
    base = limits.min_interval_s + round(span * base_fraction)
    current = start
    for event, failure_class in history:
        current = next_interval(current, base, event, limits, failure_class)
        assert isinstance(current, int)
        assert limits.min_interval_s <= current <= limits.max_interval_s


@settings(max_examples=200, deadline=None)
@given(
    base=st.integers(901, 30 * 86400),
    burst_fraction=st.floats(0.0, 1.0, exclude_max=True),
    decay=st.floats(1.1, 4.0),
    growth=st.floats(1.0, 3.0),
)
def test_a_burst_decays_back_to_base_after_enough_unchanged_runs(
    base: int, burst_fraction: float, decay: float, growth: float
) -> None:
    burst = 900 + int((base - 900) * burst_fraction)  # within [min, base)
    limits = Limits(900, 30 * 86400, burst, decay, growth)
    current = next_interval(base, base, Event.MEANINGFUL, limits)
    assert current == burst
    enough = math.ceil(math.log(base / burst) / math.log(decay)) + 1
    runs = 0
    while current < base and runs < enough:
        following = next_interval(current, base, Event.UNCHANGED, limits)
        assert current < following <= base  # one step up per unchanged run, never past base
        current, runs = following, runs + 1
    assert current == base


@settings(max_examples=300, deadline=None)
@given(
    interval=st.integers(1, 30 * 86400),
    seed=st.integers(0, 2**32),
    offset_s=st.integers(0, 10**9),
)
def test_next_run_jitter_stays_within_ten_percent(interval: int, seed: int, offset_s: int) -> None:
    now = NOW + timedelta(seconds=offset_s)
    delay = (next_run_at(now, interval, random.Random(seed)) - now).total_seconds()
    assert 0.9 * interval - 1e-3 <= delay <= 1.1 * interval + 1e-3

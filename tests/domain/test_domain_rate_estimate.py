"""The change-rate estimate (Cho-Garcia-Molina, bias-reduced) and the √rate allocation."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.rate_estimate import (
    RateEstimate,
    fetches_per_s,
    poisson_rate,
    sqrt_interval,
    sqrt_scale,
)

HOUR, DAY = 3600.0, 86400.0
MIN_I, MAX_I = 900.0, 7 * DAY


def test_no_change_seen_is_rate_zero_and_every_fetch_changed_stays_finite() -> None:
    assert poisson_rate(10, 0, HOUR) == 0.0
    # X = n: the +0.5 terms keep the log finite: ln(2n + 1) / I.
    assert poisson_rate(10, 10, HOUR) == pytest.approx(math.log(21) / HOUR)


def test_the_formula_is_the_bias_reduced_estimator() -> None:
    n, x, interval = 20, 7, 2 * HOUR
    assert poisson_rate(n, x, interval) == pytest.approx(
        -math.log((n - x + 0.5) / (n + 0.5)) / interval
    )


def test_regular_fetches_of_a_poisson_page_recover_its_rate() -> None:
    rng = random.Random(16)
    true_rate, interval, n = 1 / (5 * HOUR), 2 * HOUR, 5000
    # A fetch sees a change when at least one happened in its interval: p = 1 - e^(-λI).
    changes = sum(rng.random() < 1 - math.exp(-true_rate * interval) for _ in range(n))
    assert poisson_rate(n, changes, interval) == pytest.approx(true_rate, rel=0.05)


def test_bias_reduction_beats_the_naive_estimate_on_few_fetches() -> None:
    """Averaged over many short histories, the +0.5 version errs less than -ln(1 - X/n)."""
    rng = random.Random(3)
    true_rate, interval, n = 1 / (3 * HOUR), 2 * HOUR, 8
    p = 1 - math.exp(-true_rate * interval)
    reduced, naive = [], []
    for _ in range(4000):
        x = sum(rng.random() < p for _ in range(n))
        reduced.append(poisson_rate(n, x, interval))
        naive.append(-math.log(max(1e-9, 1 - x / n)) / interval)
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    assert abs(mean(reduced) - true_rate) < abs(mean(naive) - true_rate)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 500),
    data=st.data(),
    interval=st.floats(60, 30 * DAY),
)
def test_more_changes_mean_a_higher_rate_and_the_rate_scales_with_the_interval(
    n: int, data: st.DataObject, interval: float
) -> None:
    x = data.draw(st.integers(0, n - 1))
    assert poisson_rate(n, x + 1, interval) > poisson_rate(n, x, interval) >= 0
    assert poisson_rate(n, x, 2 * interval) == pytest.approx(poisson_rate(n, x, interval) / 2)


@pytest.mark.parametrize(
    ("fetches", "changes", "interval"), [(0, 0, HOUR), (3, 4, HOUR), (3, -1, HOUR), (3, 1, 0)]
)
def test_impossible_observations_are_refused(fetches: int, changes: int, interval: float) -> None:
    with pytest.raises(ValueError):
        poisson_rate(fetches, changes, interval)


def test_running_sums_of_regular_fetches_give_the_regular_estimate() -> None:
    estimate = RateEstimate()
    seen = [True, False, False, True, False, True, False, False]
    for changed in seen:
        estimate = estimate.observe(HOUR, changed, memory=100)
    assert (estimate.fetches, estimate.changes, estimate.observed_s) == (8, 3, 8 * HOUR)
    assert estimate.rate == pytest.approx(poisson_rate(8, 3, HOUR))


def test_irregular_intervals_use_the_mean_interval() -> None:
    estimate = RateEstimate()
    for elapsed, changed in ((HOUR, True), (3 * HOUR, False), (2 * HOUR, True)):
        estimate = estimate.observe(elapsed, changed, memory=100)
    assert estimate.rate == pytest.approx(poisson_rate(3, 2, 2 * HOUR))


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(st.tuples(st.floats(1, 10 * DAY), st.booleans()), min_size=1, max_size=120),
    memory=st.integers(1, 40),
)
def test_memory_caps_the_fetches_and_keeps_the_change_share_and_mean_interval(
    steps: list[tuple[float, bool]], memory: int
) -> None:
    estimate = RateEstimate()
    for elapsed, changed in steps:
        before = estimate
        estimate = estimate.observe(elapsed, changed, memory=memory)
        unscaled = (before.fetches + 1, before.changes + changed, before.observed_s + elapsed)
        assert estimate.fetches == min(memory, unscaled[0])
        # Scaling keeps what the estimate is made of: the share of changes, the mean interval.
        assert estimate.changes / estimate.fetches == pytest.approx(unscaled[1] / unscaled[0])
        assert estimate.observed_s / estimate.fetches == pytest.approx(unscaled[2] / unscaled[0])
        assert 0 <= estimate.changes <= estimate.fetches
        assert estimate.rate >= 0


def test_a_page_whose_habits_change_is_relearned() -> None:
    estimate = RateEstimate.prior(DAY)
    for _ in range(200):
        estimate = estimate.observe(HOUR, True)
    busy = estimate.rate
    for _ in range(200):
        estimate = estimate.observe(HOUR, False)
    assert busy > 1 / HOUR and estimate.rate < busy / 20


def test_the_prior_is_half_a_change_in_its_interval() -> None:
    assert RateEstimate.prior(DAY).rate == pytest.approx(math.log(1.5) / DAY)
    assert RateEstimate().rate == 0.0


@settings(max_examples=200, deadline=None)
@given(rate=st.floats(0, 1), scale=st.floats(0, 1e6))
def test_an_interval_is_inside_the_clamp_and_shrinks_as_the_rate_grows(
    rate: float, scale: float
) -> None:
    interval = sqrt_interval(rate, scale, MIN_I, MAX_I)
    assert MIN_I <= interval <= MAX_I
    assert sqrt_interval(rate * 2 + 1e-9, scale, MIN_I, MAX_I) <= interval


def test_unclamped_fetch_rates_are_proportional_to_the_square_root_of_the_rate() -> None:
    fast, slow, scale = 1 / (4 * HOUR), 1 / (16 * HOUR), 40.0
    ratio = sqrt_interval(slow, scale, 1, 1e9) / sqrt_interval(fast, scale, 1, 1e9)
    assert ratio == pytest.approx(2.0)
    assert sqrt_interval(0.0, scale, MIN_I, MAX_I) == MAX_I, "a static page waits the max"


@settings(max_examples=100, deadline=None)
@given(
    rates=st.lists(st.floats(1 / (200 * DAY), 1 / (2 * HOUR)), min_size=1, max_size=60),
    statics=st.integers(0, 20),
    share=st.floats(0.01, 0.99),
)
def test_the_scale_spends_the_budget(rates: list[float], statics: int, share: float) -> None:
    pages = rates + [0.0] * statics
    floor = len(pages) / MAX_I
    ceiling = len(rates) / MIN_I + statics / MAX_I
    budget = floor + share * (ceiling - floor)
    scale = sqrt_scale(pages, budget, MIN_I, MAX_I)
    assert fetches_per_s(pages, scale, MIN_I, MAX_I) == pytest.approx(budget, rel=1e-6)


def test_a_budget_outside_what_the_clamp_allows_gets_the_nearest_bound() -> None:
    pages = [1 / HOUR, 1 / DAY, 0.0]
    assert sqrt_scale(pages, 1e-9, MIN_I, MAX_I) == 0.0
    most = sqrt_scale(pages, 1.0, MIN_I, MAX_I)
    assert fetches_per_s(pages, most, MIN_I, MAX_I) == pytest.approx(2 / MIN_I + 1 / MAX_I)
    with pytest.raises(ValueError):
        sqrt_scale(pages, 0.0, MIN_I, MAX_I)

"""Spec 001 inside one run: the request budget, stop rules per run and per domain, exit codes,
the forced full refetch rule and the duration syntax of --deadline (pure functions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.run_guard import RuleLimits, RunGuard
from catlas_assets.domain.scheduling import needs_full_fetch, tier_for_interval
from catlas_assets.domain.verdict import FailWhen, exit_code
from catlas_assets.domain.vocabulary import FailureClass, Outcome, RunOutcome, Stop
from catlas_assets.option_types import parse_duration

LIMITS = RuleLimits(max_consecutive_failures=3, max_error_rate=0.5, min_requests_for_error_rate=6)
NOW = datetime(2026, 1, 5, 8, tzinfo=UTC)
FAIL = {"outcome": Outcome.FAILED, "failure_class": FailureClass.HTTP_5XX, "requests": 1}
OK = {"outcome": Outcome.UNCHANGED, "failure_class": None, "requests": 1}


def run(guard: RunGuard, domain: str, result: dict) -> Stop | None:
    assert guard.may_start(domain)
    return guard.finished(domain, **result)


def test_a_blocking_domain_is_stopped_alone_and_the_others_go_on() -> None:
    guard = RunGuard(LIMITS)
    for _ in range(2):
        assert run(guard, "wall.com", FAIL) is None
        assert run(guard, "fine.com", OK) is None
    assert run(guard, "wall.com", FAIL) is Stop.CONSECUTIVE_FAILURES
    assert guard.stopped_domains == {"wall.com": Stop.CONSECUTIVE_FAILURES}
    assert not guard.may_start("wall.com")
    assert guard.may_start("fine.com") and guard.stop is None


def test_a_failure_streak_across_domains_stops_the_whole_run() -> None:
    guard = RunGuard(LIMITS)
    for domain in ("a.com", "b.com", "c.com"):
        assert run(guard, domain, FAIL) is None
    assert guard.stop is Stop.CONSECUTIVE_FAILURES
    assert "across 3 domains" in guard.detail
    assert not guard.may_start("d.com")


def test_the_run_error_rate_needs_its_minimum_number_of_requests() -> None:
    guard = RunGuard(RuleLimits(100, 0.5, 6))
    pattern = ["a.com", "b.com", "c.com", "d.com", "e.com"]
    for i, domain in enumerate(pattern):
        run(guard, domain, FAIL if i % 2 == 0 else OK)
    assert guard.stop is None  # 3 of 5 failed, but only 5 requests so far
    run(guard, "f.com", FAIL)
    assert guard.stop is Stop.ERROR_RATE  # 4 of 6


@pytest.mark.parametrize(
    "failure_class",
    [
        FailureClass.PAGE_REMOVED,
        FailureClass.ROBOTS,
        FailureClass.BLOCKED_DESTINATION,
        FailureClass.PARSING,
        FailureClass.SCHEMA,
    ],
)
def test_removed_pages_policy_refusals_and_unusable_pages_never_count(
    failure_class: FailureClass,
) -> None:
    guard = RunGuard(RuleLimits(1, 0.0, 1))
    for _ in range(20):
        run(guard, "site.com", {**FAIL, "failure_class": failure_class})
    assert guard.stop is None and guard.stopped_domains == {}


def test_skipped_work_sent_no_request_and_never_counts() -> None:
    guard = RunGuard(RuleLimits(1, 0.0, 1))
    run(guard, "site.com", {"outcome": Outcome.SKIPPED, "failure_class": None, "requests": 0})
    assert guard.stop is None and guard.stopped_domains == {}


def test_the_request_budget_counts_every_request_and_stops_before_the_next_unit() -> None:
    guard = RunGuard(LIMITS, max_requests=5)
    run(guard, "a.com", {**OK, "requests": 3})  # robots.txt + a redirect hop + the page
    run(guard, "a.com", {**OK, "requests": 2})
    assert guard.requests == 5 and guard.stop is None  # nothing more wanted yet
    assert not guard.may_start("a.com")
    assert guard.stop is Stop.MAX_REQUESTS
    assert guard.detail == "Reached max requests limit (5)"


def test_the_budget_waits_for_in_flight_work_before_deciding() -> None:
    guard = RunGuard(LIMITS, max_requests=2)
    assert guard.may_start("a.com") and guard.may_start("b.com")
    assert not guard.may_start("c.com") and guard.stop is None  # two still in flight
    guard.finished("a.com", **OK)
    guard.finished("b.com", **OK)
    assert not guard.may_start("c.com") and guard.stop is Stop.MAX_REQUESTS


def test_a_run_whose_every_domain_was_stopped_is_stopped_by_that_rule() -> None:
    guard = RunGuard(LIMITS)
    for _ in range(3):
        run(guard, "wall.com", FAIL)
    guard.settle({"wall.com"})
    assert guard.stop is Stop.CONSECUTIVE_FAILURES and "wall.com" in guard.detail
    other = RunGuard(LIMITS)
    for _ in range(3):
        run(other, "wall.com", FAIL)
    run(other, "fine.com", OK)
    other.settle({"wall.com", "fine.com"})
    assert other.stop is None


def test_an_interruption_stops_the_run_once() -> None:
    guard = RunGuard(LIMITS)
    guard.interrupt("Interrupted by SIGTERM")
    guard.interrupt("Reached the deadline")
    assert (guard.stop, guard.detail) == (Stop.INTERRUPTED, "Interrupted by SIGTERM")
    assert not guard.may_start("a.com")


# -- exit codes -------------------------------------------------------------------------

S, P, F = RunOutcome.SUCCESS, RunOutcome.PARTIAL, RunOutcome.FAILED


@pytest.mark.parametrize(
    ("outcomes", "fail_when", "code"),
    [
        ([S], FailWhen.ANY, 0),
        ([P], FailWhen.ANY, 0),
        ([F], FailWhen.ANY, 1),
        ([S, F], FailWhen.ANY, 1),
        ([S, F], FailWhen.ALL, 0),
        ([F, F], FailWhen.ALL, 1),
        ([F], FailWhen.NEVER, 0),
        ([], FailWhen.ANY, 0),
    ],
)
def test_exit_code_follows_fail_when(outcomes: list, fail_when: FailWhen, code: int) -> None:
    assert exit_code(outcomes, fail_when) == code


# -- forced full refetch ----------------------------------------------------------------


def test_a_sensor_never_fetched_in_full_is_fetched_in_full() -> None:
    assert needs_full_fetch(None, NOW, 86400)


@pytest.mark.parametrize(("age_s", "full"), [(0, False), (86399, False), (86400, True)])
def test_full_refetch_is_due_once_per_interval(age_s: int, full: bool) -> None:
    assert needs_full_fetch(NOW - timedelta(seconds=age_s), NOW, 86400) is full


@settings(max_examples=200, deadline=None)
@given(age_s=st.integers(0, 10**8), interval=st.integers(1, 10**7))
def test_full_refetch_is_never_later_than_its_interval(age_s: int, interval: int) -> None:
    assert needs_full_fetch(NOW - timedelta(seconds=age_s), NOW, interval) is (age_s >= interval)


def test_tier_for_interval_is_part_of_the_scheduling_module() -> None:
    assert [tier_for_interval(s) for s in (900, 3600, 3601, 86400, 86401)] == list("AABCD")


# -- durations --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90), ("90s", 90), ("1.5m", 90), ("1h30m", 5400), ("2d", 172800), ("250ms", 0.25)],
)
def test_deadline_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5 minutes", "-3s", "1h x"])
def test_a_malformed_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)

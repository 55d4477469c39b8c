"""Spec 001: the outcome rules in order, the two stop rules, and the empty-run streak."""

from __future__ import annotations

import pytest

from catlas_assets.domain.verdict import (
    NEUTRAL_FAILURES,
    StopRules,
    Tally,
    decide_outcome,
    next_empty_streak,
)
from catlas_assets.domain.vocabulary import FailureClass, RunOutcome, Stop

# -- outcome ----------------------------------------------------------------------------


@pytest.mark.parametrize("stop", list(Stop))
@pytest.mark.parametrize(
    "tally",
    [
        Tally(succeeded=0, failures=3),
        Tally(succeeded=0, coverage_gaps=2),
        Tally(succeeded=0, failures=1, productive=True),  # rule 1 comes before rule 3
    ],
)
def test_no_success_while_a_failure_or_gap_remains_is_failed(stop: Stop, tally: Tally) -> None:
    assert decide_outcome(stop, tally) is RunOutcome.FAILED


@pytest.mark.parametrize("stop", [Stop.QUEUE_EMPTY, Stop.MAX_REQUESTS, Stop.INTERRUPTED])
def test_an_empty_listing_after_fetching_a_start_url_is_failed(stop: Stop) -> None:
    tally = Tally(succeeded=5, productive=True, fetched_start_url=True, listing_yielded=False)
    assert decide_outcome(stop, tally) is RunOutcome.FAILED


def test_an_empty_last_page_without_a_start_url_still_succeeds() -> None:
    tally = Tally(succeeded=1, fetched_start_url=False, listing_yielded=False)
    assert decide_outcome(Stop.QUEUE_EMPTY, tally) is RunOutcome.SUCCESS


@pytest.mark.parametrize("stop", [Stop.QUEUE_EMPTY, Stop.MAX_REQUESTS])
@pytest.mark.parametrize(
    "tally",
    [
        Tally(),  # nothing to do at all
        Tally(succeeded=4),
        Tally(succeeded=4, failures=2, coverage_gaps=2),  # gaps stay visible, run succeeds
        Tally(succeeded=1, fetched_start_url=True, listing_yielded=True),
    ],
)
def test_queue_empty_or_max_requests_is_success(stop: Stop, tally: Tally) -> None:
    assert decide_outcome(stop, tally) is RunOutcome.SUCCESS


@pytest.mark.parametrize(
    "stop", [Stop.CONSECUTIVE_FAILURES, Stop.ERROR_RATE, Stop.BLOCKED, Stop.ERROR]
)
def test_a_productive_run_stopped_early_is_partial(stop: Stop) -> None:
    assert decide_outcome(stop, Tally(succeeded=3, failures=9, productive=True)) is (
        RunOutcome.PARTIAL
    )


def test_an_interrupted_run_after_a_success_is_partial() -> None:
    assert decide_outcome(Stop.INTERRUPTED, Tally(succeeded=1)) is RunOutcome.PARTIAL


@pytest.mark.parametrize(
    ("stop", "tally"),
    [
        (Stop.INTERRUPTED, Tally()),  # "Not started"
        (Stop.ERROR, Tally()),
        (Stop.BLOCKED, Tally(succeeded=2)),  # succeeded but stored nothing new
        (Stop.ERROR_RATE, Tally(succeeded=5, failures=5)),
        (Stop.CONSECUTIVE_FAILURES, Tally(succeeded=1, failures=10)),
    ],
)
def test_anything_else_is_failed(stop: Stop, tally: Tally) -> None:
    assert decide_outcome(stop, tally) is RunOutcome.FAILED


# -- stop rules -------------------------------------------------------------------------


def _rules(**kw: float) -> StopRules:
    values = {
        "max_consecutive_failures": 3,
        "max_error_rate": 0.5,
        "min_requests_for_error_rate": 6,
    }
    values.update(kw)
    return StopRules(**values)  # type: ignore[arg-type]


def test_consecutive_failures_stop_the_run_at_the_limit() -> None:
    rules = _rules()
    assert rules.record(FailureClass.HTTP_5XX) is None
    assert rules.record(FailureClass.TIMEOUT) is None
    assert rules.record(FailureClass.BOT_CHALLENGE) is Stop.CONSECUTIVE_FAILURES


def test_a_success_resets_the_consecutive_count() -> None:
    rules = _rules(max_error_rate=1.0)
    for _ in range(5):
        assert rules.record(FailureClass.HTTP_5XX) is None
        assert rules.record(FailureClass.HTTP_5XX) is None
        assert rules.record(None) is None
    assert (rules.requests, rules.failures, rules.consecutive) == (15, 10, 0)


def test_error_rate_stops_only_after_the_minimum_number_of_requests() -> None:
    rules = _rules(max_consecutive_failures=100)
    results = []
    for failure in [
        FailureClass.HTTP_5XX,
        None,
        FailureClass.HTTP_5XX,
        FailureClass.HTTP_5XX,
        None,
    ]:
        results.append(rules.record(failure))
    assert results == [None] * 5  # 3/5 failed, but fewer than 6 requests
    assert rules.record(FailureClass.HTTP_5XX) is Stop.ERROR_RATE  # 4/6 > 0.5


def test_error_rate_at_exactly_the_limit_does_not_stop() -> None:
    rules = _rules(max_consecutive_failures=100, min_requests_for_error_rate=4)
    for failure in [FailureClass.DNS, None, FailureClass.DNS]:
        assert rules.record(failure) is None
    assert rules.record(None) is None  # 2/4 == 0.5, not above it


@pytest.mark.parametrize("neutral", sorted(NEUTRAL_FAILURES))
def test_removed_pages_robots_and_blocked_destinations_never_count(
    neutral: FailureClass,
) -> None:
    rules = _rules(min_requests_for_error_rate=1)
    for _ in range(50):
        assert rules.record(neutral) is None
    assert (rules.requests, rules.failures, rules.consecutive) == (0, 0, 0)
    assert rules.record(FailureClass.HTTP_5XX) is Stop.ERROR_RATE  # 1/1 of counted requests


def test_neutral_failures_are_exactly_the_three_of_the_spec() -> None:
    assert {
        FailureClass.PAGE_REMOVED,
        FailureClass.ROBOTS,
        FailureClass.BLOCKED_DESTINATION,
    } == NEUTRAL_FAILURES


def test_a_neutral_failure_does_not_break_a_failure_streak() -> None:
    rules = _rules()
    assert rules.record(FailureClass.HTTP_5XX) is None
    assert rules.record(FailureClass.HTTP_5XX) is None
    assert rules.record(FailureClass.PAGE_REMOVED) is None
    assert rules.record(FailureClass.HTTP_5XX) is Stop.CONSECUTIVE_FAILURES


def test_an_unusable_page_never_counts() -> None:
    rules = _rules(min_requests_for_error_rate=1)
    assert rules.record(FailureClass.PARSING, unusable=True) is None
    assert rules.requests == 0


# -- empty-run streak -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "productive", "claimed", "expected"),
    [
        (4, True, 10, 0),  # productive resets
        (4, True, 0, 0),
        (4, False, 10, 5),  # work done, nothing stored
        (0, False, 1, 1),
        (4, False, 0, 4),  # idle tick: nothing was due
    ],
)
def test_next_empty_streak(previous: int, productive: bool, claimed: int, expected: int) -> None:
    assert next_empty_streak(previous, productive=productive, claimed=claimed) == expected

"""The pure rule that bounds a batch of whole units (an onboarding batch) by -n and --deadline."""

from __future__ import annotations

from catlas_assets.domain.batch_bound import NOT_STARTED, BatchBound
from catlas_assets.domain.vocabulary import Stop


def test_no_bound_lets_every_unit_start() -> None:
    bound = BatchBound()
    assert all(bound.may_start(None) for _ in range(50))
    assert bound.stop is None and bound.started == 50


def test_a_spent_budget_stops_the_batch_before_the_next_unit() -> None:
    bound = BatchBound(max_requests=10)
    assert bound.may_start(None)
    bound.finished(12)  # a unit keeps its own budget: it may overshoot the batch's
    assert not bound.may_start(None)
    assert bound.stop is Stop.MAX_REQUESTS
    assert bound.detail == "Reached max requests limit (10)"
    assert bound.verdict_detail == "Reached max requests limit (10)"


def test_units_in_flight_count_as_one_request_each_until_they_finish() -> None:
    bound = BatchBound(max_requests=2)
    assert bound.may_start(None) and bound.may_start(None)
    # Two in flight could spend the budget: no third one, but the batch is not over yet.
    assert not bound.may_start(None)
    assert bound.stop is None
    bound.finished(1)
    bound.finished(0)
    assert bound.may_start(None)  # they spent 1 of 2 requests: room for one more


def test_units_left_waiting_while_others_were_in_flight_end_the_batch_on_the_budget() -> None:
    bound = BatchBound(max_requests=1)
    assert bound.may_start(None)
    assert not bound.may_start(None)
    bound.finished(5)
    bound.settle(not_reached=1)
    assert bound.stop is Stop.MAX_REQUESTS


def test_an_interruption_stops_the_batch_and_keeps_its_reason() -> None:
    bound = BatchBound(max_requests=100)
    assert bound.may_start(None)
    bound.finished(3)
    assert not bound.may_start("Reached the deadline (60 s)")
    assert (bound.stop, bound.detail) == (Stop.INTERRUPTED, "Reached the deadline (60 s)")
    assert not bound.may_start(None)  # once stopped, the batch stays stopped


def test_a_batch_stopped_before_its_first_unit_is_not_started() -> None:
    bound = BatchBound(max_requests=0)
    assert not bound.may_start(None)
    assert bound.stop is Stop.MAX_REQUESTS and bound.verdict_detail == NOT_STARTED
    interrupted = BatchBound()
    assert not interrupted.may_start("Interrupted by SIGTERM")
    assert interrupted.verdict_detail == NOT_STARTED == "Not started"

"""Per-URL site-crawl events and their regression/recovery transition, pure."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from catlas_assets.domain.vocabulary import PageEvent, Transition

Baseline = Literal["success", "failure"]

SUCCESS_EVENTS = frozenset({PageEvent.NEW, PageEvent.UNCHANGED, PageEvent.CHANGED})


def baseline_of(event: PageEvent) -> Baseline | None:
    """The outcome an event sets as the URL's baseline; redirected and skipped set none."""
    if event in SUCCESS_EVENTS:
        return "success"
    if event is PageEvent.FAILED:
        return "failure"
    return None


def transition(previous: str | None, event: PageEvent) -> Transition | None:
    """Regression: failed after succeeding; recovery: succeeded after failing.

    `previous` is the URL's last success-or-failure outcome only, so a redirected or
    skipped event never stands in for its last real crawl result.
    """
    now = baseline_of(event)
    if previous == "success" and now == "failure":
        return Transition.REGRESSION
    if previous == "failure" and now == "success":
        return Transition.RECOVERY
    return None


def event_counts(events: Counter[PageEvent]) -> dict[str, int]:
    return {e.value: events.get(e, 0) for e in PageEvent}

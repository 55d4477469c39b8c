"""How a run ends (spec 001): one Stop and one Outcome that every reader agrees on."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from catlas_assets.domain.vocabulary import FailureClass, RunOutcome, Stop

# The site's answer about one URL, or our own policy: never evidence that a site blocks us.
NEUTRAL_FAILURES = frozenset(
    {FailureClass.PAGE_REMOVED, FailureClass.ROBOTS, FailureClass.BLOCKED_DESTINATION}
)


@dataclass(frozen=True)
class Tally:
    """What a run did, as the outcome rules read it."""

    succeeded: int = 0  # requests/items that ended well
    failures: int = 0  # items whose last attempt failed
    coverage_gaps: int = 0  # due items that failed or were not reached
    productive: bool = False  # stored a new item or a change
    fetched_start_url: bool = False
    listing_yielded: bool = True  # a listing page yielded an item or an item link


def decide_outcome(stop: Stop, tally: Tally) -> RunOutcome:
    if tally.succeeded == 0 and (tally.failures > 0 or tally.coverage_gaps > 0):
        return RunOutcome.FAILED
    if tally.fetched_start_url and not tally.listing_yielded:
        return RunOutcome.FAILED
    if stop in (Stop.QUEUE_EMPTY, Stop.MAX_REQUESTS):
        return RunOutcome.SUCCESS
    if tally.productive or (stop is Stop.INTERRUPTED and tally.succeeded > 0):
        return RunOutcome.PARTIAL
    return RunOutcome.FAILED


@dataclass
class StopRules:
    """The two rules that end a run a site is blocking, before it charges every URL."""

    max_consecutive_failures: int
    max_error_rate: float
    min_requests_for_error_rate: int
    requests: int = 0
    failures: int = 0
    consecutive: int = 0

    def record(self, failure_class: FailureClass | None, *, unusable: bool = False) -> Stop | None:
        """Count one finished request; return the stop it triggers, if any."""
        if failure_class in NEUTRAL_FAILURES or unusable:
            return None  # neither a success nor a failure of the site toward us
        self.requests += 1
        if failure_class is None:
            self.consecutive = 0
            return None
        self.failures += 1
        self.consecutive += 1
        if self.consecutive >= self.max_consecutive_failures:
            return Stop.CONSECUTIVE_FAILURES
        if (
            self.requests >= self.min_requests_for_error_rate
            and self.failures / self.requests > self.max_error_rate
        ):
            return Stop.ERROR_RATE
        return None


def next_empty_streak(previous: int, *, productive: bool, claimed: int) -> int:
    """Runs in a row that were not productive; an idle tick (nothing due) leaves it as is."""
    if productive:
        return 0
    if claimed == 0:
        return previous
    return previous + 1


class FailWhen(StrEnum):
    """Which failed runs make a command exit 1 (`--fail-when`)."""

    ANY = "any"
    ALL = "all"
    NEVER = "never"


def exit_code(outcomes: list[RunOutcome], fail_when: FailWhen) -> int:
    """Success and partial exit 0; failed runs exit 1 as `fail_when` says."""
    failed = [o for o in outcomes if o is RunOutcome.FAILED]
    if fail_when is FailWhen.NEVER or not failed:
        return 0
    if fail_when is FailWhen.ALL and len(failed) < len(outcomes):
        return 0
    return 1

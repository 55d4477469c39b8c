"""Repair's rules, pure: which sensors it looks at, whether a candidate is the same page,
and what to do with what one attempt found (spec: Repair).

An attempt retries the sensor's URL, then scores candidate URLs for the same surface by
content identity with the last snapshot's text: the simhash Hamming distance (the `simhash`
package's `Simhash` value over catlas's fast fingerprint) or the fuzzy ratio (`rapidfuzz`).
Exactly one candidate that passes is a move (migrate); several, or candidates of which none
passes, go to a person (review); no candidate at all leaves the sensor failing until
`retire_after_failures` retires it. The service around it (services/repair.py) makes the
requests and writes the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from rapidfuzz import fuzz
from simhash import Simhash

from catlas_assets.domain.fingerprint import simhash64
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import FailureClass, SensorStatus

REPAIRABLE = frozenset({SensorStatus.FAILING, SensorStatus.STALE, SensorStatus.REDIRECTED})
PERMANENT_REDIRECTS = frozenset({301, 308})
# Texts longer than this are compared on their first characters only: a fuzzy ratio is
# quadratic-ish and a page's identity shows well before its end.
RATIO_CHARS = 20_000
_MASK64 = (1 << 64) - 1


class Action(StrEnum):
    RECOVER = "recover"  # the URL answers again
    MIGRATE = "migrate"  # one candidate is the same page: follow it
    REVIEW = "review"  # uncertain: several pass, or none does
    RETIRE = "retire"  # no candidate and failures at the policy's limit
    WAIT = "wait"  # nothing found yet; try again after the cool-down


@dataclass(frozen=True)
class Thresholds:
    max_distance: int = 12
    min_ratio: float = 0.6
    retire_after_failures: int = 30
    cooldown_s: int = 6 * 3600


@dataclass(frozen=True)
class Scored:
    """One candidate URL and how much its text resembles the last snapshot's."""

    url: str
    source: str  # redirect | sitemap | nav | link
    distance: int | None  # simhash Hamming distance; None when it could not be fetched
    ratio: float | None
    passes: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "source": self.source,
            "distance": self.distance,
            "ratio": self.ratio,
            "passes": self.passes,
        }


@dataclass(frozen=True)
class Decision:
    action: Action
    successor: str | None = None
    reason: str = ""


def fingerprint(text: str) -> Simhash:
    """catlas's fast 64-bit fingerprint as the `simhash` package's value type."""
    return Simhash(simhash64(text) & _MASK64, f=64)


def score(url: str, source: str, last_text: str, text: str, t: Thresholds) -> Scored:
    """Content identity of a candidate's text with the last snapshot's text."""
    distance = fingerprint(last_text).distance(fingerprint(text))
    ratio = round(fuzz.ratio(last_text[:RATIO_CHARS], text[:RATIO_CHARS]) / 100.0, 4)
    passes = bool(last_text.strip()) and (distance <= t.max_distance or ratio >= t.min_ratio)
    return Scored(url, source, distance, ratio, passes)


def unreachable(url: str, source: str) -> Scored:
    return Scored(url, source, None, None, False)


def decide(*, recovered: bool, scored: list[Scored], failures: int, t: Thresholds) -> Decision:
    """What one attempt's findings mean; `failures` counts the retry just made."""
    if recovered:
        return Decision(Action.RECOVER, reason="the URL answers again")
    passing = [s for s in scored if s.passes]
    if len(passing) == 1:
        return Decision(
            Action.MIGRATE, passing[0].url, f"one candidate is the same page ({passing[0].source})"
        )
    if len(passing) > 1:
        return Decision(Action.REVIEW, reason=f"{len(passing)} candidates pass the identity check")
    if scored:
        return Decision(Action.REVIEW, reason="no candidate passes the identity check")
    if failures >= t.retire_after_failures:
        return Decision(Action.RETIRE, reason=f"{failures} failures and no candidate")
    return Decision(Action.WAIT, reason="no candidate yet")


def needs_repair(status: str, last_failure_class: str | None, failures: int) -> bool:
    """failing / stale / redirected sensors, and sensors whose page is repeatedly removed."""
    if SensorStatus(status) in REPAIRABLE:
        return True
    return (
        SensorStatus(status) is SensorStatus.ACTIVE
        and last_failure_class == FailureClass.PAGE_REMOVED
        and failures >= 2
    )


def cooled_down(config: dict[str, Any], now: datetime, cooldown_s: int) -> bool:
    """True when the last attempt (`config.last_repair_at`, ISO) is older than the cool-down."""
    last = config.get("last_repair_at")
    if not last:
        return True
    return datetime.fromisoformat(str(last)) + timedelta(seconds=cooldown_s) <= now


def lineage_of(sensor_id: int, config: dict[str, Any]) -> int:
    """The first sensor of the chain this sensor continues (itself when it moved never)."""
    return int(config.get("lineage_id") or sensor_id)


def successor_config(
    predecessor_id: int, predecessor_config: dict[str, Any], now: datetime
) -> dict[str, Any]:
    return {
        "predecessor_id": predecessor_id,
        "lineage_id": lineage_of(predecessor_id, predecessor_config),
        "migrated_at": now.isoformat(),
    }


# -- same-domain permanent moves ---------------------------------------------------------
def permanent_move(url: str, status: int | None, location: str | None) -> str | None:
    """The target of a 301/308 from `url` to another URL of the same registrable domain."""
    if status not in PERMANENT_REDIRECTS or not location or location == url:
        return None
    if registrable_domain(location) != registrable_domain(url):
        return None
    return location


def follow_move(
    config: dict[str, Any], url: str, target: str | None
) -> tuple[dict[str, Any], bool]:
    """Remember a permanent move; the second consecutive sighting moves the sensor.

    Returns the new config and whether the sensor's URL becomes `target` now. A run
    without the move forgets an earlier sighting (the move must be seen twice in a row).
    """
    seen = config.get("moved_to")
    if target is None:
        if seen is None:
            return config, False
        return {k: v for k, v in config.items() if k != "moved_to"}, False
    if seen != target:
        return {**config, "moved_to": target}, False
    previous = [*(config.get("previous_urls") or []), url]
    moved = {k: v for k, v in config.items() if k not in ("moved_to", "redirect_url")}
    return {**moved, "previous_urls": previous}, True


def onto_watched_url(
    update: dict[str, Any],
    *,
    url: str,
    holder_id: int,
    holder_status: str,
    now: datetime,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A move (`update["url"]`) onto a URL another sensor of the same company and surface
    holds: (company, surface, url) is unique, so the sensor cannot take it.

    A live holder watches that page already: this sensor is its duplicate and retires in
    its favour (`config.duplicate_of`); the returned detail is for a `sensor_retired`
    item. A retired holder keeps its URL and history: this sensor stays where it is,
    still following the redirect, and the move is tried again on the next run.
    """
    target = update["url"]
    config = dict(update.get("config") or {})
    previous = list(config.pop("previous_urls", None) or [])
    if previous and previous[-1] == url:  # follow_move's record of this move: not made
        previous.pop()
    if previous:
        config["previous_urls"] = previous
    kept = {k: v for k, v in update.items() if k != "url"}
    if SensorStatus(holder_status) is SensorStatus.RETIRED:
        return {**kept, "config": {**config, "moved_to": target}}, None
    retired = {
        **kept,
        "status": SensorStatus.RETIRED,
        "retired_at": now,
        "config": {**config, "duplicate_of": holder_id},
    }
    detail = {
        "from": url,
        "to": target,
        "duplicate_of": holder_id,
        "reason": f"moved permanently to {target}, which sensor {holder_id} watches already",
    }
    return retired, detail

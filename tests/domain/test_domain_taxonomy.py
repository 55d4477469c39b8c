"""The spec's tables as data: failure policies, change kinds and sensor tier letters."""

from __future__ import annotations

import pytest

from catlas_assets.domain.taxonomy import (
    FAILURE_POLICY,
    SURFACE_BASE_INTERVAL_S,
    SURFACE_IMPORTANCE,
    TIER_FACTOR,
    FailurePolicy,
    change_kind,
    tier_for_interval,
)
from catlas_assets.domain.vocabulary import ChangeKind, FailureClass, Surface

# spec 000, "Failure policies": multiplier / failures-before-failing
SPEC_POLICIES = {
    "DNS": (3.0, 3),
    "TIMEOUT": (1.5, 4),
    "HTTP_4XX": (2.0, 3),
    "HTTP_5XX": (1.5, 5),
    "BOT_CHALLENGE": (4.0, 2),
    "PARSING": (2.0, 3),
    "SCHEMA": (2.0, 3),
    "REDIRECT": (2.0, 2),
    "PAGE_REMOVED": (4.0, 2),
    "RATE_LIMIT": (3.0, 4),
    "ROBOTS": (8.0, 1),
    "BLOCKED_DESTINATION": (8.0, 1),
    "TOO_LARGE": (4.0, 2),
    "UNKNOWN": (2.0, 3),
}


def test_failure_policy_is_the_spec_table_for_all_fourteen_classes() -> None:
    assert len(FailureClass) == 14
    assert {
        str(k): (p.multiplier, p.failures_before_failing) for k, p in FAILURE_POLICY.items()
    } == (SPEC_POLICIES)
    assert all(isinstance(p, FailurePolicy) for p in FAILURE_POLICY.values())


def test_failure_classes_are_spelled_as_the_spec_spells_them() -> None:
    assert {member.value for member in FailureClass} == set(SPEC_POLICIES)


THRESHOLDS = {
    "minor_threshold": 0.02,
    "meaningful_threshold": 0.10,
    "major_threshold": 0.40,
    "critical_threshold": 0.80,
}


@pytest.mark.parametrize(
    ("significance", "expected"),
    [
        (0.0, ChangeKind.NOISE),
        (0.0199, ChangeKind.NOISE),
        (0.02, ChangeKind.MINOR),
        (0.0999, ChangeKind.MINOR),
        (0.10, ChangeKind.MEANINGFUL),
        (0.3999, ChangeKind.MEANINGFUL),
        (0.40, ChangeKind.MAJOR),
        (0.7999, ChangeKind.MAJOR),
        (0.80, ChangeKind.CRITICAL),
        (1.0, ChangeKind.CRITICAL),
    ],
)
def test_change_kind_starts_at_each_threshold(significance: float, expected: ChangeKind) -> None:
    assert change_kind(significance, **THRESHOLDS) is expected


def test_change_kind_follows_the_thresholds_it_is_given() -> None:
    strict = dict(THRESHOLDS, meaningful_threshold=0.5, major_threshold=0.6)
    assert change_kind(0.3, **strict) is ChangeKind.MINOR
    assert change_kind(0.55, **strict) is ChangeKind.MEANINGFUL


@pytest.mark.parametrize(
    ("interval_s", "letter"),
    [
        (900, "A"),
        (3600, "A"),
        (3601, "B"),
        (6 * 3600, "B"),
        (6 * 3600 + 1, "C"),
        (86400, "C"),
        (86401, "D"),
        (7 * 86400, "D"),
    ],
)
def test_tier_letter_comes_from_the_interval_band(interval_s: int, letter: str) -> None:
    assert tier_for_interval(interval_s) == letter


def test_every_surface_has_an_importance_and_a_base_interval() -> None:
    assert set(SURFACE_IMPORTANCE) == set(Surface)
    assert set(SURFACE_BASE_INTERVAL_S) == set(Surface)
    assert all(0 <= v <= 1 for v in SURFACE_IMPORTANCE.values())


def test_tier_factors_are_the_spec_values() -> None:
    assert TIER_FACTOR == {1: 0.5, 2: 0.75, 3: 1.0, 4: 1.5}

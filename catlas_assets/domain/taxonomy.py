"""Surface taxonomy, failure policies and change kinds: the spec's tables, in one module."""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.domain.vocabulary import ChangeKind, DiscoveryMethod, FailureClass, Surface

HOUR = 3600
DAY = 24 * HOUR

# How much a surface matters to an analyst (0-1); orders the per-company sensor cap.
SURFACE_IMPORTANCE: dict[Surface, float] = {
    Surface.CAREERS: 1.0,
    Surface.JOBS_BOARD: 1.0,
    Surface.PRICING: 0.95,
    Surface.STATUS: 0.9,
    Surface.NEWSROOM: 0.85,
    Surface.BLOG: 0.7,
    Surface.FEED: 0.7,
    Surface.PRODUCTS: 0.65,
    Surface.INVESTORS: 0.6,
    Surface.PEOPLE: 0.55,
    Surface.DOCS: 0.5,
    Surface.DEVELOPER: 0.45,
    Surface.HOMEPAGE: 0.4,
    Surface.LOCATIONS: 0.3,
}

# How often a surface changes in practice: the base interval before tier and adaptation.
SURFACE_BASE_INTERVAL_S: dict[Surface, int] = {
    Surface.STATUS: 900,
    Surface.JOBS_BOARD: 3 * HOUR,
    Surface.FEED: 3 * HOUR,
    Surface.CAREERS: 6 * HOUR,
    Surface.NEWSROOM: 6 * HOUR,
    Surface.BLOG: 12 * HOUR,
    Surface.PRICING: 12 * HOUR,
    Surface.PRODUCTS: DAY,
    Surface.HOMEPAGE: DAY,
    Surface.DOCS: DAY,
    Surface.DEVELOPER: DAY,
    Surface.INVESTORS: DAY,
    Surface.PEOPLE: 3 * DAY,
    Surface.LOCATIONS: 7 * DAY,
}

# Trust in how a candidate was found (discovery selection weight).
METHOD_WEIGHT: dict[DiscoveryMethod, float] = {
    DiscoveryMethod.ATS: 1.0,
    DiscoveryMethod.FEED: 0.95,
    DiscoveryMethod.NAV: 0.9,
    DiscoveryMethod.SUBDOMAIN: 0.85,
    DiscoveryMethod.SITEMAP: 0.8,
    DiscoveryMethod.ROBOTS: 0.75,
    DiscoveryMethod.LINK: 0.7,
    DiscoveryMethod.PROBE: 0.6,
    DiscoveryMethod.REPAIR: 0.9,
    DiscoveryMethod.MANUAL: 1.0,
}

# Company tier (1-4) scales the base interval of its sensors.
TIER_FACTOR: dict[int, float] = {1: 0.5, 2: 0.75, 3: 1.0, 4: 1.5}


@dataclass(frozen=True)
class FailurePolicy:
    multiplier: float
    failures_before_failing: int


FAILURE_POLICY: dict[FailureClass, FailurePolicy] = {
    FailureClass.DNS: FailurePolicy(3.0, 3),
    FailureClass.TIMEOUT: FailurePolicy(1.5, 4),
    FailureClass.HTTP_4XX: FailurePolicy(2.0, 3),
    FailureClass.HTTP_5XX: FailurePolicy(1.5, 5),
    FailureClass.BOT_CHALLENGE: FailurePolicy(4.0, 2),
    FailureClass.PARSING: FailurePolicy(2.0, 3),
    FailureClass.SCHEMA: FailurePolicy(2.0, 3),
    FailureClass.REDIRECT: FailurePolicy(2.0, 2),
    FailureClass.PAGE_REMOVED: FailurePolicy(4.0, 2),
    FailureClass.RATE_LIMIT: FailurePolicy(3.0, 4),
    FailureClass.ROBOTS: FailurePolicy(8.0, 1),
    FailureClass.BLOCKED_DESTINATION: FailurePolicy(8.0, 1),
    FailureClass.TOO_LARGE: FailurePolicy(4.0, 2),
    FailureClass.UNKNOWN: FailurePolicy(2.0, 3),
}


def change_kind(
    significance: float,
    *,
    minor_threshold: float,
    meaningful_threshold: float,
    major_threshold: float,
    critical_threshold: float,
) -> ChangeKind:
    if significance >= critical_threshold:
        return ChangeKind.CRITICAL
    if significance >= major_threshold:
        return ChangeKind.MAJOR
    if significance >= meaningful_threshold:
        return ChangeKind.MEANINGFUL
    if significance >= minor_threshold:
        return ChangeKind.MINOR
    return ChangeKind.NOISE


# Interval bands of the sensor tier letter: A is watched most closely.
TIER_BANDS: tuple[tuple[int, str], ...] = ((HOUR, "A"), (6 * HOUR, "B"), (DAY, "C"))


def tier_for_interval(interval_s: float) -> str:
    for upper, letter in TIER_BANDS:
        if interval_s <= upper:
            return letter
    return "D"


# How much a connector's answers can be trusted (the spec's `reliability` in quality_score):
# a vendor API returns typed records, generic HTML is a guess at a page's structure.
CONNECTOR_RELIABILITY: dict[str, float] = {
    "greenhouse": 1.0,
    "lever": 1.0,
    "ashby": 1.0,
    "workable": 1.0,
    "workday": 0.95,
    "recruitee": 1.0,
    "personio": 1.0,
    "teamtailor": 0.95,
    "smartrecruiters": 1.0,
    "statuspage": 1.0,
    "feed": 0.9,
    "sitemap": 0.8,
    "generic_html": 0.6,
}


# -- discovery (spec: Discovery) ------------------------------------------------------------
# Selection score = confidence × METHOD_WEIGHT × verified factor × depth factor.
# A candidate we fetched and saw answer (or whose vendor API answered) beats one only seen.
VERIFIED_FACTOR: dict[bool, float] = {True: 1.0, False: 0.75}
# Each path segment beyond the first costs 10 %: `/careers` beats `/about/company/careers`.
DEPTH_DECAY = 0.9
# Below this score a candidate is logged but never becomes a sensor.
MIN_SELECTION_SCORE = 0.3
# A surface counts as found (no probe is spent on it) once a candidate was verified or
# scores this much: a nav link (0.9 × 0.9 × 0.75 ≈ 0.6) does, a bare anchor-text guess
# does not. Like the threshold above it is calibrated against the weights, not tuned.
FOUND_SCORE = 0.45

# Common paths probed for high-value surfaces still missing after the homepage, the
# sitemap and ATS detection, most valuable first (at most 12 are ever requested).
PROBE_PATHS: tuple[tuple[Surface, str], ...] = (
    (Surface.CAREERS, "/careers"),
    (Surface.CAREERS, "/jobs"),
    (Surface.PRICING, "/pricing"),
    (Surface.NEWSROOM, "/news"),
    (Surface.NEWSROOM, "/newsroom"),
    (Surface.NEWSROOM, "/press"),
    (Surface.BLOG, "/blog"),
    (Surface.STATUS, "/status"),
    (Surface.INVESTORS, "/investors"),
    (Surface.DOCS, "/docs"),
    (Surface.PEOPLE, "/team"),
    (Surface.PRODUCTS, "/products"),
)

# Subdomain labels probed last (DNS first, GET only for names that resolve).
SUBDOMAIN_SURFACES: tuple[tuple[str, Surface], ...] = (
    ("careers", Surface.CAREERS),
    ("jobs", Surface.CAREERS),
    ("news", Surface.NEWSROOM),
    ("blog", Surface.BLOG),
    ("docs", Surface.DOCS),
    ("developer", Surface.DEVELOPER),
    ("developers", Surface.DEVELOPER),
    ("status", Surface.STATUS),
    ("investors", Surface.INVESTORS),
    ("ir", Surface.INVESTORS),
    ("shop", Surface.PRODUCTS),
)

# The connector a selected sensor starts with when discovery found nothing more specific.
DEFAULT_CONNECTOR: dict[Surface, str] = {Surface.FEED: "feed"}

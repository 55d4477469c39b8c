"""Repair's pure rules: identity scoring, the decision, cool-down, same-domain moves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from catlas_assets.domain.repair import (
    Action,
    Thresholds,
    cooled_down,
    decide,
    fingerprint,
    follow_move,
    needs_repair,
    permanent_move,
    score,
    unreachable,
)

PAGE = (
    "Careers at Bluefin Analytics. Join the team that builds forecasting for retail. "
    "Open roles: Senior Data Engineer (Remote, EU), Product Designer (Lisbon), "
    "Solutions Architect (Berlin). We offer learning budgets and four weeks of holiday. "
)
EDITED = PAGE.replace("four weeks", "five weeks") + "Apply today."
OTHER = (
    "Pricing. Starter plan 19 dollars a month, Pro plan 49 dollars a month, Enterprise on "
    "request. All plans include unlimited dashboards and email support."
)
T = Thresholds(max_distance=12, min_ratio=0.6, retire_after_failures=5, cooldown_s=3600)


def test_fingerprint_is_a_simhash_value_of_the_fast_fingerprint() -> None:
    assert fingerprint(PAGE).distance(fingerprint(PAGE)) == 0
    assert fingerprint(PAGE).f == 64
    assert fingerprint(PAGE).distance(fingerprint(OTHER)) > 12


def test_score_identity_passes_for_the_same_or_a_lightly_edited_page_only() -> None:
    assert score("u", "nav", PAGE, PAGE, T).passes
    edited = score("u", "nav", PAGE, EDITED, T)
    assert edited.passes and edited.ratio is not None and edited.ratio >= 0.6
    other = score("u", "nav", PAGE, OTHER, T)
    assert not other.passes and other.ratio is not None and other.ratio < 0.6
    # Nothing to compare with: never the same page.
    assert not score("u", "nav", "", PAGE, T).passes
    strict = Thresholds(max_distance=0, min_ratio=1.0)
    assert not score("u", "nav", PAGE, EDITED, strict).passes


def test_decide_the_ladder() -> None:
    good = score("http://a/new", "nav", PAGE, PAGE, T)
    bad = score("http://a/decoy", "nav", PAGE, OTHER, T)
    assert decide(recovered=True, scored=[good], failures=9, t=T).action is Action.RECOVER
    migrate = decide(recovered=False, scored=[bad, good], failures=2, t=T)
    assert migrate.action is Action.MIGRATE and migrate.successor == "http://a/new"
    twice = decide(
        recovered=False,
        scored=[good, score("http://a/x", "sitemap", PAGE, EDITED, T)],
        failures=2,
        t=T,
    )
    assert twice.action is Action.REVIEW and twice.successor is None
    assert decide(recovered=False, scored=[bad], failures=9, t=T).action is Action.REVIEW
    assert (
        decide(recovered=False, scored=[unreachable("http://a/y", "nav")], failures=1, t=T).action
        is Action.REVIEW
    )
    assert decide(recovered=False, scored=[], failures=4, t=T).action is Action.WAIT
    assert decide(recovered=False, scored=[], failures=5, t=T).action is Action.RETIRE


def test_which_sensors_repair_looks_at() -> None:
    assert needs_repair("failing", "HTTP_5XX", 5)
    assert needs_repair("stale", "TIMEOUT", 6)
    assert needs_repair("redirected", None, 0)
    assert needs_repair("active", "PAGE_REMOVED", 2)
    assert not needs_repair("active", "PAGE_REMOVED", 1)
    assert not needs_repair("active", None, 0)
    assert not needs_repair("retired", "PAGE_REMOVED", 40)
    assert not needs_repair("blocked", "ROBOTS", 1)


def test_cooldown() -> None:
    now = datetime(2026, 1, 10, 8, tzinfo=UTC)
    assert cooled_down({}, now, 3600)
    recent = {"last_repair_at": (now - timedelta(minutes=30)).isoformat()}
    assert not cooled_down(recent, now, 3600)
    assert cooled_down(recent, now + timedelta(minutes=30), 3600)


def test_same_domain_permanent_moves_need_two_sightings() -> None:
    url = "http://bluefin-analytics.io/careers"
    target = "http://bluefin-analytics.io/company/careers"
    assert permanent_move(url, 301, target) == target
    assert permanent_move(url, 308, "http://careers.bluefin-analytics.io/") is not None
    assert permanent_move(url, 302, target) is None
    assert permanent_move(url, 301, "http://other.example/careers") is None
    assert permanent_move(url, None, target) is None
    first, moved = follow_move({"x": 1}, url, target)
    assert not moved and first == {"x": 1, "moved_to": target}
    second, moved = follow_move(first, url, target)
    assert moved and second == {"x": 1, "previous_urls": [url]}
    # A run without the move forgets the first sighting.
    forgot, moved = follow_move(first, url, None)
    assert not moved and forgot == {"x": 1}
    assert follow_move({"x": 1}, url, None) == ({"x": 1}, False)

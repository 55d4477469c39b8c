"""One sensor run, decided purely: outcome, lake rows, objects, review items and new state."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from catlas_assets.domain.normalize import Block, normalize
from catlas_assets.domain.observe import Observed, Policy, archive_key, observe
from catlas_assets.domain.pipeline_data import Fetched, SensorState
from catlas_assets.domain.scheduling import Limits
from catlas_assets.domain.taxonomy import FAILURE_POLICY
from catlas_assets.domain.vocabulary import (
    ChangeKind,
    ChangeStatus,
    FailureClass,
    Outcome,
    ReviewKind,
    SensorStatus,
)

NOW = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
URL = "https://www.acme-robotics.com/docs/guide"
BASE = 6 * 3600
HTML = {"content-type": "text/html; charset=utf-8"}
POLICY = Policy(
    limits=Limits(
        min_interval_s=900,
        max_interval_s=7 * 86400,
        burst_interval_s=1800,
        burst_decay=2.0,
        stability_growth=1.25,
    ),
    minor_threshold=0.02,
    meaningful_threshold=0.10,
    major_threshold=0.40,
    critical_threshold=0.80,
    keep_noise_snapshots=False,
    stale_after_failures=6,
    retire_after_failures=30,
)
SECTIONS = [f"Guide section {i} covers topic {i % 7}" for i in range(40)]


def page(items: list[str]) -> bytes:
    lis = "".join(f"<li>{item}</li>" for item in items)
    return f"<html><body><nav>Menu</nav><h1>Guide</h1><ul>{lis}</ul></body></html>".encode()


def new_sensor(**overrides: Any) -> SensorState:
    values: dict[str, Any] = {
        "id": 7,
        "company_id": 3,
        "surface": "docs",  # an untyped surface: its changes are weighed by text alone
        "url": URL,
        "connector": "generic_html",
        "status": SensorStatus.ACTIVE,
        "base_interval_s": BASE,
        "current_interval_s": BASE,
        "quality_score": 50.0,
    }
    values.update(overrides)
    return SensorState(**values)


def fetch(body: bytes = b"", *, status: int | None = 200, **overrides: Any) -> Fetched:
    values: dict[str, Any] = {
        "url": URL,
        "final_url": URL,
        "status": status,
        "headers": dict(HTML),
        "body": body,
        "elapsed_ms": 12,
        "requests": 1,
    }
    values.update(overrides)
    return Fetched(**values)


def failure(failure_class: FailureClass, status: int | None = None) -> Fetched:
    return fetch(status=status, failure_class=failure_class, failure_detail="went wrong")


def run(
    sensor: SensorState,
    fetched: Fetched,
    previous_blocks: list[Block] | None = None,
    *,
    policy: Policy = POLICY,
) -> Observed:
    return observe(
        sensor,
        fetched,
        previous_blocks,
        now=NOW,
        run_id="run_1",
        observation_id="obs_1",
        policy=policy,
        rng=random.Random(5),
    )


def applied(sensor: SensorState, result: Observed) -> SensorState:
    """The sensor as the store would hold it after committing ``result``."""
    names = {f.name for f in dataclasses.fields(SensorState)}
    update = {k: v for k, v in result.sensor_update.items() if k in names}
    if "status" in update:
        update["status"] = SensorStatus(update["status"])
    return dataclasses.replace(sensor, **update)


def baseline(
    items: list[str] = SECTIONS, **fetch_overrides: Any
) -> tuple[SensorState, list[Block]]:
    """A sensor after its first snapshot of ``page(items)``, and that snapshot's blocks."""
    sensor = new_sensor()
    body = page(items)
    first = run(sensor, fetch(body, **fetch_overrides))
    assert first.outcome is Outcome.OK
    return applied(sensor, first), list(normalize(body, HTML["content-type"]).blocks)


def only(result: Observed, table: str) -> dict[str, Any]:
    rows = result.rows.get(table, [])
    assert len(rows) == 1, f"{table}: {rows}"
    return rows[0]


# -- not modified / unchanged -------------------------------------------------------------


def test_304_is_not_modified_and_grows_the_interval() -> None:
    sensor = new_sensor(etag='"v1"', last_modified="Mon, 05 Jan 2026 07:00:00 GMT")
    sensor = dataclasses.replace(sensor, consecutive_unchanged=2)
    result = run(sensor, fetch(status=304, not_modified=True))
    assert result.outcome is Outcome.NOT_MODIFIED
    assert set(result.rows) == {"observations"}
    row = only(result, "observations")
    assert (row["outcome"], row["not_modified"], row["changed"]) == ("not_modified", True, False)
    assert (row["etag"], row["fetched_at"]) == ('"v1"', NOW)
    update = result.sensor_update
    assert update["current_interval_s"] == 27000  # 21600 x 1.25
    assert update["consecutive_unchanged"] == 3
    assert "etag" not in update and "last_modified" not in update  # kept as they were
    assert (update["claimed_by"], update["claimed_at"]) == (None, None)
    assert result.objects == {}


def test_same_hashes_are_unchanged_with_validators_refreshed() -> None:
    sensor, blocks = baseline(headers={**HTML, "etag": '"v1"', "last-modified": "yesterday"})
    assert sensor.etag == '"v1"'
    again = fetch(page(SECTIONS), headers={**HTML, "etag": '"v2"'})  # server dropped Last-Modified
    result = run(sensor, again, blocks)
    assert result.outcome is Outcome.UNCHANGED
    assert set(result.rows) == {"observations"}
    row = only(result, "observations")
    assert (row["changed"], row["noise"], row["etag"]) == (False, False, '"v2"')
    update = result.sensor_update
    assert (update["etag"], update["last_modified"]) == ('"v2"', None)
    assert update["current_interval_s"] == 27000
    assert update["consecutive_unchanged"] == 1
    assert "snapshot_version" not in update
    assert result.objects == {}


# -- first snapshot and changes -----------------------------------------------------------


def test_first_200_is_ok_with_snapshot_v1_and_no_change_row() -> None:
    body = page(SECTIONS)
    result = run(new_sensor(), fetch(body))
    assert result.outcome is Outcome.OK
    assert set(result.rows) == {"observations", "snapshots"}
    snapshot = only(result, "snapshots")
    assert (snapshot["version"], snapshot["previous_snapshot_id"]) == (1, None)
    assert snapshot["observation_id"] == "obs_1"
    observation = only(result, "observations")
    assert (observation["outcome"], observation["changed"]) == ("ok", False)
    normalized = normalize(body, HTML["content-type"])
    assert observation["normalized_hash"] == snapshot["normalized_hash"]
    assert normalized.normalized_hash == snapshot["normalized_hash"]
    assert {
        archive_key(body),
        archive_key(normalized.text.encode()),
        archive_key(normalized.blocks_json()),
    } <= set(result.objects)
    assert all(key == archive_key(data) for key, data in result.objects.items())
    assert result.objects[snapshot["object_key"]] == body
    assert result.objects[snapshot["text_key"]] == normalized.text.encode()
    update = result.sensor_update
    assert (update["snapshot_version"], update["last_snapshot_id"]) == (1, snapshot["snapshot_id"])
    assert update["current_interval_s"] == BASE  # a baseline holds the interval
    assert "last_change_at" not in update
    assert result.inbox == [] and result.review == []


def test_meaningful_change_writes_snapshot_change_and_inbox_and_bursts() -> None:
    sensor, blocks = baseline()
    changed = SECTIONS[:30] + [f"New chapter {i}" for i in range(10)]
    result = run(sensor, fetch(page(changed)), blocks)
    assert result.outcome is Outcome.CHANGED
    assert result.change_kind in (ChangeKind.MEANINGFUL, ChangeKind.MAJOR, ChangeKind.CRITICAL)
    snapshot = only(result, "snapshots")
    assert snapshot["version"] == 2
    assert snapshot["previous_snapshot_id"] == sensor.last_snapshot_id is not None
    change = only(result, "changes")
    assert (change["snapshot_id"], change["previous_snapshot_id"]) == (
        snapshot["snapshot_id"],
        sensor.last_snapshot_id,
    )
    assert change["status"] == ChangeStatus.PENDING
    assert change["kind"] == result.change_kind
    assert len(change["structured_delta"]["blocks_added"]) == 10
    assert len(change["structured_delta"]["blocks_removed"]) == 10
    assert only(result, "observations")["changed"] is True
    [entry] = result.inbox
    assert (entry.change_id, entry.sensor_id, entry.kind) == (
        change["change_id"],
        sensor.id,
        change["kind"],
    )
    update = result.sensor_update
    assert update["current_interval_s"] == 1800
    assert update["last_change_at"] == NOW
    assert (update["snapshot_version"], update["consecutive_unchanged"]) == (2, 0)


def test_minor_change_is_archived_without_inbox_entry() -> None:
    sensor, blocks = baseline()
    sensor = dataclasses.replace(sensor, current_interval_s=40000)
    changed = [*SECTIONS[:-2], "Guide section 38 (revised)", "Guide section 39 (revised)"]
    result = run(sensor, fetch(page(changed)), blocks)
    assert result.outcome is Outcome.CHANGED
    assert result.change_kind is ChangeKind.MINOR
    assert only(result, "changes")["status"] == ChangeStatus.ARCHIVED
    assert only(result, "snapshots")["version"] == 2
    assert result.inbox == []
    assert result.sensor_update["current_interval_s"] == BASE  # min(current, base)


def test_reordered_blocks_are_pure_noise_without_snapshot_but_with_new_hashes() -> None:
    sensor, blocks = baseline()
    result = run(sensor, fetch(page(list(reversed(SECTIONS)))), blocks)
    assert result.outcome is Outcome.UNCHANGED
    assert result.noise is True
    assert result.change_kind is ChangeKind.NOISE
    assert set(result.rows) == {"observations"}
    row = only(result, "observations")
    assert (row["outcome"], row["noise"], row["changed"]) == ("unchanged", True, False)
    update = result.sensor_update
    assert update["normalized_hash"] == row["normalized_hash"] != sensor.normalized_hash
    assert "snapshot_version" not in update and "last_snapshot_id" not in update
    assert result.inbox == []
    rerun = run(applied(sensor, result), fetch(page(list(reversed(SECTIONS)))), blocks)
    assert (rerun.outcome, rerun.noise) == (Outcome.UNCHANGED, False)  # not re-detected


def test_noise_is_snapshotted_when_the_policy_keeps_noise() -> None:
    sensor, blocks = baseline()
    keep = dataclasses.replace(POLICY, keep_noise_snapshots=True)
    result = run(sensor, fetch(page(list(reversed(SECTIONS)))), blocks, policy=keep)
    assert result.outcome is Outcome.CHANGED
    assert only(result, "snapshots")["version"] == 2
    assert only(result, "changes")["kind"] == ChangeKind.NOISE
    assert result.inbox == []


# -- failures -----------------------------------------------------------------------------


def test_failure_writes_a_failures_row_and_backs_off_by_policy() -> None:
    sensor = new_sensor(current_interval_s=3600)
    result = run(sensor, failure(FailureClass.HTTP_5XX, 503))
    assert result.outcome is Outcome.FAILED
    observation = only(result, "observations")
    assert (observation["failure_class"], observation["http_status"]) == ("HTTP_5XX", 503)
    row = only(result, "failures")
    assert (row["failure_class"], row["http_status"], row["at"]) == ("HTTP_5XX", 503, NOW)
    assert row["observation_id"] == observation["observation_id"]
    update = result.sensor_update
    assert update["current_interval_s"] == 5400
    assert (update["consecutive_failures"], update["last_failure_class"]) == (1, "HTTP_5XX")
    assert update["status"] is SensorStatus.ACTIVE
    assert update["quality_score"] == 42.5
    assert "snapshots" not in result.rows and result.review == []


@pytest.mark.parametrize("failure_class", [c for c in FailureClass if c is not FailureClass.ROBOTS])
def test_sensor_turns_failing_at_its_class_threshold(failure_class: FailureClass) -> None:
    threshold = FAILURE_POLICY[failure_class].failures_before_failing
    before = run(new_sensor(consecutive_failures=threshold - 2), failure(failure_class))
    at = run(new_sensor(consecutive_failures=threshold - 1), failure(failure_class))
    if threshold > 1:
        assert before.sensor_update["status"] is SensorStatus.ACTIVE
    assert at.sensor_update["status"] is SensorStatus.FAILING


def test_repeated_failures_go_failing_then_stale_at_6_then_retired_at_30() -> None:
    sensor = new_sensor()
    statuses: list[SensorStatus] = []
    reviews: list[tuple[int, str]] = []
    for number in range(1, 31):
        result = run(sensor, failure(FailureClass.HTTP_4XX, 403))
        sensor = applied(sensor, result)
        statuses.append(sensor.status)
        reviews.extend((number, item.kind) for item in result.review)
        if number < 30:
            assert "retired_at" not in result.sensor_update
    assert statuses[:2] == [SensorStatus.ACTIVE] * 2
    assert statuses[2:5] == [SensorStatus.FAILING] * 3
    assert statuses[5:29] == [SensorStatus.STALE] * 24
    assert statuses[29] is SensorStatus.RETIRED
    assert result.sensor_update["retired_at"] == NOW
    assert sensor.current_interval_s == POLICY.limits.max_interval_s
    assert reviews == [(6, ReviewKind.SENSOR_STALE), (30, ReviewKind.SENSOR_RETIRED)]


def test_robots_blocks_the_sensor_at_once_with_a_blocked_source_review() -> None:
    result = run(new_sensor(), failure(FailureClass.ROBOTS))
    assert result.sensor_update["status"] is SensorStatus.BLOCKED
    [item] = result.review
    assert (item.kind, item.sensor_id, item.company_id) == (ReviewKind.BLOCKED_SOURCE, 7, 3)
    assert result.sensor_update["current_interval_s"] == BASE * 8


def test_repeated_bot_challenge_opens_a_blocked_source_review() -> None:
    first = run(new_sensor(), failure(FailureClass.BOT_CHALLENGE, 403))
    assert first.review == []
    second = run(applied(new_sensor(), first), failure(FailureClass.BOT_CHALLENGE, 403))
    assert [item.kind for item in second.review] == [ReviewKind.BLOCKED_SOURCE]


def test_a_success_after_failures_resets_counters_and_returns_to_active() -> None:
    sensor, blocks = baseline()
    for _ in range(7):
        sensor = applied(sensor, run(sensor, failure(FailureClass.TIMEOUT)))
    assert (sensor.status, sensor.consecutive_failures) == (SensorStatus.STALE, 7)
    result = run(sensor, fetch(page(SECTIONS)), blocks)
    assert result.outcome is Outcome.UNCHANGED
    update = result.sensor_update
    assert update["status"] is SensorStatus.ACTIVE
    assert (update["consecutive_failures"], update["last_failure_class"]) == (0, None)
    assert update["last_success_at"] == NOW
    assert update["quality_score"] > sensor.quality_score


# -- redirects ----------------------------------------------------------------------------


def test_final_url_on_another_registrable_domain_is_redirected_for_migration() -> None:
    target = "https://boards.greenhouse.io/acmerobotics"
    sensor = new_sensor(config={"note": "kept"})
    result = run(sensor, fetch(page(SECTIONS), final_url=target))
    assert result.outcome is Outcome.REDIRECTED
    observation = only(result, "observations")
    assert (observation["failure_class"], observation["final_url"]) == ("REDIRECT", target)
    update = result.sensor_update
    assert update["status"] is SensorStatus.REDIRECTED
    assert update["config"] == {"note": "kept", "redirect_url": target}
    [item] = result.review
    assert item.kind is ReviewKind.SENSOR_MIGRATION
    assert item.detail["to"] == target
    assert "snapshots" not in result.rows
    again = run(applied(sensor, result), fetch(page(SECTIONS), final_url=target))
    assert again.review == []  # already waiting for migration


def test_a_redirect_within_the_registrable_domain_is_followed_as_content() -> None:
    result = run(
        new_sensor(), fetch(page(SECTIONS), final_url="https://careers.acme-robotics.com/jobs")
    )
    assert result.outcome is Outcome.OK

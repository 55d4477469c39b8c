"""One sensor run's decision, pure: from a fetch and the sensor's state to rows and updates.

`observe` picks the spec's outcome (not_modified, unchanged, ok, changed, failed,
redirected, skipped), names the objects to archive by their content hash, and computes the
sensor's new state: counters, validators, hashes, status and next run. The rows it decides
on are laid out by `lake_rows`. The service around it does the I/O; nothing here touches
the network, a database or the wall clock.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from catlas_assets.domain import lake_rows, scheduling
from catlas_assets.domain.connectors import registry as connectors
from catlas_assets.domain.connectors.base import unbundle
from catlas_assets.domain.content_address import archive_key, key_for_digest
from catlas_assets.domain.extract.extraction import (
    DATA_ERRORS,
    Extraction,
    ParseError,
    SchemaError,
)
from catlas_assets.domain.fingerprint import simhash64
from catlas_assets.domain.lake_rows import ObjectKeys, validators
from catlas_assets.domain.normalize import Block, Normalized, normalize, sha256_hex
from catlas_assets.domain.pipeline_data import Fetched, InboxEntry, ReviewItem, SensorState
from catlas_assets.domain.rate_estimate import RateEstimate, sqrt_interval
from catlas_assets.domain.reconcile import reconcile
from catlas_assets.domain.repair import follow_move, permanent_move
from catlas_assets.domain.significance import Comparison, History, compare, remember
from catlas_assets.domain.structured_delta import StructuredDelta, empty_delta, has_typed_change
from catlas_assets.domain.structured_delta import summary as delta_summary
from catlas_assets.domain.taxonomy import FAILURE_POLICY, change_kind, tier_for_interval
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import (
    MEANINGFUL_OR_ABOVE,
    SUCCESSES,
    ChangeKind,
    ChangeStatus,
    FailureClass,
    Outcome,
    ReviewKind,
    SensorStatus,
)
from catlas_assets.errors import CatlasError

MAX_DELTA_ITEMS = 20


@dataclass(frozen=True)
class Policy:
    """The settings one sensor run reads."""

    limits: scheduling.Limits
    minor_threshold: float
    meaningful_threshold: float
    major_threshold: float
    critical_threshold: float
    keep_noise_snapshots: bool
    stale_after_failures: int
    retire_after_failures: int
    extracted_max_items: int = 300
    extracted_max_bytes: int = 900_000
    scheduling_policy: str = "spec"  # or "rate_estimate" (CATLAS_SCHEDULING_POLICY)


@dataclass
class Observed:
    outcome: Outcome
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    objects: dict[str, bytes] = field(default_factory=dict)  # archive key -> bytes
    sensor_update: dict[str, Any] = field(default_factory=dict)
    inbox: list[InboxEntry] = field(default_factory=list)
    review: list[ReviewItem] = field(default_factory=list)
    change_kind: ChangeKind | None = None
    summary: str = ""
    noise: bool = False
    failure_class: FailureClass | None = None  # of a failed run

    def add_row(self, table: str, row: dict[str, Any]) -> None:
        self.rows.setdefault(table, []).append(row)


def observe(
    sensor: SensorState,
    fetched: Fetched,
    previous_blocks: list[Block] | None,
    *,
    previous_extraction: Extraction | None = None,
    now: datetime,
    run_id: str,
    observation_id: str,
    policy: Policy,
    rng: random.Random,
) -> Observed:
    result = _observe(
        sensor,
        fetched,
        previous_blocks,
        previous_extraction=previous_extraction,
        now=now,
        run_id=run_id,
        observation_id=observation_id,
        policy=policy,
        rng=rng,
    )
    if result.outcome in SUCCESSES:
        _follow_permanent_move(sensor, fetched, result)
    return result


def _follow_permanent_move(sensor: SensorState, fetched: Fetched, result: Observed) -> None:
    """A 301/308 to the same registrable domain seen on two consecutive runs moves the
    sensor's URL (the old one kept in `config.previous_urls`): no redirect hop paid forever,
    and no change row, since the content is what it was."""
    target = permanent_move(sensor.url, fetched.redirect_status, fetched.final_url)
    config = result.sensor_update.get("config", sensor.config)
    new_config, moved = follow_move(config, sensor.url, target)
    if new_config != config:
        result.sensor_update["config"] = new_config
    if moved and target is not None:
        result.sensor_update["url"] = target


def _observe(
    sensor: SensorState,
    fetched: Fetched,
    previous_blocks: list[Block] | None,
    *,
    previous_extraction: Extraction | None = None,
    now: datetime,
    run_id: str,
    observation_id: str,
    policy: Policy,
    rng: random.Random,
) -> Observed:
    if fetched.skipped_reason:
        return _skipped(sensor, fetched, now)
    base_row = lake_rows.observation_row(
        sensor, fetched, observation_id=observation_id, run_id=run_id, now=now
    )
    if fetched.failure_class is None and _left_domain(sensor, fetched):
        return _redirected(sensor, fetched, base_row, now=now, policy=policy, rng=rng)
    if fetched.failure_class is not None:
        return _failed(sensor, fetched, base_row, now=now, policy=policy, rng=rng)
    if fetched.not_modified:
        result = Observed(Outcome.NOT_MODIFIED)
        result.add_row(
            "observations",
            {
                **base_row,
                "outcome": Outcome.NOT_MODIFIED,
                "not_modified": True,
                "etag": sensor.etag,
                "last_modified": sensor.last_modified,
            },
        )
        result.sensor_update = _unchanged_update(sensor, fetched, now, policy, rng)
        return result
    digest = fetched.body_sha256
    try:
        raw = raw_hash(sensor, fetched, digest)
        if raw == sensor.raw_hash and sensor.normalized_hash is not None:
            return _same_bytes(sensor, fetched, base_row, digest, now=now, policy=policy, rng=rng)
        normalized, extraction = extract(sensor, fetched, now)
    except ParseError as exc:
        failed = replace(fetched, failure_class=FailureClass.PARSING, failure_detail=str(exc))
        return _failed(sensor, failed, base_row, now=now, policy=policy, rng=rng)
    except (SchemaError, CatlasError) as exc:
        failed = replace(fetched, failure_class=FailureClass.SCHEMA, failure_detail=str(exc))
        return _failed(sensor, failed, base_row, now=now, policy=policy, rng=rng)
    content = _Content.of(fetched, normalized, extraction, base_row, digest, raw)
    return _content(
        sensor, content, previous_blocks, previous_extraction, now=now, policy=policy, rng=rng
    )


def needs_parse(sensor: SensorState, fetched: Fetched) -> bool:
    """Whether `observe` will normalize and extract this answer (the costly part)."""
    if fetched.skipped_reason or fetched.failure_class is not None or fetched.not_modified:
        return False
    if _left_domain(sensor, fetched):
        return False
    try:
        raw = raw_hash(sensor, fetched, fetched.body_sha256)
    except CatlasError:
        return False  # an unknown connector fails without a parse
    # As `_observe`: the same bytes skip the parse only when the sensor keeps their hashes.
    return raw != sensor.raw_hash or sensor.normalized_hash is None


def raw_hash(sensor: SensorState, fetched: Fetched, digest: str) -> str:
    """What decides a 200's parse: its bytes (their SHA-256), content type and connector.

    The same value as the last 200's means the same normalized text and extraction, so
    the answer is unchanged without being parsed (an unchanged page costs a fetch and a
    hash); a new connector version parses again.
    """
    connector = connectors.get(sensor.connector)
    key = f"{connector.name}/{connector.version}\n{fetched.content_type}\n{digest}"
    return sha256_hex(key.encode())


def _same_bytes(
    sensor: SensorState,
    fetched: Fetched,
    base_row: dict[str, Any],
    digest: str,
    *,
    now: datetime,
    policy: Policy,
    rng: random.Random,
) -> Observed:
    """The bytes of the last 200 again: unchanged, with the hashes the sensor keeps."""
    hashes = {
        "normalized_hash": sensor.normalized_hash,
        "structured_hash": sensor.structured_hash,
        "simhash": sensor.simhash,
    }
    row = lake_rows.content_observation(
        base_row, fetched, content_hash=digest, hashes=hashes, raw_key=key_for_digest(digest)
    )
    result = Observed(Outcome.UNCHANGED)
    result.add_row("observations", {**row, "outcome": Outcome.UNCHANGED})
    result.sensor_update = _unchanged_update(sensor, fetched, now, policy, rng)
    return result


def _left_domain(sensor: SensorState, fetched: Fetched) -> bool:
    # Both domains were computed once where they were known: the claim and the fetcher.
    final = fetched.final_domain or registrable_domain(fetched.final_url)
    return final != (sensor.domain or registrable_domain(sensor.url))


def _schedule(
    sensor: SensorState,
    event: scheduling.Event,
    now: datetime,
    policy: Policy,
    rng: random.Random,
    failure_class: FailureClass | None = None,
) -> dict[str, Any]:
    learned: dict[str, Any] = {}
    if policy.scheduling_policy == "rate_estimate" and event is not scheduling.Event.FAILURE:
        interval, learned = rate_interval(sensor, event, now, policy.limits)
    else:
        interval = scheduling.next_interval(
            sensor.current_interval_s, sensor.base_interval_s, event, policy.limits, failure_class
        )
    return {
        **learned,
        "current_interval_s": interval,
        "tier": tier_for_interval(interval),
        "next_run_at": scheduling.next_run_at(now, interval, rng),
        "last_fetched_at": now,
        "claimed_at": None,
        "claimed_by": None,
        "updated_at": now,
    }


def rate_interval(
    sensor: SensorState, event: scheduling.Event, now: datetime, limits: scheduling.Limits
) -> tuple[int, dict[str, float]]:
    """The rate_estimate policy: learn the sensor's change rate from this fetch, fetch ∝ √rate.

    A detected change (minor or meaningful) counts as "changed since the last fetch";
    noise and unchanged answers do not. The scale is the sensor's own base interval: a
    page that changes once per base interval is fetched every base interval, one that
    changes four times as often twice as often (the √rate allocation, inside the clamp).
    """
    base = max(1, sensor.base_interval_s)
    if sensor.rate_fetches:
        estimate = RateEstimate(
            sensor.rate_fetches, sensor.rate_changes or 0.0, sensor.rate_observed_s or 0.0
        )
    else:
        estimate = RateEstimate.prior(base)
    elapsed = (now - sensor.last_fetched_at).total_seconds() if sensor.last_fetched_at else 0
    if elapsed > 0 and event is not scheduling.Event.HOLD:
        changed = event in (scheduling.Event.MINOR, scheduling.Event.MEANINGFUL)
        estimate = estimate.observe(elapsed, changed)
    interval = sqrt_interval(
        estimate.rate, 1 / math.sqrt(base), limits.min_interval_s, limits.max_interval_s
    )
    learned = {
        "rate_fetches": estimate.fetches,
        "rate_changes": estimate.changes,
        "rate_observed_s": estimate.observed_s,
    }
    return limits.clamp(interval), learned


def _success_state(sensor: SensorState, fetched: Fetched, now: datetime) -> dict[str, Any]:
    update: dict[str, Any] = {
        "status": SensorStatus.ACTIVE,
        "consecutive_failures": 0,
        "last_failure_class": None,
        "last_failure_detail": None,
        "last_success_at": now,
        "quality_score": scheduling.quality_score(sensor.quality_score, 1.0),
    }
    if not fetched.conditional:
        update["last_full_fetch_at"] = now
    return update


def _unchanged_update(
    sensor: SensorState, fetched: Fetched, now: datetime, policy: Policy, rng: random.Random
) -> dict[str, Any]:
    update = _schedule(sensor, scheduling.Event.UNCHANGED, now, policy, rng)
    update.update(_success_state(sensor, fetched, now))
    update["consecutive_unchanged"] = sensor.consecutive_unchanged + 1
    if not fetched.not_modified:
        update.update(validators(fetched))
    return update


def extract(sensor: SensorState, fetched: Fetched, now: datetime) -> tuple[Normalized, Extraction]:
    """Normalize and extract a response with the sensor's connector (pure, deterministic).

    Raises SchemaError when the answer does not have the connector's vendor shape.
    """
    connector = connectors.get(sensor.connector)
    try:
        pages = unbundle(fetched.body, fetched.final_url, fetched.content_type)
        if len(pages) == 1:
            normalized = normalize(fetched.body, fetched.content_type)
        else:
            # Several pages of one JSON answer: normalize them as one list, page by page.
            merged = "[" + ",".join(p.body.decode("utf-8", errors="replace") for p in pages) + "]"
            normalized = normalize(merged.encode(), "application/json")
    except DATA_ERRORS as exc:
        raise ParseError(f"unreadable body: {_error_text(exc)}") from None
    try:
        extraction = connector.parse(pages, sensor.surface, now)
        extraction.connector = connector.name
        return normalized, extraction.canonical()
    except DATA_ERRORS as exc:
        raise SchemaError(f"{connector.name}: unexpected shape: {_error_text(exc)}") from None


def _error_text(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


@dataclass(frozen=True)
class _Content:
    """A 200 that was extracted: what it is made of and its observation row."""

    fetched: Fetched
    normalized: Normalized
    extraction: Extraction
    keys: ObjectKeys
    hashes: dict[str, Any]  # normalized, structured and simhash, as the sensor keeps them
    row: dict[str, Any]  # its observation (without outcome)
    raw_hash: str  # see `raw_hash`
    # The archived forms of the text and blocks, serialised once (keyed, then stored).
    text_bytes: bytes
    blocks_bytes: bytes

    @classmethod
    def of(
        cls,
        fetched: Fetched,
        normalized: Normalized,
        extraction: Extraction,
        base_row: dict[str, Any],
        digest: str,
        raw: str,
    ) -> _Content:
        text_bytes = normalized.text.encode()
        blocks_bytes = normalized.blocks_json()
        keys = ObjectKeys(
            raw=key_for_digest(digest),
            text=archive_key(text_bytes),
            blocks=archive_key(blocks_bytes),
        )
        hashes = {
            "normalized_hash": normalized.normalized_hash,
            "structured_hash": extraction.content_hash(),
            "simhash": simhash64(normalized.text),
        }
        row = lake_rows.content_observation(
            base_row,
            fetched,
            content_hash=digest,
            hashes=hashes,
            raw_key=keys.raw,
        )
        return cls(
            fetched, normalized, extraction, keys, hashes, row, raw, text_bytes, blocks_bytes
        )


@dataclass
class _Assessment:
    """What changed since the last snapshot, and how much it weighs."""

    first: bool
    current: Extraction  # the entity set to remember (held-back entities included)
    events: list[dict[str, Any]]
    delta: StructuredDelta
    history: History
    comparison: Comparison | None = None
    kind: ChangeKind | None = None


def _assess(
    sensor: SensorState,
    content: _Content,
    previous_blocks: list[Block] | None,
    previous_extraction: Extraction | None,
    policy: Policy,
) -> _Assessment:
    extraction = content.extraction
    first = sensor.snapshot_version == 0 or previous_blocks is None
    reconciliation = reconcile(None if first else previous_extraction, extraction)
    delta = empty_delta()
    delta["added"] = reconciliation.added
    delta["removed"] = reconciliation.removed
    delta["updated"] = reconciliation.updated
    delta["status"] = reconciliation.status
    delta["notes"] = list(reconciliation.notes)
    history = History(
        recent_blocks=frozenset(sensor.config.get("recent_blocks") or []),
        was_self_linked=(
            previous_extraction.page.get("self_linked") if previous_extraction else None
        ),
        is_self_linked=extraction.page.get("self_linked"),
    )
    assessment = _Assessment(
        first, reconciliation.current or extraction, reconciliation.events, delta, history
    )
    if first:
        return assessment
    comparison = compare(
        previous_blocks or [],
        content.normalized.blocks,
        sensor.surface,
        (sensor.normalized_hash or "", content.normalized.normalized_hash),
        delta,
        history,
    )
    assessment.comparison = comparison
    assessment.kind = change_kind(
        comparison.significance,
        minor_threshold=policy.minor_threshold,
        meaningful_threshold=policy.meaningful_threshold,
        major_threshold=policy.major_threshold,
        critical_threshold=policy.critical_threshold,
    )
    delta["blocks_added"] = [b.text for b in comparison.added[:MAX_DELTA_ITEMS]]
    delta["blocks_removed"] = [b.text for b in comparison.removed[:MAX_DELTA_ITEMS]]
    delta["reasons"] = list(comparison.reasons)
    return assessment


def _content(
    sensor: SensorState,
    content: _Content,
    previous_blocks: list[Block] | None,
    previous_extraction: Extraction | None,
    *,
    now: datetime,
    policy: Policy,
    rng: random.Random,
) -> Observed:
    fetched = content.fetched
    if (
        sensor.normalized_hash == content.hashes["normalized_hash"]
        and sensor.structured_hash == content.hashes["structured_hash"]
    ):
        result = Observed(Outcome.UNCHANGED)
        result.add_row("observations", {**content.row, "outcome": Outcome.UNCHANGED})
        # The row names these bytes: they may differ from the stored ones in what
        # normalization drops (a script nonce), so they are archived (content-addressed:
        # the same bytes again cost nothing).
        result.objects[content.keys.raw] = fetched.body
        result.sensor_update = _unchanged_update(sensor, fetched, now, policy, rng)
        result.sensor_update["raw_hash"] = content.raw_hash
        return result
    assessment = _assess(sensor, content, previous_blocks, previous_extraction, policy)
    memory: dict[str, Any] = {}
    if assessment.comparison is not None:
        recent = remember(assessment.history, assessment.comparison)
        memory = {"config": {**sensor.config, "recent_blocks": recent}}
    if (
        assessment.kind is ChangeKind.NOISE
        and not has_typed_change(assessment.delta)
        and not assessment.delta["notes"]
        and not policy.keep_noise_snapshots
    ):
        # Pure noise: no snapshot, no change, but remember the hashes so it is not re-detected.
        result = Observed(Outcome.UNCHANGED, noise=True, change_kind=assessment.kind)
        result.add_row("observations", {**content.row, "outcome": Outcome.UNCHANGED, "noise": True})
        result.objects[content.keys.raw] = fetched.body
        update = _unchanged_update(sensor, fetched, now, policy, rng)
        update.update(content.hashes)
        update.update(memory)
        update["raw_hash"] = content.raw_hash
        result.sensor_update = update
        return result
    extraction_bytes = assessment.current.to_json()
    keys = replace(content.keys, extraction=archive_key(extraction_bytes))
    result = _snapshot(sensor, content, assessment, keys, extraction_bytes, now=now, policy=policy)
    update = _schedule(sensor, _snapshot_event(assessment), now, policy, rng)
    update.update(_success_state(sensor, fetched, now))
    update["quality_score"] = scheduling.quality_score(
        sensor.quality_score, content.extraction.confidence
    )
    update.update(validators(fetched))
    update.update(content.hashes)
    update.update(memory)
    update["raw_hash"] = content.raw_hash
    update.update(
        {
            "snapshot_version": sensor.snapshot_version + 1,
            "last_snapshot_id": lake_rows.snapshot_id_for(content.row["observation_id"]),
            "last_blocks_key": keys.blocks,
            "last_text_key": keys.text,
            "last_extraction_key": keys.extraction,
            "consecutive_unchanged": 0,
        }
    )
    if assessment.comparison is not None and assessment.kind is not None:
        update["last_change_at"] = now
    result.sensor_update = update
    return result


def _snapshot_event(assessment: _Assessment) -> scheduling.Event:
    if assessment.first:
        return scheduling.Event.HOLD
    if assessment.kind in MEANINGFUL_OR_ABOVE:
        return scheduling.Event.MEANINGFUL
    if assessment.kind is ChangeKind.MINOR:
        return scheduling.Event.MINOR
    return scheduling.Event.UNCHANGED


def _snapshot(
    sensor: SensorState,
    content: _Content,
    assessment: _Assessment,
    keys: ObjectKeys,
    extraction_bytes: bytes,
    *,
    now: datetime,
    policy: Policy,
) -> Observed:
    """A new snapshot (`ok` for the first, else `changed`): its objects, rows and change.

    The sensor's new state is the caller's (`_content`).
    """
    first = assessment.first
    result = Observed(Outcome.OK if first else Outcome.CHANGED, change_kind=assessment.kind)
    result.objects.update(
        {
            keys.raw: content.fetched.body,
            keys.text: content.text_bytes,
            keys.blocks: content.blocks_bytes,
            keys.extraction: extraction_bytes,
        }
    )
    row = content.row
    snapshot_id = lake_rows.snapshot_id_for(row["observation_id"])
    result.add_row("observations", lake_rows.snapshot_observation(row, first=first, keys=keys))
    result.add_row(
        "snapshots",
        lake_rows.snapshot_row(
            sensor,
            row,
            version=sensor.snapshot_version + 1,
            hashes=content.hashes,
            keys=keys,
            extraction=content.extraction,
            blocks=len(content.normalized.blocks),
            max_items=policy.extracted_max_items,
            max_bytes=policy.extracted_max_bytes,
        ),
    )
    for event_row in lake_rows.entity_event_rows(
        sensor, assessment.events, snapshot_id=snapshot_id, run_id=row["run_id"], now=now
    ):
        result.add_row("entity_events", event_row)
    if assessment.comparison is not None and assessment.kind is not None:
        result.summary = delta_summary(assessment.delta)
        _add_change(result, sensor, assessment, snapshot_id, row["run_id"], now)
    return result


def _add_change(
    result: Observed,
    sensor: SensorState,
    assessment: _Assessment,
    snapshot_id: str,
    run_id: str,
    now: datetime,
) -> None:
    comparison, kind, delta = assessment.comparison, assessment.kind, assessment.delta
    assert comparison is not None and kind is not None
    status = ChangeStatus.PENDING if kind in MEANINGFUL_OR_ABOVE else ChangeStatus.ARCHIVED
    summary = delta_summary(delta)
    row = lake_rows.change_row(
        sensor,
        snapshot_id=snapshot_id,
        run_id=run_id,
        now=now,
        comparison=comparison,
        kind=kind,
        status=status,
        summary=summary,
        delta=delta,
    )
    result.add_row("changes", row)
    if status is ChangeStatus.PENDING:
        result.inbox.append(
            InboxEntry(
                row["change_id"],
                sensor.id,
                sensor.company_id,
                sensor.surface,
                kind,
                comparison.significance,
                summary,
                now,
            )
        )


def _failure_status(
    sensor: SensorState, failure_class: FailureClass, failures: int, policy: Policy
) -> SensorStatus:
    if failure_class is FailureClass.ROBOTS:
        return SensorStatus.BLOCKED
    if failures >= policy.retire_after_failures:
        return SensorStatus.RETIRED
    if failures >= policy.stale_after_failures:
        return SensorStatus.STALE
    if failures >= FAILURE_POLICY[failure_class].failures_before_failing:
        return SensorStatus.FAILING
    return sensor.status if sensor.status is not SensorStatus.PENDING else SensorStatus.ACTIVE


def _failed(
    sensor: SensorState,
    fetched: Fetched,
    base_row: dict[str, Any],
    *,
    now: datetime,
    policy: Policy,
    rng: random.Random,
) -> Observed:
    failure_class = fetched.failure_class
    assert failure_class is not None
    result = Observed(Outcome.FAILED, failure_class=failure_class)
    result.add_row(
        "observations", {**base_row, "outcome": Outcome.FAILED, "failure_class": failure_class}
    )
    result.add_row("failures", lake_rows.failure_row(base_row, fetched, failure_class))
    failures = sensor.consecutive_failures + 1
    status = _failure_status(sensor, failure_class, failures, policy)
    update = _schedule(sensor, scheduling.Event.FAILURE, now, policy, rng, failure_class)
    update.update(
        {
            "status": status,
            "consecutive_failures": failures,
            "last_failure_class": failure_class,
            "last_failure_detail": fetched.failure_detail[:500],
            "quality_score": scheduling.quality_score(sensor.quality_score, None),
        }
    )
    if status is SensorStatus.RETIRED and sensor.status is not SensorStatus.RETIRED:
        update["retired_at"] = now
    result.sensor_update = update
    detail = {"failure_class": failure_class, "failures": failures, "url": sensor.url}
    if status is not sensor.status:
        if status is SensorStatus.BLOCKED:
            result.review.append(
                ReviewItem(ReviewKind.BLOCKED_SOURCE, sensor.id, sensor.company_id, detail)
            )
        elif status is SensorStatus.STALE:
            result.review.append(
                ReviewItem(ReviewKind.SENSOR_STALE, sensor.id, sensor.company_id, detail)
            )
        elif status is SensorStatus.RETIRED:
            result.review.append(
                ReviewItem(ReviewKind.SENSOR_RETIRED, sensor.id, sensor.company_id, detail)
            )
    if (
        failure_class is FailureClass.BOT_CHALLENGE
        and failures >= FAILURE_POLICY[failure_class].failures_before_failing
    ):
        # Spec: repeated challenges go to a person (the store keeps one open item); never bypassed.
        result.review.append(
            ReviewItem(ReviewKind.BLOCKED_SOURCE, sensor.id, sensor.company_id, detail)
        )
    result.summary = f"{failure_class}: {fetched.failure_detail}".strip()
    return result


def _redirected(
    sensor: SensorState,
    fetched: Fetched,
    base_row: dict[str, Any],
    *,
    now: datetime,
    policy: Policy,
    rng: random.Random,
) -> Observed:
    result = Observed(Outcome.REDIRECTED)
    result.add_row(
        "observations",
        {**base_row, "outcome": Outcome.REDIRECTED, "failure_class": FailureClass.REDIRECT},
    )
    update = _schedule(sensor, scheduling.Event.FAILURE, now, policy, rng, FailureClass.REDIRECT)
    update.update(
        {
            "status": SensorStatus.REDIRECTED,
            "config": {**sensor.config, "redirect_url": fetched.final_url},
        }
    )
    result.sensor_update = update
    if sensor.status is not SensorStatus.REDIRECTED:
        result.review.append(
            ReviewItem(
                ReviewKind.SENSOR_MIGRATION,
                sensor.id,
                sensor.company_id,
                {"from": sensor.url, "to": fetched.final_url, "reason": "left the sensor's domain"},
            )
        )
    result.summary = f"redirected to {fetched.final_url}"
    return result


def _skipped(sensor: SensorState, fetched: Fetched, now: datetime) -> Observed:
    """Politeness postponed the fetch: no lake rows, interval and counters untouched."""
    result = Observed(Outcome.SKIPPED)
    result.sensor_update = {
        "next_run_at": fetched.retry_at or now,
        "claimed_at": None,
        "claimed_by": None,
        "updated_at": now,
    }
    result.summary = f"skipped: {fetched.skipped_reason}"
    return result

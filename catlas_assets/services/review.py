"""The review queue: what needs a person (`catlas review list|show|accept|reject`)."""

from __future__ import annotations

from typing import Any

from catlas_assets.domain.candidates import same_url
from catlas_assets.domain.urls import check_url
from catlas_assets.domain.vocabulary import ReviewKind, ReviewStatus, SensorStatus
from catlas_assets.errors import CatlasError
from catlas_assets.services.repair import migrate_sensor
from catlas_assets.services.robots_check import check_robots
from catlas_assets.services.runtime import Runtime
from resources.state import repair_store
from resources.state.blocked_sensors import BlockedSensors


def list_review(
    runtime: Runtime, *, kind: str | None = None, status: str | None = "open"
) -> list[dict[str, Any]]:
    """Review items oldest first; `status=None` lists every status."""
    return runtime.store.list_review(kind=kind, status=status)


# -- acting on an item (`catlas review show|accept|reject`) --------------------------------
def show_review(runtime: Runtime, item_id: int) -> dict[str, Any]:
    """The item, and its sensor's current row when it has one."""
    item = repair_store.review_item(runtime.store, item_id)
    sensor = runtime.store.sensor(item["sensor_id"]) if item["sensor_id"] else None
    return {**item, "sensor": sensor}


def migration_targets(item: dict[str, Any]) -> list[str]:
    """The URLs an accepted migration may move to: passing candidates first, then the rest
    (repair's items), or the off-domain redirect target (the pipeline's items)."""
    detail = item["detail"] or {}
    candidates = detail.get("candidates") or []
    passing = [c["url"] for c in candidates if c.get("passes")]
    others = [c["url"] for c in candidates if not c.get("passes") and c.get("ratio") is not None]
    if passing or others:
        return passing or others
    return [detail["to"]] if detail.get("to") else []


def accept_review(
    runtime: Runtime, item_id: int, *, to: str | None = None, note: str = ""
) -> dict[str, Any]:
    """Accept an item: a migration is performed, a blocked source is unblocked (only once
    robots.txt allows its URL again), any other kind is acknowledged."""
    item = repair_store.review_item(runtime.store, item_id)
    now = runtime.clock.now()
    resolution: dict[str, Any] = {"action": "accepted", "note": note}
    if item["status"] != ReviewStatus.OPEN:
        raise CatlasError(f"review item {item_id} is {item['status']} already")
    if item["kind"] == ReviewKind.SENSOR_MIGRATION:
        url = _chosen(item, to)
        successor = migrate_sensor(
            runtime,
            item["sensor_id"],
            url,
            note=f"accepted in review item {item_id}",
            now=now,
            keep_item=item_id,
        )
        resolution.update(successor_id=successor, url=url)
    elif item["kind"] == ReviewKind.BLOCKED_SOURCE:
        _robots_allows(runtime, item)
    closed = repair_store.close_review(
        runtime.store, item_id, status=ReviewStatus.ACCEPTED, resolution=resolution, now=now
    )
    if item["kind"] == ReviewKind.BLOCKED_SOURCE:
        BlockedSensors(runtime.store).unblock(item["sensor_id"], now)
    return closed


def reject_review(
    runtime: Runtime, item_id: int, *, retire: bool = False, note: str = ""
) -> dict[str, Any]:
    """Reject an item: it is closed and its sensor retired (`retire`) or kept as it is. A
    blocked source kept watching is closed only once robots.txt allows its URL again."""
    item = repair_store.review_item(runtime.store, item_id)
    now = runtime.clock.now()
    if item["status"] != ReviewStatus.OPEN:
        raise CatlasError(f"review item {item_id} is {item['status']} already")
    if item["kind"] == ReviewKind.BLOCKED_SOURCE and not retire:
        _robots_allows(runtime, item)
    if retire and item["sensor_id"]:
        repair_store.update_sensor(
            runtime.store, item["sensor_id"], now=now, status=SensorStatus.RETIRED, retired_at=now
        )
    resolution = {"action": "rejected", "sensor": "retired" if retire else "kept", "note": note}
    return repair_store.close_review(
        runtime.store, item_id, status=ReviewStatus.REJECTED, resolution=resolution, now=now
    )


def _chosen(item: dict[str, Any], to: str | None) -> str:
    targets = migration_targets(item)
    if to:
        if targets and not any(same_url(to, t) for t in targets):
            raise CatlasError(f"{to} is not a candidate of item {item['id']}: {', '.join(targets)}")
        return check_url(to)
    if len(targets) == 1:
        return targets[0]
    if not targets:
        raise CatlasError(f"item {item['id']} names no candidate: choose one with --to URL")
    raise CatlasError(
        f"item {item['id']} has {len(targets)} candidates, choose with --to: " + ", ".join(targets)
    )


def _robots_allows(runtime: Runtime, item: dict[str, Any]) -> None:
    url = (item["detail"] or {}).get("url") or runtime.store.sensor(item["sensor_id"])["url"]
    check = check_robots(runtime, url)
    if not check.allowed:
        raise CatlasError(
            f"robots.txt still refuses {url} ({'; '.join(check.lines())}): the item stays open"
        )


def open_run_failed(runtime: Runtime, *, dagster_run_id: str, job: str, message: str) -> int:
    """A failed Dagster run becomes a review item (one per run): a person reads its logs."""
    detail = {"dagster_run_id": dagster_run_id, "job": job, "error": message[:2000]}
    return repair_store.open_run_review(runtime.store, detail, runtime.clock.now())

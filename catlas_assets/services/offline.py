"""Operator tools on local files: `catlas run-sensor --file` and `catlas diff` (write nothing)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from catlas_assets.domain.extract.extraction import Extraction
from catlas_assets.domain.normalize import Normalized
from catlas_assets.domain.observe import extract
from catlas_assets.domain.pipeline_data import Fetched, SensorState
from catlas_assets.domain.reconcile import reconcile
from catlas_assets.domain.significance import compare
from catlas_assets.domain.structured_delta import empty_delta
from catlas_assets.domain.structured_delta import summary as delta_summary
from catlas_assets.domain.taxonomy import change_kind
from catlas_assets.domain.vocabulary import SensorStatus
from catlas_assets.errors import CatlasError
from catlas_assets.settings import Settings

CONTENT_TYPES = {
    ".json": "application/json",
    ".xml": "application/xml",
    ".rss": "application/rss+xml",
    ".atom": "application/atom+xml",
    ".txt": "text/plain; charset=utf-8",
}


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CatlasError(f"cannot read {path}: {exc.strerror or exc}") from None


def extract_file(
    path: Path, *, surface: str, connector: str, now: datetime, url: str | None = None
) -> tuple[Normalized, Extraction]:
    """Normalize and extract a local file as the pipeline would a fetched page."""
    body = _read(path)
    page_url = url or f"http://local.invalid/{path.name}"
    sensor = SensorState(
        id=0,
        company_id=0,
        surface=surface,
        url=page_url,
        connector=connector,
        status=SensorStatus.ACTIVE,
        base_interval_s=3600,
        current_interval_s=3600,
        quality_score=50.0,
    )
    ctype = CONTENT_TYPES.get(path.suffix.lower(), "text/html; charset=utf-8")
    fetched = Fetched(page_url, page_url, 200, {"content-type": ctype}, body, 0, 0)
    return extract(sensor, fetched, now)


def diff_files(
    old: Path, new: Path, *, surface: str, connector: str, now: datetime, settings: Settings
) -> dict[str, Any]:
    old_norm, old_extraction = extract_file(old, surface=surface, connector=connector, now=now)
    new_norm, new_extraction = extract_file(new, surface=surface, connector=connector, now=now)
    rec = reconcile(old_extraction, new_extraction)
    delta = empty_delta()
    delta.update(
        {
            "added": rec.added,
            "removed": rec.removed,
            "updated": rec.updated,
            "status": rec.status,
            "notes": list(rec.notes),
        }
    )
    comparison = compare(
        old_norm.blocks,
        new_norm.blocks,
        surface,
        (old_norm.normalized_hash, new_norm.normalized_hash),
        delta,
    )
    delta["blocks_added"] = [b.text for b in comparison.added[:20]]
    delta["blocks_removed"] = [b.text for b in comparison.removed[:20]]
    delta["reasons"] = list(comparison.reasons)
    kind = change_kind(
        comparison.significance,
        minor_threshold=settings.minor_threshold,
        meaningful_threshold=settings.meaningful_threshold,
        major_threshold=settings.major_threshold,
        critical_threshold=settings.critical_threshold,
    )
    return {
        "significance": comparison.significance,
        "kind": kind.value,
        "reasons": list(comparison.reasons),
        "summary": delta_summary(delta),
        "structured_delta": delta,
    }

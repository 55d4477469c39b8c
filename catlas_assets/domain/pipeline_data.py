"""Plain data passed between the pipeline's steps (no I/O, no ORM)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, NamedTuple

from catlas_assets.domain.vocabulary import FailureClass, SensorStatus


@dataclass(frozen=True)
class SensorState:
    """What one sensor run reads of a sensor row."""

    id: int
    company_id: int
    surface: str
    url: str
    connector: str
    status: SensorStatus
    base_interval_s: int
    current_interval_s: int
    quality_score: float
    etag: str | None = None
    last_modified: str | None = None
    normalized_hash: str | None = None
    structured_hash: str | None = None
    simhash: int | None = None
    raw_hash: str | None = None  # see observe.raw_hash
    last_fetched_at: datetime | None = None
    rate_fetches: float | None = None  # the rate_estimate policy's sums (None: not yet)
    rate_changes: float | None = None
    rate_observed_s: float | None = None
    snapshot_version: int = 0
    last_snapshot_id: str | None = None
    last_blocks_key: str | None = None
    last_text_key: str | None = None
    last_extraction_key: str | None = None  # the full extraction of the last snapshot
    consecutive_unchanged: int = 0
    consecutive_failures: int = 0
    last_full_fetch_at: datetime | None = None
    last_failure_class: FailureClass | None = None
    config: dict[str, Any] = field(default_factory=dict)
    # The registrable domain of `url`, computed once when the row is read and carried to
    # the run guard, the fetcher and the governor ("" when the reader left it out).
    domain: str = ""


@dataclass(frozen=True)
class Fetched:
    """The HTTP side of one sensor run, as the pipeline needs it."""

    url: str
    final_url: str
    status: int | None
    headers: dict[str, str]
    body: bytes
    elapsed_ms: int
    requests: int
    not_modified: bool = False
    failure_class: FailureClass | None = None
    failure_detail: str = ""
    conditional: bool = True  # False when validators were left out on purpose
    # Set when politeness postponed the fetch (domain budget, blocked_until, robots.txt
    # unavailable): outcome `skipped`, no lake rows, the sensor comes back at `retry_at`.
    skipped_reason: str = ""
    retry_at: datetime | None = None
    final_domain: str = ""  # the registrable domain of `final_url` ("" if not known)
    redirect_status: int | None = None  # the first hop's status when `url` redirected

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @cached_property
    def body_sha256(self) -> str:
        """The body's SHA-256 (hex), hashed once: the parse decision, `observe` and the
        archive key all need it, and a pickled copy (the parser process) carries it along."""
        return hashlib.sha256(self.body).hexdigest()


@dataclass(frozen=True)
class ReviewItem:
    kind: str
    sensor_id: int
    company_id: int
    detail: dict[str, Any]


@dataclass(frozen=True)
class InboxEntry:
    change_id: str
    sensor_id: int
    company_id: int
    surface: str
    kind: str
    significance: float
    summary: str
    detected_at: datetime


class PackedObject(NamedTuple):
    """Where an archive object's bytes lie in a pack file: its zstd frame."""

    key: str  # objects/ab/cd/<sha256>.zst, as rows name it
    pack: str  # the pack file's key
    offset: int
    length: int


@dataclass(frozen=True)
class LedgerCharge:
    """What one sensor run adds to `cost_ledger` for its day, company and connector."""

    day: str  # the UTC day, YYYY-MM-DD
    company_id: int | None
    connector: str
    fetch_units: int  # requests sent: robots.txt, retries and redirect hops included
    bytes_stored: int  # compressed bytes the archive wrote for this run

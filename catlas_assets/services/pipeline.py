"""Run one claimed sensor: fetch, decide (pure), archive objects, commit state and rows."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catlas_assets.domain import scheduling
from catlas_assets.domain.connector_tally import StatsTally
from catlas_assets.domain.connectors import registry
from catlas_assets.domain.extract.extraction import Extraction
from catlas_assets.domain.normalize import Block
from catlas_assets.domain.observe import Observed, needs_parse, observe
from catlas_assets.domain.pipeline_data import Fetched, LedgerCharge, SensorState
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import ChangeKind, FailureClass, Outcome, SensorStatus
from catlas_assets.errors import CatlasError
from catlas_assets.ids import new_id
from catlas_assets.services.commit_groups import GroupCommitter
from catlas_assets.services.connector_fetch import fetch_for_sensor
from catlas_assets.services.runtime import Runtime
from resources.fetcher import Fetcher
from resources.state.group_commit import ConnectorChange, RunCommit, commit_runs


@dataclass(frozen=True)
class SensorRunResult:
    sensor_id: int
    company_id: int
    surface: str
    url: str
    outcome: Outcome
    change_kind: ChangeKind | None
    summary: str
    failure_class: FailureClass | None
    requests: int
    committed: bool  # False when the claim was lost to another worker
    noise: bool = False


# The columns of a sensor row that `sensor_state` reads: all a claim needs to return (the
# other eleven, six of them instants, cost a claim of 2,000 a sixth of its CPU to convert).
SENSOR_STATE_COLUMNS = (
    "id", "company_id", "surface", "url", "connector", "status", "base_interval_s",
    "current_interval_s", "quality_score", "etag", "last_modified", "normalized_hash",
    "structured_hash", "simhash", "raw_hash", "last_fetched_at", "rate_fetches",
    "rate_changes", "rate_observed_s", "snapshot_version", "last_snapshot_id",
    "last_blocks_key", "last_text_key", "last_extraction_key", "consecutive_unchanged",
    "consecutive_failures", "last_full_fetch_at", "last_failure_class", "config",
)  # fmt: skip


def sensor_state(row: dict[str, Any]) -> SensorState:
    """A claimed sensor row as the run reads it (`SENSOR_STATE_COLUMNS`); its registrable
    domain is computed here, once, and carried to the run guard, the fetcher and the
    governor."""
    return SensorState(
        id=row["id"],
        company_id=row["company_id"],
        surface=row["surface"],
        url=row["url"],
        connector=row["connector"],
        status=SensorStatus(row["status"]),
        base_interval_s=row["base_interval_s"],
        current_interval_s=row["current_interval_s"],
        quality_score=row["quality_score"],
        etag=row["etag"],
        last_modified=row["last_modified"],
        normalized_hash=row["normalized_hash"],
        structured_hash=row["structured_hash"],
        simhash=row["simhash"],
        raw_hash=row.get("raw_hash"),
        last_fetched_at=row.get("last_fetched_at"),
        rate_fetches=row.get("rate_fetches"),
        rate_changes=row.get("rate_changes"),
        rate_observed_s=row.get("rate_observed_s"),
        snapshot_version=row["snapshot_version"],
        last_snapshot_id=row["last_snapshot_id"],
        last_blocks_key=row["last_blocks_key"],
        last_text_key=row["last_text_key"],
        last_extraction_key=row.get("last_extraction_key"),
        consecutive_unchanged=row["consecutive_unchanged"],
        consecutive_failures=row["consecutive_failures"],
        last_full_fetch_at=row["last_full_fetch_at"],
        last_failure_class=(
            FailureClass(row["last_failure_class"]) if row.get("last_failure_class") else None
        ),
        config=dict(row["config"] or {}),
        domain=registrable_domain(row["url"]),
    )


def wants_full_fetch(sensor: SensorState, now: datetime, full_refetch_interval_s: int) -> bool:
    """Leave out validators now and then, so a server that answers 304 wrongly is caught."""
    return scheduling.needs_full_fetch(sensor.last_full_fetch_at, now, full_refetch_interval_s)


async def run_sensor(
    runtime: Runtime,
    fetcher: Fetcher,
    sensor: SensorState,
    run_id: str,
    *,
    force: bool = False,
    committer: GroupCommitter | None = None,
    seed: int | None = None,
) -> SensorRunResult:
    """Fetch, decide, archive and commit one sensor.

    `seed` draws the schedule's jitter; a batch draws it in claim order, so the jitter does
    not depend on which concurrent fetch finishes first (politeness waits reorder them).
    Without one it is drawn here, before the first await.
    """
    rng = random.Random(seed if seed is not None else runtime.rng.getrandbits(64))
    try:
        fetched, observed = await _fetch_and_observe(runtime, fetcher, sensor, run_id, rng, force)
    except Exception as exc:
        # The last-resort boundary: whatever fetching or processing this one sensor raised
        # fails this sensor alone (UNKNOWN, with the exception), never the tick.
        fetched, observed = _crashed(runtime, sensor, run_id, rng, exc)
    now = runtime.clock.now()
    stored, places = 0, ()
    if observed.objects:
        # Named by domain.content_address.archive_key in `observe`; packed and made durable
        # before the commit below refers to them, which records where they lie.
        packed = await asyncio.to_thread(runtime.archive.pack, observed.objects)
        stored, places = packed.new_bytes, packed.places
    failure_class = (
        observed.failure_class
        or fetched.failure_class
        or (FailureClass.SCHEMA if observed.outcome is Outcome.FAILED else None)
    )
    run = RunCommit(
        sensor_id=sensor.id,
        worker=runtime.worker,
        sensor_update=observed.sensor_update,
        run_id=run_id,
        lake_rows=observed.rows,
        now=now,
        inbox=observed.inbox,
        review=observed.review,
        ledger=LedgerCharge(
            day=now.date().isoformat(),  # strftime took 2 us a run
            company_id=sensor.company_id,
            connector=sensor.connector,
            fetch_units=fetched.requests,
            bytes_stored=stored,
        ),
        connector=None
        if fetched.skipped_reason
        else _connector_change(sensor, observed, failure_class, now),
        archived=places,
    )
    if committer is not None:
        committed = await committer.commit(run)
    else:
        committed = (await asyncio.to_thread(commit_runs, runtime.store, [run]))[0]
    return SensorRunResult(
        sensor_id=sensor.id,
        company_id=sensor.company_id,
        surface=sensor.surface,
        url=sensor.url,
        outcome=observed.outcome,
        change_kind=observed.change_kind,
        summary=observed.summary,
        failure_class=failure_class,
        requests=fetched.requests,
        committed=committed,
        noise=observed.noise,
    )


async def _fetch_and_observe(
    runtime: Runtime,
    fetcher: Fetcher,
    sensor: SensorState,
    run_id: str,
    rng: random.Random,
    force: bool,
) -> tuple[Fetched, Observed]:
    now = runtime.clock.now()
    full = force or wants_full_fetch(sensor, now, runtime.settings.full_refetch_interval_s)
    fetched = await fetch_for_sensor(fetcher, sensor, full=full)
    now = runtime.clock.now()
    previous: list[Block] | None = None
    previous_extraction: Extraction | None = None
    # The last snapshot is read only for a parse: a 304, a failure or the same bytes
    # again (a forced refetch of an unchanged page) is decided without it.
    if sensor.last_blocks_key and needs_parse(sensor, fetched):
        previous = await asyncio.to_thread(_load_blocks, runtime, sensor.last_blocks_key)
        if sensor.last_extraction_key:
            previous_extraction = await asyncio.to_thread(
                _load_extraction, runtime, sensor.last_extraction_key
            )
    # In the observe pool (a thread or a process): a large page's parse does not hold up the
    # loop (signals, the deadline).
    observed = await runtime.observe_pool.observe(
        sensor=sensor,
        fetched=fetched,
        previous_blocks=previous,
        previous_extraction=previous_extraction,
        now=now,
        run_id=run_id,
        observation_id=new_id("obs", now),
        policy=runtime.policy,
        rng=rng,
    )
    return fetched, observed


def _crashed(
    runtime: Runtime, sensor: SensorState, run_id: str, rng: random.Random, exc: Exception
) -> tuple[Fetched, Observed]:
    """The run of a sensor whose processing raised: a failure of class UNKNOWN."""
    now = runtime.clock.now()
    detail = " ".join(f"{type(exc).__name__}: {exc}".replace("\x00", "").split())[:500]
    fetched = Fetched(
        url=sensor.url,
        final_url=sensor.url,
        status=None,
        headers={},
        body=b"",
        elapsed_ms=0,
        requests=0,
        failure_class=FailureClass.UNKNOWN,
        failure_detail=detail,
        final_domain=sensor.domain,
    )
    observed = observe(
        sensor,
        fetched,
        None,
        now=now,
        run_id=run_id,
        observation_id=new_id("obs", now),
        policy=runtime.policy,
        rng=rng,
    )
    return fetched, observed


def _connector_change(
    sensor: SensorState,
    observed: Observed,
    failure_class: FailureClass | None,
    now: datetime,
) -> ConnectorChange | None:
    """What this run adds to its connector's stats (written with the run's commit)."""
    try:
        connector = registry.get(sensor.connector)
    except CatlasError:
        return None
    snapshots = observed.rows.get("snapshots") or []
    # Only a snapshot carries an extraction; other runs keep the last count.
    entities = (
        int((snapshots[0].get("extracted_summary") or {}).get("entities", 0)) if snapshots else None
    )
    return ConnectorChange(
        name=connector.name,
        kind=connector.kind,
        version=connector.version,
        tally=StatsTally.of_run(
            outcome=observed.outcome.value,
            failure_class=failure_class.value if failure_class else None,
            entities=entities,
            now=now,
        ),
    )


def _load_extraction(runtime: Runtime, key: str) -> Extraction:
    return Extraction.from_json(runtime.archive.get(key))


def _load_blocks(runtime: Runtime, key: str) -> list[Block]:
    return [Block(**item) for item in json.loads(runtime.archive.get(key))]

"""Reprocess: re-derive `snapshots`, `changes` and `entity_events` of a range of hours from
the archived raw bytes, with the current extractor, and no network request.

The observations of the range are the record of what was fetched and stay as they are.
For each sensor in scope the state before the range (its previous snapshot) is read with
DuckDB over the lake; each archived response of the range then goes through the same pure
pipeline as a live fetch (`domain.observe`), in time order, carrying the sensor's state
from one to the next. Each hour's derived files are then replaced in one atomic write per
table and hour (`Lake.replace_partition`): a reader sees the old rows or the new ones.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from catlas_assets.domain.extract.extraction import EXTRACTOR_VERSION, Extraction
from catlas_assets.domain.normalize import Block
from catlas_assets.domain.pipeline_data import Fetched, SensorState
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import RunKind, Stop
from catlas_assets.errors import CatlasError
from catlas_assets.services import lake_sync, periodic
from catlas_assets.services.catalog import resolve_company
from catlas_assets.services.dead_runs import settle
from catlas_assets.services.parse_time_limit import observe_within
from catlas_assets.services.runs import RunRecorder, RunReport
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import sensor_state
from resources.lake import partition_of

DERIVED = ("snapshots", "changes", "entity_events")
# The outcomes whose raw bytes were archived and extracted.
CONTENT_OUTCOMES = ("ok", "changed", "unchanged")
_STATE_FIELDS = {f.name for f in fields(SensorState)}


@dataclass(frozen=True)
class Scope:
    start: datetime  # inclusive, on an hour
    end: datetime  # exclusive, on an hour
    surface: str | None = None
    company_id: int | None = None

    def hours(self) -> list[datetime]:
        count = int((self.end - self.start) / timedelta(hours=1))
        return [self.start + timedelta(hours=n) for n in range(count)]


# The widest range one reprocess run walks hour by hour (ten years).
MAX_RANGE = timedelta(days=3660)


@dataclass
class HourCounts:
    old: dict[str, int] = field(default_factory=dict)
    new: dict[str, int] = field(default_factory=dict)


@dataclass
class ReprocessResult:
    report: RunReport
    hours: dict[str, HourCounts]  # "date=.../hour=..." -> old/new rows per table
    observations: int
    missing_raw: int
    old_extractor_versions: list[str]
    new_extractor_version: str


def _where(scope: Scope, alias: str = "") -> tuple[str, list[Any]]:
    prefix = f"{alias}." if alias else ""
    clauses, params = [], []
    if scope.surface:
        clauses.append(f"{prefix}surface = ?")
        params.append(scope.surface)
    if scope.company_id is not None:
        clauses.append(f"{prefix}company_id = ?")
        params.append(scope.company_id)
    return "".join(f" AND {c}" for c in clauses), params


def _observations(runtime: Runtime, scope: Scope) -> list[dict[str, Any]]:
    if not runtime.lake.files("observations"):
        return []
    extra, params = _where(scope)
    con = runtime.lake.connect()
    try:
        cursor = con.execute(
            "SELECT * EXCLUDE (date, hour) FROM observations WHERE fetched_at >= ? AND "
            f"fetched_at < ? AND sensor_id IS NOT NULL{extra} ORDER BY sensor_id, fetched_at, "
            "observation_id",
            [scope.start, scope.end, *params],
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()


def _previous_snapshots(runtime: Runtime, sensor_ids: list[int], start: datetime) -> dict:
    """Each sensor's last snapshot before `start` ("DuckDB for diffs"), by sensor id."""
    if not sensor_ids or not runtime.lake.files("snapshots"):
        return {}
    con = runtime.lake.connect()
    try:
        cursor = con.execute(
            "SELECT sensor_id, arg_max(snapshot_id, captured_at), arg_max(version, captured_at), "
            "arg_max(normalized_hash, captured_at), arg_max(structured_hash, captured_at), "
            "arg_max(simhash, captured_at), arg_max(blocks_key, captured_at), "
            "arg_max(text_key, captured_at), arg_max(extraction_key, captured_at) "
            "FROM snapshots WHERE captured_at < ? AND sensor_id IN "
            f"({', '.join('?' for _ in sensor_ids)}) GROUP BY sensor_id",
            [start, *sensor_ids],
        )
        return {row[0]: row[1:] for row in cursor.fetchall()}
    finally:
        con.close()


def _initial_state(row: dict[str, Any], previous: tuple | None) -> SensorState:
    state = replace(
        sensor_state(row),
        etag=None,
        last_modified=None,
        raw_hash=None,  # re-derived from the bytes: equal raw bytes must not skip the parse
        normalized_hash=None,
        structured_hash=None,
        simhash=None,
        snapshot_version=0,
        last_snapshot_id=None,
        last_blocks_key=None,
        last_text_key=None,
        last_extraction_key=None,
        config={k: v for k, v in (row["config"] or {}).items() if k != "recent_blocks"},
    )
    if previous is None:
        return state
    snapshot_id, version, normalized, structured, simhash, blocks, text, extraction = previous
    return replace(
        state,
        last_snapshot_id=snapshot_id,
        snapshot_version=int(version or 0),
        normalized_hash=normalized,
        structured_hash=structured,
        simhash=simhash,
        last_blocks_key=blocks,
        last_text_key=text,
        last_extraction_key=extraction,
    )


def _fetched(observation: dict[str, Any], body: bytes) -> Fetched:
    headers = {
        name: value
        for name, value in (
            ("content-type", observation.get("content_type")),
            ("etag", observation.get("etag")),
            ("last-modified", observation.get("last_modified")),
        )
        if value
    }
    final_url = observation["final_url"] or observation["url"]
    return Fetched(
        url=observation["url"],
        final_url=final_url,
        status=observation["http_status"],
        headers=headers,
        body=body,
        elapsed_ms=observation["elapsed_ms"] or 0,
        requests=observation["requests"] or 0,
        final_domain=registrable_domain(final_url),
    )


@dataclass
class _Derivation:
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    sensors: set[int] = field(default_factory=set)
    kept_observations: set[str] = field(default_factory=set)  # raw bytes missing: keep old
    processed: int = 0


def _rederive_sensor(
    runtime: Runtime, state: SensorState, observations: list[dict[str, Any]], out: _Derivation
) -> None:
    archive = runtime.archive
    out.sensors.add(state.id)
    for observation in observations:
        if observation["outcome"] not in CONTENT_OUTCOMES:
            continue
        key = observation["object_key"]
        if not key or not archive.exists(key):
            out.kept_observations.add(observation["observation_id"])
            continue
        previous_blocks = None
        previous_extraction = None
        if state.last_blocks_key and archive.exists(state.last_blocks_key):
            data = json.loads(archive.get(state.last_blocks_key))
            previous_blocks = [Block(**item) for item in data]
        if state.last_extraction_key and archive.exists(state.last_extraction_key):
            previous_extraction = Extraction.from_json(archive.get(state.last_extraction_key))
        observed = observe_within(
            runtime.settings.parse_timeout_s,  # a replay is bounded as the live parse was
            sensor=state,
            fetched=_fetched(observation, archive.get(key)),
            previous_blocks=previous_blocks,
            previous_extraction=previous_extraction,
            now=observation["fetched_at"],
            run_id=observation["run_id"],
            observation_id=observation["observation_id"],
            policy=runtime.policy,
            rng=random.Random(observation["observation_id"]),
        )
        out.processed += 1
        for data in observed.objects.values():
            archive.put(data)  # content-addressed: a local write, the same key if present
        for table in DERIVED:
            out.rows[table].extend(observed.rows.get(table, []))
        update = {k: v for k, v in observed.sensor_update.items() if k in _STATE_FIELDS}
        state = replace(state, **update)


def _derive(runtime: Runtime, scope: Scope, observations: list[dict[str, Any]]) -> _Derivation:
    by_sensor: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for observation in observations:
        by_sensor[observation["sensor_id"]].append(observation)
    previous = _previous_snapshots(runtime, sorted(by_sensor), scope.start)
    out = _Derivation()
    for sensor_id, items in sorted(by_sensor.items()):
        row = runtime.store.sensor(sensor_id)
        _rederive_sensor(runtime, _initial_state(row, previous.get(sensor_id)), items, out)
    return out


def _replace_hours(runtime: Runtime, scope: Scope, out: _Derivation) -> dict[str, HourCounts]:
    new_by_part: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for table in DERIVED:
        column = runtime.lake.table(table).time_column
        for row in out.rows[table]:
            new_by_part[(table, partition_of(row[column]))].append(row)
    hours: dict[str, HourCounts] = {}
    for hour in scope.hours():
        partition = partition_of(hour)
        counts = hours.setdefault(partition, HourCounts())
        kept_snapshots: set[str] = set()
        for table in DERIVED:  # snapshots first: the kept ones name what else is kept
            old = runtime.lake.read(table, partition).to_pylist()
            keep = [
                r
                for r in old
                if r["sensor_id"] not in out.sensors
                or r.get("observation_id") in out.kept_observations
                or (table != "snapshots" and r["snapshot_id"] in kept_snapshots)
            ]
            if table == "snapshots":
                kept_snapshots = {r["snapshot_id"] for r in keep}
            rows = keep + new_by_part.get((table, partition), [])
            counts.old[table], counts.new[table] = len(old), len(rows)
            if old or rows:
                runtime.lake.replace_partition(table, partition, rows)
    return hours


def _old_versions(runtime: Runtime, scope: Scope) -> list[str]:
    if not runtime.lake.files("snapshots"):
        return []
    extra, params = _where(scope)
    con = runtime.lake.connect()
    try:
        rows = con.execute(
            "SELECT DISTINCT extractor_version FROM snapshots WHERE captured_at >= ? AND "
            f"captured_at < ?{extra} ORDER BY 1",
            [scope.start, scope.end, *params],
        ).fetchall()
    finally:
        con.close()
    return [r[0] for r in rows if r[0]]


def reprocess(
    runtime: Runtime, scope: Scope, *, launch_handle: str | None = None
) -> ReprocessResult:
    """Re-derive the range's snapshots, changes and entity events; one `reprocess` run."""
    recorder = RunRecorder(runtime, RunKind.REPROCESS, launch_handle=launch_handle)
    settle(runtime)  # a reprocess killed before this one gets its verdict
    # Under the compaction lease: no compaction rewrites an hour while it is replaced.
    with periodic.leased(runtime, "lake_compaction"):
        lake_sync.flush(runtime)  # rows still in the outbox belong to the range too
        old_versions = _old_versions(runtime, scope)
        observations = _observations(runtime, scope)
        out = _derive(runtime, scope, observations)
        hours = _replace_hours(runtime, scope, out)
    counters = {"claimed": len(observations), "reprocessed": out.processed}
    counters["missing_raw"] = len(out.kept_observations)
    for table in DERIVED:
        counters[f"{table}_old"] = sum(h.old.get(table, 0) for h in hours.values())
        counters[f"{table}_new"] = sum(h.new.get(table, 0) for h in hours.values())
    detail = (
        f"{out.processed} responses re-derived over {len(hours)} hour(s) with "
        f"{EXTRACTOR_VERSION} (before: {', '.join(old_versions) or 'none'})"
        + (
            f"; {len(out.kept_observations)} without archived bytes kept as they were"
            if out.kept_observations
            else ""
        )
    )
    report = recorder.finish(
        stop=Stop.QUEUE_EMPTY,
        tally=Tally(
            succeeded=out.processed or (0 if out.kept_observations else 1),
            coverage_gaps=len(out.kept_observations),
            productive=out.processed > 0,
        ),
        counters=counters,
        detail=detail,
    )
    return ReprocessResult(
        report=report,
        hours=hours,
        observations=len(observations),
        missing_raw=len(out.kept_observations),
        old_extractor_versions=old_versions,
        new_extractor_version=EXTRACTOR_VERSION,
    )


def scope_of(
    runtime: Runtime,
    start: str,
    end: str,
    *,
    surface: str | None = None,
    company: str | None = None,
) -> Scope:
    """The scope `catlas reprocess` asks for: ISO instants (UTC when naive) floored to the
    hour, `--to` exclusive; a company by id or by name."""
    begin, stop = _hour(start), _hour(end)
    if stop <= begin:
        raise CatlasError(f"--to ({end}) must be at least an hour after --from ({start})")
    # No hour after now holds archived bytes: walking them would only take time.
    stop = min(stop, _floor_hour(runtime.clock.now()) + timedelta(hours=1))
    if stop - begin > MAX_RANGE:
        raise CatlasError(
            f"--from {start} --to {end} spans more than {MAX_RANGE.days} days: split the range"
        )
    company_id = int(resolve_company(runtime, company)["id"]) if company is not None else None
    return Scope(begin, max(begin, stop), surface=surface, company_id=company_id)


def _hour(text: str) -> datetime:
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        raise CatlasError(f"not an ISO date or instant: {text!r}") from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return _floor_hour(instant)


def _floor_hour(instant: datetime) -> datetime:
    return instant.astimezone(UTC).replace(minute=0, second=0, microsecond=0)

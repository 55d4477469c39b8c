"""The lake's tables: their Parquet schemas, ids and event-time columns (DESIGN.md: Data)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")
JSON_TEXT = pa.string()  # JSON documents are stored as text; DuckDB reads them with ->>
# The columns holding JSON text: the DuckDB views type them JSON (`->>` and JSON output).
JSON_COLUMNS = frozenset({"extracted", "extracted_summary", "structured_delta", "attributes"})


@dataclass(frozen=True)
class LakeTable:
    name: str
    schema: pa.Schema
    id_column: str  # unique per row: compaction keeps one row per id
    time_column: str  # the event time that places a row in date=/hour=
    # A table whose each day holds its whole state as of that day (`entities`): its view
    # reads the latest day only, `<name>_by_day` every day.
    daily_state: bool = False


def _schema(*columns: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, kind in columns])


OBSERVATIONS = LakeTable(
    "observations",
    _schema(
        ("observation_id", pa.string()),
        ("run_id", pa.string()),
        ("sensor_id", pa.int64()),
        ("webpage_id", pa.int64()),
        ("company_id", pa.int64()),
        ("surface", pa.string()),
        ("url", pa.string()),
        ("final_url", pa.string()),
        ("fetched_at", TS),
        ("outcome", pa.string()),
        ("http_status", pa.int32()),
        ("not_modified", pa.bool_()),
        ("changed", pa.bool_()),
        ("noise", pa.bool_()),
        ("failure_class", pa.string()),
        ("elapsed_ms", pa.int32()),
        ("bytes", pa.int64()),
        ("etag", pa.string()),
        ("last_modified", pa.string()),
        ("content_hash", pa.string()),
        ("normalized_hash", pa.string()),
        ("structured_hash", pa.string()),
        ("object_key", pa.string()),
        ("text_key", pa.string()),
        ("blocks_key", pa.string()),
        ("extractor_version", pa.string()),
        ("connector", pa.string()),
        ("requests", pa.int32()),
        ("crawl_config", pa.string()),  # the site-crawl config of a webpage's observation
        # The response's Content-Type: reprocess decodes the archived bytes as it did.
        ("content_type", pa.string()),
    ),
    "observation_id",
    "fetched_at",
)

SNAPSHOTS = LakeTable(
    "snapshots",
    _schema(
        ("snapshot_id", pa.string()),
        ("run_id", pa.string()),
        ("sensor_id", pa.int64()),
        ("lineage_id", pa.int64()),  # the first sensor of a chain of moves
        ("webpage_id", pa.int64()),
        ("company_id", pa.int64()),
        ("surface", pa.string()),
        ("version", pa.int32()),
        ("previous_snapshot_id", pa.string()),
        ("observation_id", pa.string()),
        ("captured_at", TS),
        ("normalized_hash", pa.string()),
        ("structured_hash", pa.string()),
        ("simhash", pa.int64()),
        ("object_key", pa.string()),
        ("text_key", pa.string()),
        ("blocks_key", pa.string()),
        ("extraction_key", pa.string()),
        ("extracted", JSON_TEXT),
        ("extracted_summary", JSON_TEXT),
        ("extractor_version", pa.string()),
    ),
    "snapshot_id",
    "captured_at",
)

CHANGES = LakeTable(
    "changes",
    _schema(
        ("change_id", pa.string()),
        ("run_id", pa.string()),
        ("sensor_id", pa.int64()),
        ("lineage_id", pa.int64()),  # the first sensor of a chain of moves
        ("webpage_id", pa.int64()),  # a site crawl's page (sensor_id is then null)
        ("company_id", pa.int64()),
        ("surface", pa.string()),
        ("snapshot_id", pa.string()),
        ("previous_snapshot_id", pa.string()),
        ("detected_at", TS),
        ("significance", pa.float64()),
        ("kind", pa.string()),
        ("status", pa.string()),
        ("summary", pa.string()),
        ("structured_delta", JSON_TEXT),
    ),
    "change_id",
    "detected_at",
)

ENTITY_EVENTS = LakeTable(
    "entity_events",
    _schema(
        ("event_id", pa.string()),
        ("run_id", pa.string()),
        ("company_id", pa.int64()),
        ("sensor_id", pa.int64()),
        ("lineage_id", pa.int64()),  # the first sensor of a chain of moves
        ("webpage_id", pa.int64()),  # a site crawl's page (sensor_id is then null)
        ("entity_type", pa.string()),
        ("entity_key", pa.string()),
        ("entity_label", pa.string()),  # readable: job title, plan, person, news title
        ("event", pa.string()),
        ("observed_at", TS),
        ("snapshot_id", pa.string()),
        ("attributes", JSON_TEXT),
    ),
    "event_id",
    "observed_at",
)

# Derived (SCD2) from entity_events by the daily `entities` asset: one row per version.
# Day D's partition (date=D/hour=00) is the whole state as of the end of day D, derived
# from day D-1's state and day D's events.
ENTITIES = LakeTable(
    "entities",
    _schema(
        ("entity_version_id", pa.string()),
        ("company_id", pa.int64()),
        ("sensor_id", pa.int64()),
        ("lineage_id", pa.int64()),  # the first sensor of a chain of moves
        ("entity_type", pa.string()),
        ("entity_key", pa.string()),
        ("entity_label", pa.string()),
        ("version", pa.int32()),
        ("first_seen_at", TS),
        ("last_seen_at", TS),
        ("removed_at", TS),
        ("valid_from", TS),
        ("valid_to", TS),
        ("status", pa.string()),
        ("is_current", pa.bool_()),
        ("attributes", JSON_TEXT),
    ),
    "entity_version_id",
    "valid_from",
    daily_state=True,
)

FAILURES = LakeTable(
    "failures",
    _schema(
        ("observation_id", pa.string()),
        ("run_id", pa.string()),
        ("sensor_id", pa.int64()),
        ("webpage_id", pa.int64()),
        ("company_id", pa.int64()),
        ("at", TS),
        ("failure_class", pa.string()),
        ("http_status", pa.int32()),
        ("detail", pa.string()),
    ),
    "observation_id",
    "at",
)

DISCOVERY = LakeTable(
    "discovery",
    _schema(
        ("candidate_id", pa.string()),
        ("run_id", pa.string()),
        ("company_id", pa.int64()),
        ("discovered_at", TS),
        ("url", pa.string()),
        ("surface", pa.string()),
        ("method", pa.string()),
        ("confidence", pa.float64()),
        ("verified", pa.bool_()),
        ("depth", pa.int32()),
        ("selected", pa.bool_()),
        ("reason", pa.string()),
    ),
    "candidate_id",
    "discovered_at",
)

RUN_EVENTS = LakeTable(
    "run_events",
    _schema(
        ("event_id", pa.string()),
        ("run_id", pa.string()),
        ("url", pa.string()),
        ("sensor_id", pa.int64()),
        ("webpage_id", pa.int64()),
        ("event", pa.string()),
        ("transition", pa.string()),
        ("at", TS),
        ("detail", pa.string()),
    ),
    "event_id",
    "at",
)

TABLES: dict[str, LakeTable] = {
    t.name: t
    for t in (
        OBSERVATIONS,
        SNAPSHOTS,
        CHANGES,
        ENTITY_EVENTS,
        ENTITIES,
        FAILURES,
        DISCOVERY,
        RUN_EVENTS,
    )
}


# Dimensions: the state store's catalog exported as one Parquet snapshot per UTC day
# (`<name>/date=YYYY-MM-DD/<name>.parquet`, rewritten at each compaction of that day), so
# SQL over the lake sees names, URLs and delivery status. `id_column` is the snapshot's key.
@dataclass(frozen=True)
class Dimension:
    name: str
    schema: pa.Schema
    id_column: str


COMPANIES = Dimension(
    "companies",
    _schema(
        ("company_id", pa.int64()),
        ("company_name", pa.string()),
        ("website", pa.string()),
        ("domain", pa.string()),
        ("importance", pa.float64()),
        ("tier", pa.int32()),
        ("onboarding_status", pa.string()),
        ("sensor_count", pa.int32()),
        ("created_at", TS),
        ("updated_at", TS),
        ("exported_at", TS),
    ),
    "company_id",
)

DOMAINS = Dimension(
    "domains",
    _schema(
        ("domain_id", pa.int64()),
        ("company_id", pa.int64()),
        ("company_name", pa.string()),
        ("domain", pa.string()),
        ("kind", pa.string()),
        ("created_at", TS),
        ("exported_at", TS),
    ),
    "domain_id",
)

SENSORS = Dimension(
    "sensors",
    _schema(
        ("sensor_id", pa.int64()),
        ("company_id", pa.int64()),
        ("company_name", pa.string()),
        ("website", pa.string()),
        ("surface", pa.string()),
        ("url", pa.string()),
        ("connector", pa.string()),
        ("status", pa.string()),
        ("tier", pa.string()),
        ("discovery_method", pa.string()),
        ("current_interval_s", pa.int64()),
        ("consecutive_failures", pa.int32()),
        ("last_failure_class", pa.string()),
        ("last_fetched_at", TS),
        ("last_success_at", TS),
        ("last_change_at", TS),
        ("created_at", TS),
        ("retired_at", TS),
        ("redirect_url", pa.string()),
        # Lineage across repairs and moves: the sensor this one took over from, and the
        # first sensor of its chain (a sensor with no predecessor is its own lineage).
        ("predecessor_sensor_id", pa.int64()),
        ("lineage_id", pa.int64()),
        ("exported_at", TS),
    ),
    "sensor_id",
)

CHANGE_DELIVERIES = Dimension(
    "change_deliveries",
    _schema(
        ("change_id", pa.string()),
        ("company_id", pa.int64()),
        ("delivered_at", TS),
        ("channel", pa.string()),
        ("attempts", pa.int32()),
        ("exported_at", TS),
    ),
    "change_id",
)

# The site-crawl queue (spec 003), so analysts can join pages to their history.
WEBPAGES = Dimension(
    "webpages",
    _schema(
        ("webpage_id", pa.int64()),
        ("url", pa.string()),
        ("host", pa.string()),
        ("crawl_status", pa.string()),
        ("redirects_to", pa.string()),
        ("skip_reason", pa.string()),
        ("content_hash", pa.string()),
        ("processing_status", pa.string()),
        ("object_key", pa.string()),
        ("content_type", pa.string()),
        ("text_key", pa.string()),
        ("last_snapshot_id", pa.string()),
        ("last_outcome", pa.string()),
        ("last_run_id", pa.string()),
        ("failure_class", pa.string()),
        ("failure_detail", pa.string()),
        ("last_crawled_at", TS),
        ("created_at", TS),
        ("updated_at", TS),
        ("exported_at", TS),
    ),
    "webpage_id",
)

DIMENSIONS: dict[str, Dimension] = {
    d.name: d for d in (COMPANIES, DOMAINS, SENSORS, CHANGE_DELIVERIES, WEBPAGES)
}

"""The operational state store: one SQLAlchemy Core schema for SQLite and PostgreSQL.

Status columns carry CHECK constraints built from the Vocabulary, so a misspelled status
is refused by the database itself. Migrations (``migrations/``) are the history of this file.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import column
from sqlalchemy.types import TypeDecorator

from catlas_assets.domain.vocabulary import (
    CrawlMode,
    CrawlStatus,
    DiscoveryMethod,
    DomainKind,
    FailureClass,
    OnboardingStatus,
    PageEvent,
    ProcessingStatus,
    QueueJobStatus,
    ReviewKind,
    ReviewStatus,
    RunKind,
    RunLauncher,
    RunOutcome,
    RunStatus,
    SensorStatus,
    Stop,
    Surface,
    Transition,
)
from resources.state.url_authority import url_authority

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def _in(column: str, enum: type[StrEnum], *, nullable: bool = False) -> CheckConstraint:
    allowed = ", ".join(f"'{member.value}'" for member in enum)
    expr = f"{column} IN ({allowed})"
    if nullable:
        expr = f"{column} IS NULL OR {expr}"
    return CheckConstraint(expr, name=f"{column}_known")


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC in, aware UTC out, on both dialects (SQLite keeps no offset)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored; take now from the clock")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    # SQLite keeps the text `YYYY-MM-DD HH:MM:SS.ffffff`. SQLAlchemy's own SQLite processors
    # format it through a dict and parse it with a regular expression, and the two steps
    # above come on top: a claim of 2,000 sensors (seven times a row) spent more converting
    # its rows than running its statement. These write the same text and read it in one
    # C call each; PostgreSQL keeps the driver's types.
    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        if dialect.name != "sqlite":
            return super().bind_processor(dialect)
        return _sqlite_utc_text

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any] | None:
        if dialect.name != "sqlite":
            return super().result_processor(dialect, coltype)
        return _sqlite_utc_datetime


def _sqlite_utc_text(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetimes are not stored; take now from the clock")
    # Always six fraction digits: the column is compared as text in SQL.
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def _sqlite_utc_datetime(value: str | None) -> datetime | None:
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _ts(name: str, **kw: object) -> Column:
    return Column(name, UtcDateTime(), **kw)


companies = Table(
    "companies",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(300), nullable=False, unique=True),
    Column("website", Text),
    Column("domain", String(300)),
    Column("importance", Float, nullable=False, default=0.5),
    Column("tier", Integer, nullable=False, default=3),
    Column("onboarding_status", String(20), nullable=False, default="pending"),
    Column("onboarding_error", Text),
    Column("stats", JSON, nullable=False, default=dict),
    Column("source_meta", JSON, nullable=False, default=dict),
    _ts("created_at", nullable=False),
    _ts("updated_at", nullable=False),
    CheckConstraint("importance >= 0 AND importance <= 1", name="importance_range"),
    CheckConstraint("tier BETWEEN 1 AND 4", name="tier_range"),
    _in("onboarding_status", OnboardingStatus),
)

domains = Table(
    "domains",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("company_id", Integer, ForeignKey("companies.id"), nullable=False),
    Column("domain", String(300), nullable=False),
    Column("kind", String(20), nullable=False),
    _ts("created_at", nullable=False),
    UniqueConstraint("company_id", "domain"),
    _in("kind", DomainKind),
)

sensors = Table(
    "sensors",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("company_id", Integer, ForeignKey("companies.id"), nullable=False),
    Column("surface", String(20), nullable=False),
    Column("url", Text, nullable=False),
    Column("connector", String(40), nullable=False, default="generic_html"),
    Column("status", String(20), nullable=False, default="pending"),
    Column("tier", String(1), nullable=False),
    Column("base_interval_s", Integer, nullable=False),
    Column("current_interval_s", Integer, nullable=False),
    _ts("next_run_at", nullable=False),
    Column("priority", Float, nullable=False, default=0.5),
    Column("quality_score", Float, nullable=False, default=50.0),
    Column("discovery_confidence", Float),
    Column("discovery_method", String(20)),
    Column("etag", Text),
    Column("last_modified", Text),
    Column("normalized_hash", String(64)),
    Column("structured_hash", String(64)),
    Column("simhash", BigInteger),
    # SHA-256 of the last 200's raw bytes with its connector and content type: an equal
    # answer is unchanged without being parsed again (migration 0004).
    Column("raw_hash", String(64)),
    # The rate_estimate policy's running sums (domain/rate_estimate.py; migration 0004).
    Column("rate_fetches", Float),
    Column("rate_changes", Float),
    Column("rate_observed_s", Float),
    Column("snapshot_version", Integer, nullable=False, default=0),
    Column("last_snapshot_id", String(40)),
    Column("last_blocks_key", Text),
    Column("last_text_key", Text),
    # The last snapshot's full extraction (archive object): the sensor's current entities.
    Column("last_extraction_key", Text),
    Column("consecutive_unchanged", Integer, nullable=False, default=0),
    Column("consecutive_failures", Integer, nullable=False, default=0),
    Column("last_failure_class", String(24)),
    Column("last_failure_detail", Text),
    _ts("last_fetched_at"),
    _ts("last_success_at"),
    _ts("last_change_at"),
    _ts("last_full_fetch_at"),
    _ts("claimed_at"),
    Column("claimed_by", String(120)),
    Column("config", JSON, nullable=False, default=dict),
    _ts("retired_at"),
    _ts("created_at", nullable=False),
    _ts("updated_at", nullable=False),
    UniqueConstraint("company_id", "surface", "url"),
    _in("surface", Surface),
    _in("status", SensorStatus),
    _in("discovery_method", DiscoveryMethod, nullable=True),
    _in("last_failure_class", FailureClass, nullable=True),
    CheckConstraint("base_interval_s > 0 AND current_interval_s > 0", name="interval_positive"),
    # The claim query walks (status, next_run_at); without it claims are ~160x slower.
    Index(None, "status", "next_run_at"),
    Index(None, "company_id"),
)

connectors = Table(
    "connectors",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("kind", String(20), nullable=False),
    Column("version", String(20), nullable=False),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("stats", JSON, nullable=False, default=dict),
    _ts("updated_at", nullable=False),
)

queue_jobs = Table(
    "queue_jobs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(20), nullable=False),
    Column("company_id", Integer, ForeignKey("companies.id")),
    Column("status", String(10), nullable=False, default="pending"),
    Column("attempts", Integer, nullable=False, default=0),
    Column("max_attempts", Integer, nullable=False, default=3),
    _ts("run_after", nullable=False),
    _ts("claimed_at"),
    Column("claimed_by", String(120)),
    Column("last_error", Text),
    Column("payload", JSON, nullable=False, default=dict),
    _ts("created_at", nullable=False),
    _ts("updated_at", nullable=False),
    _in("status", QueueJobStatus),
    Index(None, "kind", "status", "run_after"),
)

# At most one open (pending or running) job of a kind per company: two onboarding workers
# can then never hold discover jobs for the same company at once.
_open_job = queue_jobs.c.status.in_([QueueJobStatus.PENDING.value, QueueJobStatus.RUNNING.value])
Index(
    "uq_queue_jobs_open_per_company",
    queue_jobs.c.kind,
    queue_jobs.c.company_id,
    unique=True,
    sqlite_where=_open_job,
    postgresql_where=_open_job,
)

domain_budgets = Table(
    "domain_budgets",
    metadata,
    Column("domain", String(300), primary_key=True),
    Column("daily_budget", Integer, nullable=False),
    Column("used_today", Integer, nullable=False, default=0),
    Column("budget_day", String(10)),
    _ts("blocked_until"),
    Column("crawl_delay_s", Float),
    # Wall-clock seconds (epoch) before which no worker starts the domain's next request.
    Column("next_start_at", Float),
    # A spaced domain's requests in flight, every worker's: {turn id: held until (epoch s)}.
    Column("turns", JSON),
    _ts("updated_at", nullable=False),
)

crawl_runs = Table(
    "crawl_runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("kind", String(20), nullable=False),
    Column("worker", String(120)),
    _ts("started_at", nullable=False),
    _ts("completed_at"),
    Column("stop", String(24)),
    Column("outcome", String(10)),
    Column("detail", Text),
    Column("claimed", Integer, nullable=False, default=0),
    Column("ok", Integer, nullable=False, default=0),
    Column("changed", Integer, nullable=False, default=0),
    Column("meaningful", Integer, nullable=False, default=0),
    Column("failed", Integer, nullable=False, default=0),
    Column("not_modified", Integer, nullable=False, default=0),
    Column("unchanged", Integer, nullable=False, default=0),
    Column("skipped", Integer, nullable=False, default=0),
    Column("redirected", Integer, nullable=False, default=0),
    Column("requests", Integer, nullable=False, default=0),
    Column("coverage_gaps", Integer, nullable=False, default=0),
    Column("productive", Boolean, nullable=False, default=False),
    Column("empty_streak", Integer, nullable=False, default=0),
    Column("tick_ms", Integer),
    Column("counters", JSON, nullable=False, default=dict),
    Column("launcher", String(20), nullable=False, default="local"),
    Column("launch_handle", String(200)),
    # Site crawls (spec 003): the mode, its config and the one input the mode requires,
    # and the lifecycle status the launched process drives.
    Column("mode", String(20)),
    Column("config_id", Integer, ForeignKey("crawl_configs.id")),
    Column("url_input", Text),
    Column("path_input", Text),
    Column("status", String(12)),
    Column("error_message", Text),
    _in("kind", RunKind),
    _in("stop", Stop, nullable=True),
    _in("outcome", RunOutcome, nullable=True),
    _in("mode", CrawlMode, nullable=True),
    _in("status", RunStatus, nullable=True),
    _in("launcher", RunLauncher),
    CheckConstraint(
        "kind <> 'site_crawl' OR (mode IS NOT NULL AND config_id IS NOT NULL"
        " AND status IS NOT NULL)",
        name="site_crawl_complete",
    ),
    CheckConstraint(
        "status IS NULL OR status NOT IN ('COMPLETED', 'FAILED') OR completed_at IS NOT NULL",
        name="final_has_completed_at",
    ),
    CheckConstraint(
        "status IS NULL OR status <> 'FAILED'"
        " OR (error_message IS NOT NULL AND length(trim(error_message)) > 0)",
        name="failed_has_error_message",
    ),
    Index(None, "kind", "started_at"),
)

crawl_configs = Table(
    "crawl_configs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(120), nullable=False, unique=True),
    Column("company_id", Integer, ForeignKey("companies.id"), nullable=False),
    Column("base_url", Text, nullable=False),
    # Regexes over a URL's authority; `is_allowed_domain` is their one predicate.
    Column("allowed_domains", JSON, nullable=False, default=list),
    Column("max_pages", Integer),
    Column("surface", String(20), nullable=False, default="blog"),
    _ts("created_at", nullable=False),
    _ts("updated_at", nullable=False),
    _in("surface", Surface),
    CheckConstraint("max_pages IS NULL OR max_pages > 0", name="max_pages_positive"),
)

# The site-crawl URL queue, shared by every config; `host` is what config scopes filter on.
webpages = Table(
    "webpages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("url", Text, nullable=False, unique=True),
    Column("host", Text, Computed(url_authority(column("url")), persisted=True)),
    Column("crawl_status", String(12), nullable=False, default="PENDING"),
    Column("redirects_to", Text),
    Column("skip_reason", Text),
    Column("content_hash", String(64)),
    Column("processing_status", String(12)),
    # The stored file: raw bytes, and what processing derived from them.
    Column("object_key", Text),
    Column("content_type", String(200)),
    Column("text_key", Text),
    Column("blocks_key", Text),
    Column("extraction_key", Text),
    Column("etag", Text),
    Column("last_modified", Text),
    Column("normalized_hash", String(64)),
    Column("structured_hash", String(64)),
    Column("snapshot_version", Integer, nullable=False, default=0),
    Column("last_snapshot_id", String(40)),
    # The last success-or-failure outcome: the baseline of regression/recovery.
    Column("last_outcome", String(8)),
    Column("last_run_id", String(40)),
    Column("failure_class", String(24)),
    Column("failure_detail", Text),
    _ts("last_crawled_at"),
    _ts("created_at", nullable=False),
    _ts("updated_at", nullable=False),
    _in("crawl_status", CrawlStatus),
    _in("processing_status", ProcessingStatus, nullable=True),
    _in("failure_class", FailureClass, nullable=True),
    CheckConstraint(
        "last_outcome IS NULL OR last_outcome IN ('success', 'failure')", name="last_outcome_known"
    ),
    CheckConstraint(
        "redirects_to IS NULL OR length(trim(redirects_to)) > 0", name="redirects_to_not_blank"
    ),
    Index(None, "host"),
    Index(None, "crawl_status"),
)

# One row per processed URL of a site crawl (and `redirected` on a followed redirect's origin).
run_events = Table(
    "run_events",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", String(40), ForeignKey("crawl_runs.id"), nullable=False),
    Column("webpage_id", Integer, ForeignKey("webpages.id"), nullable=False),
    Column("url", Text, nullable=False),
    Column("event", String(12), nullable=False),
    Column("transition", String(12)),
    Column("detail", Text),
    _ts("at", nullable=False),
    _in("event", PageEvent),
    _in("transition", Transition, nullable=True),
    Index(None, "run_id", "id"),
    Index(None, "webpage_id"),
)

review_queue = Table(
    "review_queue",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(20), nullable=False),
    Column("status", String(10), nullable=False, default="open"),
    Column("sensor_id", Integer, ForeignKey("sensors.id")),
    Column("company_id", Integer, ForeignKey("companies.id")),
    Column("detail", JSON, nullable=False, default=dict),
    _ts("created_at", nullable=False),
    _ts("closed_at"),
    _in("kind", ReviewKind),
    _in("status", ReviewStatus),
    Index(None, "status", "kind"),
)

settings_kv = Table(
    "settings_kv",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("value", JSON, nullable=False),
    _ts("updated_at", nullable=False),
)

cost_ledger = Table(
    "cost_ledger",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("day", String(10), nullable=False),
    Column("company_id", Integer, ForeignKey("companies.id")),
    Column("connector", String(40), nullable=False),
    Column("fetch_units", Integer, nullable=False, default=0),
    Column("bytes_stored", BigInteger, nullable=False, default=0),
    UniqueConstraint("day", "company_id", "connector"),
)

# The change inbox: pending changes wait here until the notifier or an analyst delivers
# them; the lake's `changes` rows stay as written.
change_inbox = Table(
    "change_inbox",
    metadata,
    Column("change_id", String(40), primary_key=True),
    # A change comes from a sensor or from a crawled webpage (a site crawl), never both.
    Column("sensor_id", Integer, ForeignKey("sensors.id")),
    Column("company_id", Integer, ForeignKey("companies.id"), nullable=False),
    Column("surface", String(20), nullable=False),
    Column("kind", String(12), nullable=False),
    Column("significance", Float, nullable=False),
    Column("summary", Text, nullable=False),
    _ts("detected_at", nullable=False),
    Column("status", String(10), nullable=False, default="pending"),
    _ts("delivered_at"),
    Column("attempts", Integer, nullable=False, default=0),
    Column("last_error", Text),
    Column("webpage_id", Integer, ForeignKey("webpages.id")),
    CheckConstraint("status IN ('pending', 'delivered')", name="status_known"),
    CheckConstraint("(sensor_id IS NULL) <> (webpage_id IS NULL)", name="one_source"),
    Index(None, "status", "detected_at"),
)

# Lake rows committed with the state change that produced them; a flusher moves them to
# Parquet (see services/lake_sync.py). A row here is never lost and never written twice.
lake_outbox = Table(
    "lake_outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", String(40), nullable=False),
    Column("flush_id", String(60)),
    # The rows as JSON (`{table: [row, ...]}`: discovery's), or as Arrow tables packed by
    # `resources/lake_batches.py` (a commit group's, `payload` then `{}`).
    Column("payload", JSON, nullable=False),
    Column("arrow", LargeBinary),
    _ts("created_at", nullable=False),
    Index(None, "flush_id"),
)

# Periodic tasks (stale-claim sweep, compaction, onboarding, repair) run under a lease so
# that several daemons, and Dagster schedules, never run one task twice at once.
task_leases = Table(
    "task_leases",
    metadata,
    Column("name", String(60), primary_key=True),
    Column("holder", String(120)),
    _ts("acquired_at"),
    _ts("expires_at"),
    _ts("last_completed_at"),
    Column("last_holder", String(120)),
)

# Each origin's robots.txt as last fetched, so that a new worker process (a `schedule
# --once`, a lane) trusts it until it expires instead of asking the site again.
robots_files = Table(
    "robots_files",
    metadata,
    Column("origin", String(300), primary_key=True),
    Column("source_url", Text, nullable=False),
    Column("status", Integer),  # the answer's status (None: no answer)
    Column("unavailable", Text, nullable=False),  # why the rules are unknown; "" if usable
    Column("body", LargeBinary),  # a 2xx file's bytes (as the fetcher kept them)
    _ts("fetched_at", nullable=False),
    _ts("expires_at", nullable=False),
)

# Where each packed archive object lies: a run's new objects are written into one pack file
# (`resources/archive.py`), and this row, committed with the run, names its place there.
# Objects written as files of their own (lakes before packs, single puts) have no row.
archive_objects = Table(
    "archive_objects",
    metadata,
    Column("key", String(100), primary_key=True),  # objects/ab/cd/<sha256>.zst
    Column("pack", String(100), nullable=False),  # packs/ab/<id>.pack
    Column("byte_offset", BigInteger, nullable=False),
    Column("byte_length", Integer, nullable=False),  # the object's zstd frame
)

__all__ = [
    "archive_objects",
    "change_inbox",
    "companies",
    "connectors",
    "cost_ledger",
    "crawl_configs",
    "crawl_runs",
    "domain_budgets",
    "domains",
    "lake_outbox",
    "metadata",
    "queue_jobs",
    "review_queue",
    "robots_files",
    "run_events",
    "sensors",
    "settings_kv",
    "task_leases",
    "webpages",
]

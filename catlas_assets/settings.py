"""Every catlas setting in one typed place.

Each field is read from the environment variable ``CATLAS_<FIELD NAME IN UPPER CASE>``;
the ``doc`` metadata is what the README's settings table says. Values are validated when
the settings are built, so a bad value fails at start-up with the variable's name.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from catlas_assets.domain.masking import masked
from catlas_assets.errors import ConfigError

ENV_PREFIX = "CATLAS_"


class Env(StrEnum):
    """Where catlas runs; it picks the Dagster resources (`catlas_assets/defs/resources.py`)."""

    LOCAL = "local"  # the embedded defaults: SQLite and a lake folder under the state dir
    PROD = "prod"  # shared state and lake: PostgreSQL and S3, the schema migrated by hand


def _setting(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Settings:
    # -- where things live ------------------------------------------------------------
    state_dir: str = _setting(".catlas", "Local state folder (SQLite file, `.last_run.json`).")
    database_url: str = _setting(
        "",
        "State store URL. Empty: SQLite at `<state_dir>/state.db`. "
        "`postgresql+psycopg://user@host/db` selects PostgreSQL.",
    )
    lake_url: str = _setting(
        "",
        "Lake and object archive root. Empty: `<state_dir>/lake`. `s3://bucket/prefix` selects S3.",
    )
    s3_endpoint_url: str = _setting("", "Endpoint of an S3-compatible server (empty: AWS).")
    dbt_duckdb_path: str = _setting(
        "",
        "DuckDB file the dbt_intel models are built into. Empty: `<state_dir>/dbt_intel.duckdb`. "
        "`catlas sql` shows its marts as views.",
    )
    diff_base_url: str = _setting(
        "",
        "Base URL the notifier's diff links start with (the lake's `diffs/` folder served over "
        "HTTP). Empty: the link is the diff's lake location.",
    )
    hosts: str = _setting(
        "",
        "Path of a host map (`ADDR:PORT HOST [HOST ...]` per line). When set, only the listed "
        "hosts resolve and they are exempt from the private-address block.",
    )
    now: str = _setting(
        "", "ISO-8601 UTC instant (e.g. `2026-01-05T08:00:00Z`) that freezes the clock."
    )
    tz: str = _setting("UTC", "Time zone for cron-like periodic tasks.")
    env: str = _setting(
        "local",
        "Deployment of the Dagster code location: `local` (embedded defaults) or `prod` "
        "(PostgreSQL state, `s3://` lake, schema never created by a run; see Dagster).",
    )

    # -- fetching ---------------------------------------------------------------------
    user_agent: str = _setting("catlas/0.1", "Product token of the User-Agent header.")
    contact_url: str = _setting(
        "https://catlas.invalid/bot", "Contact URL appended to the User-Agent header."
    )
    fetch_connect_timeout_s: float = _setting(10.0, "TCP/TLS connect timeout.")
    fetch_read_timeout_s: float = _setting(20.0, "Timeout between two reads of a response.")
    fetch_total_timeout_s: float = _setting(
        60.0, "Wall-clock cap on one fetch, redirects included."
    )
    fetch_max_bytes: int = _setting(10_000_000, "Cap on a response body; more is TOO_LARGE.")
    ca_bundle: str = _setting(
        "", "PEM file of the certificate authorities https is verified against (empty: system)."
    )
    fetch_retries: int = _setting(2, "Retries of transient failures within one run.")
    fetch_concurrency: int = _setting(16, "Sensors fetched at once by one worker.")
    site_crawl_concurrency: int = _setting(
        4,
        "Pages of one site crawl in flight at once (per-domain spacing and concurrency "
        "still apply).",
    )
    observe_workers: int = _setting(
        -1,
        "Processes that parse and decide sensor runs beside a worker's event loop "
        "(-1: one per core, at most 8, none on one core; 0: in the worker's own process).",
    )
    lanes: int = _setting(
        -1,
        "Processes a tick of at least `CATLAS_LANE_MIN_BATCH` sensors runs them in, each "
        "with its own event loop, its share of the domains, and parsing in its own process "
        "(-1: one per core, at most 8, none on one core; 0: every sensor in the worker's "
        "own process).",
    )
    lane_min_batch: int = _setting(
        500,
        "Claimed sensors from which a tick uses lanes (a smaller one runs in the worker's "
        "own process: a lane takes ~30 ms of CPU to start, and a daemon's first lanes wait "
        "~0.5 s for its fork server).",
    )
    max_redirects: int = _setting(10, "Redirect hops followed before REDIRECT.")
    parse_timeout_s: float = _setting(
        30.0,
        "Wall-clock cap on deciding one response (normalize, extract, diff); a page that "
        "takes longer fails its sensor alone as PARSING.",
    )

    # -- politeness (robots.txt, domain governor, budgets) -----------------------------
    robots_ttl_s: int = _setting(
        86400, "How long a fetched robots.txt is trusted before it is fetched again."
    )
    robots_unavailable_retry_s: int = _setting(
        3600,
        "How long a robots.txt that answered 5xx or was unreachable blocks its origin "
        "(the fetch is postponed: outcome `skipped`).",
    )
    domain_spacing_s: float = _setting(
        1.0,
        "Minimum seconds between two requests to one registrable domain (raised by Crawl-delay).",
    )
    domain_concurrency: int = _setting(2, "Requests in flight at once to one registrable domain.")
    crawl_delay_max_s: float = _setting(60.0, "Cap on the Crawl-delay a robots.txt may ask for.")
    domain_daily_budget: int = _setting(
        5000, "Requests per registrable domain per UTC day (`domain_budgets.daily_budget`)."
    )
    # 64: a tick's share of one domain is tens of sensors; each refill is a write
    # transaction the domain's requests wait on (16 → 64: +7 % forced, +11 % conditional
    # pass in alternating runs; 256 no better than 64).
    domain_budget_lease: int = _setting(
        64,
        "Budget units a worker takes at once from a domain with no spacing; what it does not "
        "use goes back at the end of the tick.",
    )
    retry_after_max_s: int = _setting(
        86400, "Cap on how long a Retry-After (429/503) may keep a domain blocked."
    )
    robots_recheck_batch: int = _setting(
        200, "Sensors blocked by robots.txt that are checked again before one tick, at most."
    )

    # -- scheduling (spec: Scheduling formula) -----------------------------------------
    min_interval_s: int = _setting(900, "Lower clamp of a sensor's interval.")
    max_interval_s: int = _setting(7 * 86400, "Upper clamp of a sensor's interval.")
    burst_interval_s: int = _setting(1800, "Interval right after a meaningful-or-above change.")
    burst_decay: float = _setting(2.0, "Growth factor back toward base after a burst.")
    stability_growth: float = _setting(1.25, "Growth factor of a stable sensor's interval.")
    full_refetch_interval_s: int = _setting(
        7 * 86400, "At least this often a sensor is fetched without conditional headers."
    )
    scheduler_tick_s: int = _setting(60, "Seconds between two scheduler ticks (daemon).")
    scheduler_claim_batch: int = _setting(500, "Sensors claimed per tick at most.")
    claim_timeout_s: int = _setting(900, "A claim older than this may be taken over.")
    scheduling_policy: str = _setting(
        "spec",
        "How intervals are chosen: spec (the spec's formula) or rate_estimate (each sensor's "
        "change rate learned from its fetches, fetched in proportion to its square root).",
    )
    commit_group_runs: int = _setting(
        32, "Sensor runs committed in one state transaction at most (1: each alone)."
    )
    commit_group_ms: int = _setting(
        50, "Longest wait, in ms, of a finished run for its group's commit (0: at once)."
    )
    stale_after_failures: int = _setting(6, "Consecutive failures that make a sensor stale.")
    retire_after_failures: int = _setting(30, "Consecutive failures that retire a sensor.")

    # -- repair (spec: Repair) -----------------------------------------------------------
    repair_max_requests: int = _setting(
        6, "Requests one sensor's repair attempt may send (robots.txt and redirect hops too)."
    )
    repair_cooldown_s: int = _setting(
        6 * 3600, "A sensor's repair is not attempted again within this long of the last one."
    )
    repair_simhash_max_distance: int = _setting(
        12, "Simhash Hamming distance at or under which a candidate is the last snapshot's page."
    )
    repair_min_ratio: float = _setting(
        0.6,
        "Fuzzy text ratio (0-1) at or over which a candidate is that page (either test suffices).",
    )
    repair_batch: int = _setting(50, "Sensors one repair pass considers at most.")

    # -- run verdict (spec 001: stop rules) and scale-out ---------------------------------
    max_consecutive_failures: int = _setting(
        10, "Requests in a row that failed (after retries) before a run, or a domain, stops."
    )
    max_error_rate: float = _setting(
        0.5, "Share of failed requests above which a run, or a domain, stops."
    )
    min_requests_for_error_rate: int = _setting(
        20, "Requests counted before `CATLAS_MAX_ERROR_RATE` applies."
    )
    max_concurrent_crawl_runs: int = _setting(
        1, "Dagster crawl-tick runs in flight at most (the `due_sensors` sensor waits)."
    )
    ui_port: int = _setting(3000, "Port of the Dagster UI that `make ui` starts on 127.0.0.1.")
    dagster_run_retention_days: int = _setting(
        30, "Dagster runs (and their event logs) older than this are deleted by `maintenance`."
    )

    # -- change classification ---------------------------------------------------------
    minor_threshold: float = _setting(0.02, "Significance from which a change is minor.")
    meaningful_threshold: float = _setting(0.10, "Significance from which it is meaningful.")
    major_threshold: float = _setting(0.40, "Significance from which it is major.")
    critical_threshold: float = _setting(0.80, "Significance from which it is critical.")
    keep_noise_snapshots: bool = _setting(False, "Write a snapshot even for pure noise.")
    extracted_max_items: int = _setting(300, "Items per list kept in `snapshots.extracted`.")
    extracted_max_bytes: int = _setting(900_000, "Size cap of `snapshots.extracted`.")

    # -- notification ------------------------------------------------------------------
    notify_webhook_url: str = _setting(
        "",
        "Webhook that receives pending changes as Slack-compatible JSON (`catlas notify`). "
        "Empty: the notifier is off.",
    )
    notify_max_attempts: int = _setting(
        8, "Deliveries tried per change before it is left for a person (`catlas changes`)."
    )
    notify_timeout_s: float = _setting(10.0, "Timeout of one webhook delivery.")

    # -- discovery and onboarding (spec: Discovery) ------------------------------------------
    discovery_budget_s: float = _setting(
        90.0, "Wall-clock budget of discovering one company (seconds)."
    )
    discovery_max_requests: int = _setting(
        25, "HTTP requests one company's discovery may make (robots.txt, redirects included)."
    )
    discovery_max_sitemap_urls: int = _setting(
        500, "Sitemap URLs read per company (index children included)."
    )
    discovery_max_sensors_per_company: int = _setting(
        10, "Sensors discovery creates per company, most important surfaces first."
    )
    discovery_max_sitemap_roots: int = _setting(
        2, "Sitemaps named by robots.txt `Sitemap:` lines read per company (else `/sitemap.xml`)."
    )
    discovery_max_sitemap_children: int = _setting(
        4, "Child sitemaps of a sitemap index read per company."
    )
    discovery_max_probes: int = _setting(
        12, "Common-path probes per company for the high-value surfaces still missing."
    )
    discovery_max_subdomain_gets: int = _setting(
        6,
        "GETs of surface subdomains (`careers.`, `status.` ...) per company; a name that "
        "does not resolve costs none.",
    )
    discovery_max_ats_verifications: int = _setting(
        2, "ATS boards verified per company (one request to the vendor each)."
    )
    discovery_ats_reserve: int = _setting(
        4,
        "Requests kept back while reading sitemaps, so that the careers page and its ATS "
        "board can still be fetched and verified.",
    )
    onboarding_batch_size: int = _setting(20, "Discover jobs one onboarding batch claims.")
    onboarding_concurrency: int = _setting(4, "Companies one onboarding batch discovers at once.")
    onboarding_max_attempts: int = _setting(
        3,
        "Attempts of a discover job before it is dead "
        "(`CATLAS_ONBOARDING_RETRY_BACKOFF_S` x attempts between them).",
    )
    onboarding_retry_backoff_s: int = _setting(
        1800, "A failed discover job waits this long times its attempts before the next one."
    )
    onboarding_claim_timeout_s: int = _setting(
        900,
        "A discover job claimed longer ago than this is a dead worker's and is due again "
        "(above `CATLAS_DISCOVERY_BUDGET_S`).",
    )
    onboarding_every_ticks: int = _setting(
        4, "The daemon runs an onboarding batch every this many ticks (unless `--no-onboarding`)."
    )

    @property
    def state_path(self) -> Path:
        return Path(self.state_dir)

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.state_path / 'state.db'}"

    @property
    def resolved_lake_url(self) -> str:
        return self.lake_url or str(self.state_path / "lake")

    @property
    def resolved_dbt_duckdb_path(self) -> Path:
        return (
            Path(self.dbt_duckdb_path)
            if self.dbt_duckdb_path
            else self.state_path / "dbt_intel.duckdb"
        )

    @property
    def frozen_now(self) -> datetime | None:
        return parse_utc_instant(self.now, "CATLAS_NOW") if self.now else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = ENV_PREFIX + f.name.upper()
            if name in env:
                values[f.name] = _coerce(name, env[name], type(f.default))
        settings = cls(**values)
        return settings.with_overrides(**overrides) if overrides else settings.validated()

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **overrides).validated()

    def validated(self) -> Settings:
        if self.now:
            parse_utc_instant(self.now, "CATLAS_NOW")
        if self.env not in tuple(Env):
            choices = ", ".join(Env)
            raise ConfigError(f"CATLAS_ENV={self.env!r} is not one of {choices}")
        if self.scheduling_policy not in SCHEDULING_POLICIES:
            choices = ", ".join(SCHEDULING_POLICIES)
            raise ConfigError(
                f"CATLAS_SCHEDULING_POLICY={self.scheduling_policy!r} is not one of {choices}"
            )
        if not 0 < self.min_interval_s <= self.max_interval_s:
            raise ConfigError("CATLAS_MIN_INTERVAL_S must be > 0 and <= CATLAS_MAX_INTERVAL_S")
        thresholds = [
            self.minor_threshold,
            self.meaningful_threshold,
            self.major_threshold,
            self.critical_threshold,
        ]
        if thresholds != sorted(thresholds) or not all(0 <= t <= 1 for t in thresholds):
            raise ConfigError("change thresholds must rise from minor to critical within [0, 1]")
        for name in _POSITIVE:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{ENV_PREFIX}{name.upper()} must be positive")
        for name in _NOT_NEGATIVE:
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{ENV_PREFIX}{name.upper()} must be >= 0")
        for name in ("observe_workers", "lanes"):
            if getattr(self, name) < -1:
                raise ConfigError(f"{ENV_PREFIX}{name.upper()} must be -1 (automatic) or >= 0")
        if not self.onboarding_claim_timeout_s > self.discovery_budget_s:
            # A shorter lease would hand a company still being discovered to a second worker.
            raise ConfigError(
                "CATLAS_ONBOARDING_CLAIM_TIMEOUT_S must be above CATLAS_DISCOVERY_BUDGET_S"
            )
        try:
            ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(
                f"CATLAS_TZ={self.tz!r} is not a time zone (e.g. UTC, Europe/Berlin)"
            ) from None
        if not 0 < self.ui_port <= 65535:
            raise ConfigError("CATLAS_UI_PORT must be a port number (1 to 65535)")
        if not 0 <= self.max_error_rate <= 1:
            raise ConfigError("CATLAS_MAX_ERROR_RATE must be within [0, 1]")
        if self.burst_decay <= 1 or self.stability_growth < 1:
            # A decay factor <= 1 would keep a sensor in its burst interval forever.
            raise ConfigError("CATLAS_BURST_DECAY must be > 1 and CATLAS_STABILITY_GROWTH >= 1")
        if self.notify_max_attempts <= 0 or self.notify_timeout_s <= 0:
            raise ConfigError(
                "CATLAS_NOTIFY_MAX_ATTEMPTS and CATLAS_NOTIFY_TIMEOUT_S must be positive"
            )
        if self.notify_webhook_url and not self.notify_webhook_url.startswith(
            ("http://", "https://")
        ):
            raise ConfigError("CATLAS_NOTIFY_WEBHOOK_URL must be an http(s) URL")
        if self.ca_bundle and not _is_pem(Path(self.ca_bundle)):
            raise ConfigError(f"CATLAS_CA_BUNDLE={self.ca_bundle!r} is not a readable PEM file")
        if any(c in self.user_agent for c in "\r\n\x00") or not self.user_agent.strip():
            # A header with a line break would end the request line; nothing could be sent.
            raise ConfigError("CATLAS_USER_AGENT must be one line of text")
        if self.now and parse_utc_instant(self.now, "CATLAS_NOW").year >= 9000:
            # Schedules add up to a year to the clock; near 9999 every run would overflow.
            raise ConfigError(f"CATLAS_NOW={self.now!r} is too far in the future")
        return self


def _is_pem(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 20)
    except OSError:
        return False
    return b"-----BEGIN CERTIFICATE-----" in head


def current_env(settings: Settings) -> Env:
    """Which deployment this is: the one answer every front asks for."""
    return Env(settings.env)


def check_prod(settings: Settings) -> None:
    """What `CATLAS_ENV=prod` promises: state and lake shared by every machine.

    The embedded defaults (a SQLite file, a lake folder) would silently give each machine
    its own catlas, so production refuses them with one error naming what is missing.
    """
    missing = []
    if not settings.database_url.startswith("postgresql"):
        missing.append("CATLAS_DATABASE_URL must be a PostgreSQL URL (postgresql+psycopg://...)")
    if not settings.lake_url.startswith("s3://"):
        missing.append("CATLAS_LAKE_URL must be an s3:// URL")
    if missing:
        raise ConfigError("CATLAS_ENV=prod: " + "; ".join(missing))


def current_values(settings: Settings) -> list[tuple[str, Any]]:
    """(environment variable, current value) for every setting (`catlas settings`), with
    secrets masked: a password or key in a URL, a token in a query string."""
    return [
        (ENV_PREFIX + name.upper(), masked(value) if isinstance(value, str) else value)
        for name, value in asdict(settings).items()
    ]


SCHEDULING_POLICIES = ("spec", "rate_estimate")

# Settings that must be > 0, and settings that must be >= 0 (validated in this order).
_POSITIVE = (
    "fetch_concurrency",
    "lane_min_batch",
    "site_crawl_concurrency",
    "scheduler_claim_batch",
    "commit_group_runs",
    "fetch_max_bytes",
    "discovery_budget_s",
    "discovery_max_requests",
    "discovery_max_sitemap_urls",
    "discovery_max_sensors_per_company",
    "discovery_max_sitemap_roots",
    "onboarding_batch_size",
    "onboarding_max_attempts",
    "onboarding_concurrency",
    "onboarding_every_ticks",
    "max_consecutive_failures",
    "min_requests_for_error_rate",
    "max_concurrent_crawl_runs",
    "ui_port",
    "dagster_run_retention_days",
    "domain_concurrency",
    "domain_daily_budget",
    "domain_budget_lease",
    "robots_ttl_s",
    "robots_recheck_batch",
    "repair_max_requests",
    "repair_batch",
    # Zero or less would break every run: no fetch could finish, or ticks would spin.
    "fetch_connect_timeout_s",
    "fetch_read_timeout_s",
    "fetch_total_timeout_s",
    "parse_timeout_s",
    "scheduler_tick_s",
    "claim_timeout_s",
)
_NOT_NEGATIVE = (
    "fetch_retries",
    "domain_spacing_s",
    "crawl_delay_max_s",
    "retry_after_max_s",
    "robots_unavailable_retry_s",
    "discovery_max_sitemap_children",
    "discovery_max_probes",
    "discovery_max_subdomain_gets",
    "discovery_max_ats_verifications",
    "discovery_ats_reserve",
    "onboarding_retry_backoff_s",
    "repair_cooldown_s",
    "repair_simhash_max_distance",
    "repair_min_ratio",
    "commit_group_ms",
    "max_redirects",
)


def documented_settings() -> list[tuple[str, Any, str]]:
    """(environment variable, default, description) for every setting, for the README."""
    return [(ENV_PREFIX + f.name.upper(), f.default, f.metadata["doc"]) for f in fields(Settings)]


def parse_utc_instant(text: str, what: str) -> datetime:
    """Parse an ISO-8601 instant that states UTC (``Z`` or ``+00:00``)."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"{what}={text!r} is not an ISO-8601 instant (e.g. 2026-01-05T08:00:00Z)"
        ) from None
    offset = value.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        raise ConfigError(f"{what}={text!r} must be in UTC (end with Z or +00:00)")
    return value


def _coerce(name: str, raw: str, kind: type) -> Any:
    try:
        if kind is bool:
            lowered = raw.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        if kind is int:
            return int(raw)
        if kind is float:
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError(raw)  # nan or inf: no timeout, interval or rate
            return value
        return raw
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a valid {kind.__name__}") from None


def settings_markdown() -> str:
    """The README's settings table, generated so that the README cannot drift."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, default, doc in documented_settings():
        if isinstance(default, bool):
            shown = f"`{str(default).lower()}`"
        elif default == "":
            shown = "(empty)"
        else:
            shown = f"`{default}`"
        lines.append(f"| `{name}` | {shown} | {doc} |")
    return "\n".join(lines)

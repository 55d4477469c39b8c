"""Every catlas setting in one typed place.

Each field is read from the environment variable ``CATLAS_<FIELD NAME IN UPPER CASE>``;
the ``doc`` metadata is what the README's settings table says. Values are validated when
the settings are built, so a bad value fails at start-up with the variable's name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from catlas_assets.errors import ConfigError

ENV_PREFIX = "CATLAS_"


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
    hosts: str = _setting(
        "",
        "Path of a host map (`ADDR:PORT HOST [HOST ...]` per line). When set, only the listed "
        "hosts resolve and they are exempt from the private-address block.",
    )
    now: str = _setting(
        "", "ISO-8601 UTC instant (e.g. `2026-01-05T08:00:00Z`) that freezes the clock."
    )
    tz: str = _setting("UTC", "Time zone for cron-like periodic tasks.")

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
    fetch_retries: int = _setting(2, "Retries of transient failures within one run.")
    fetch_concurrency: int = _setting(16, "Sensors fetched at once by one worker.")
    max_redirects: int = _setting(10, "Redirect hops followed before REDIRECT.")

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
    stale_after_failures: int = _setting(6, "Consecutive failures that make a sensor stale.")
    retire_after_failures: int = _setting(30, "Consecutive failures that retire a sensor.")

    # -- change classification ---------------------------------------------------------
    minor_threshold: float = _setting(0.02, "Significance from which a change is minor.")
    meaningful_threshold: float = _setting(0.10, "Significance from which it is meaningful.")
    major_threshold: float = _setting(0.40, "Significance from which it is major.")
    critical_threshold: float = _setting(0.80, "Significance from which it is critical.")
    keep_noise_snapshots: bool = _setting(False, "Write a snapshot even for pure noise.")
    extracted_max_items: int = _setting(300, "Items per list kept in `snapshots.extracted`.")
    extracted_max_bytes: int = _setting(900_000, "Size cap of `snapshots.extracted`.")

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
        for name in ("fetch_concurrency", "scheduler_claim_batch", "fetch_max_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{ENV_PREFIX}{name.upper()} must be positive")
        if self.fetch_retries < 0:
            raise ConfigError("CATLAS_FETCH_RETRIES must be >= 0")
        return self


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
            return float(raw)
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

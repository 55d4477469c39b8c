"""Settings.from_env: CATLAS_* variables, typed, validated, naming the variable at fault."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from catlas_assets.errors import ConfigError
from catlas_assets.settings import Settings, parse_utc_instant


def test_from_env_reads_catlas_variables_and_coerces_their_types() -> None:
    settings = Settings.from_env(
        {
            "CATLAS_FETCH_RETRIES": "5",
            "CATLAS_BURST_DECAY": "1.5",
            "CATLAS_KEEP_NOISE_SNAPSHOTS": "yes",
            "CATLAS_TZ": "Europe/Paris",
            "CATLAS_MAX_INTERVAL_S": " 86400 ",
            "FETCH_RETRIES": "99",  # no prefix: not ours
            "CATLAS_NOT_A_SETTING": "x",
        }
    )
    assert settings.fetch_retries == 5
    assert settings.burst_decay == 1.5
    assert settings.keep_noise_snapshots is True
    assert settings.tz == "Europe/Paris"
    assert settings.max_interval_s == 86400
    assert settings.min_interval_s == Settings().min_interval_s


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("TRUE", True), ("on", True), ("0", False), ("No", False), ("", False)],
)
def test_boolean_spellings_are_understood(raw: str, expected: bool) -> None:
    settings = Settings.from_env({"CATLAS_KEEP_NOISE_SNAPSHOTS": raw})
    assert settings.keep_noise_snapshots is expected


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("CATLAS_FETCH_RETRIES", "two"),
        ("CATLAS_FETCH_RETRIES", "1.5"),
        ("CATLAS_MIN_INTERVAL_S", ""),
        ("CATLAS_KEEP_NOISE_SNAPSHOTS", "maybe"),
        ("CATLAS_BURST_DECAY", "fast"),
        ("CATLAS_FETCH_TOTAL_TIMEOUT_S", "60s"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_variable(name: str, raw: str) -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({name: raw})
    assert name in str(refused.value)
    assert repr(raw) in str(refused.value)


@pytest.mark.parametrize(
    "raw",
    [
        "2026-01-05T08:00:00+01:00",
        "2026-01-05T08:00:00-05:00",
        "2026-01-05T08:00:00",
        "2026-01-05",
        "yesterday",
        "05/01/2026 08:00",
    ],
)
def test_catlas_now_must_be_an_iso_utc_instant(raw: str) -> None:
    with pytest.raises(ConfigError, match="CATLAS_NOW"):
        Settings.from_env({"CATLAS_NOW": raw})


@pytest.mark.parametrize("raw", ["2026-01-05T08:00:00Z", "2026-01-05T08:00:00+00:00"])
def test_catlas_now_in_utc_freezes_the_clock(raw: str) -> None:
    settings = Settings.from_env({"CATLAS_NOW": raw})
    assert settings.frozen_now == datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    assert Settings.from_env({}).frozen_now is None


def test_parse_utc_instant_names_what_it_parses() -> None:
    with pytest.raises(ConfigError, match="--since"):
        parse_utc_instant("tomorrow", "--since")


@pytest.mark.parametrize(
    "environ",
    [
        {"CATLAS_MINOR_THRESHOLD": "0.5"},  # above meaningful (0.10)
        {"CATLAS_MAJOR_THRESHOLD": "0.9"},  # above critical (0.80)
        {"CATLAS_CRITICAL_THRESHOLD": "1.5"},
        {"CATLAS_MINOR_THRESHOLD": "-0.1"},
    ],
)
def test_change_thresholds_must_rise_within_zero_and_one(environ: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="thresholds"):
        Settings.from_env(environ)


def test_interval_bounds_must_be_ordered_and_positive() -> None:
    with pytest.raises(ConfigError, match="CATLAS_MIN_INTERVAL_S"):
        Settings.from_env({"CATLAS_MIN_INTERVAL_S": "900", "CATLAS_MAX_INTERVAL_S": "600"})
    with pytest.raises(ConfigError, match="CATLAS_MIN_INTERVAL_S"):
        Settings.from_env({"CATLAS_MIN_INTERVAL_S": "0"})
    with pytest.raises(ConfigError, match="CATLAS_FETCH_CONCURRENCY"):
        Settings.from_env({"CATLAS_FETCH_CONCURRENCY": "0"})


def test_overrides_are_validated_too() -> None:
    with pytest.raises(ConfigError, match="CATLAS_FETCH_RETRIES"):
        Settings.from_env({}, fetch_retries=-1)
    assert Settings.from_env({"CATLAS_FETCH_RETRIES": "3"}, fetch_retries=0).fetch_retries == 0


def test_from_env_reads_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CATLAS_SCHEDULER_CLAIM_BATCH", "42")
    assert Settings.from_env().scheduler_claim_batch == 42


def test_sqlite_and_lake_default_under_the_state_dir(tmp_path: Path) -> None:
    settings = Settings.from_env({"CATLAS_STATE_DIR": str(tmp_path / "st")})
    assert settings.resolved_database_url == f"sqlite:///{tmp_path / 'st' / 'state.db'}"
    assert settings.resolved_lake_url == str(tmp_path / "st" / "lake")
    assert settings.state_path == tmp_path / "st"


def test_explicit_database_and_lake_urls_win_over_the_defaults() -> None:
    settings = Settings.from_env(
        {
            "CATLAS_DATABASE_URL": "postgresql+psycopg://u@db/catlas",
            "CATLAS_LAKE_URL": "s3://bucket/lake",
        }
    )
    assert settings.resolved_database_url == "postgresql+psycopg://u@db/catlas"
    assert settings.resolved_lake_url == "s3://bucket/lake"


def test_discovery_and_onboarding_numbers_are_settings_with_checked_ranges() -> None:
    settings = Settings.from_env(
        {"CATLAS_DISCOVERY_MAX_PROBES": "0", "CATLAS_ONBOARDING_RETRY_BACKOFF_S": "60"}
    )
    assert settings.discovery_max_probes == 0 and settings.onboarding_retry_backoff_s == 60
    with pytest.raises(ConfigError, match="CATLAS_DISCOVERY_MAX_SUBDOMAIN_GETS"):
        Settings.from_env({"CATLAS_DISCOVERY_MAX_SUBDOMAIN_GETS": "-1"})
    with pytest.raises(ConfigError, match="CATLAS_ONBOARDING_CONCURRENCY"):
        Settings.from_env({"CATLAS_ONBOARDING_CONCURRENCY": "0"})
    # A discover job's lease shorter than one discovery would hand it to a second worker.
    with pytest.raises(ConfigError, match="CATLAS_ONBOARDING_CLAIM_TIMEOUT_S"):
        Settings.from_env({"CATLAS_ONBOARDING_CLAIM_TIMEOUT_S": "60"})

"""Settings that would break every run are refused at start-up, with one line naming them."""

from __future__ import annotations

from pathlib import Path

import pytest

from catlas_assets.errors import ConfigError
from catlas_assets.settings import Settings


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("CATLAS_FETCH_TOTAL_TIMEOUT_S", "nan", "not a valid float"),
        ("CATLAS_FETCH_TOTAL_TIMEOUT_S", "inf", "not a valid float"),
        ("CATLAS_FETCH_TOTAL_TIMEOUT_S", "-1", "must be positive"),
        ("CATLAS_FETCH_READ_TIMEOUT_S", "0", "must be positive"),
        ("CATLAS_MAX_REDIRECTS", "-1", "must be >= 0"),
        ("CATLAS_SCHEDULER_TICK_S", "0", "must be positive"),
        ("CATLAS_USER_AGENT", "catlas/0.1\r\nX-Evil: 1", "one line"),
        ("CATLAS_NOW", "9999-06-01T00:00:00Z", "too far in the future"),
    ],
)
def test_a_setting_that_breaks_every_run_is_refused(name: str, value: str, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({name: value})
    assert name in str(raised.value) and says in str(raised.value)


def test_a_ca_bundle_that_is_not_pem_is_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.crt"
    bundle.write_text("not a certificate")
    with pytest.raises(ConfigError, match="CATLAS_CA_BUNDLE"):
        Settings.from_env({"CATLAS_CA_BUNDLE": str(bundle)})


def test_catlas_settings_masks_secrets() -> None:
    from catlas_assets.settings import current_values

    settings = Settings.from_env(
        {
            "CATLAS_DATABASE_URL": "postgresql+psycopg://user:s3cret@db.internal/catlas",
            "CATLAS_NOTIFY_WEBHOOK_URL": "https://hooks.example/in?token=tok123&x=1",
            "CATLAS_LAKE_URL": "s3://AKIA:wJalr@bucket/prefix",
        }
    )
    shown = " ".join(str(value) for _name, value in current_values(settings))
    for secret in ("s3cret", "tok123", "wJalr"):
        assert secret not in shown
    assert "user:***@db.internal" in shown and "token=***&x=1" in shown

"""What dbt_intel needs from catlas's settings to build over the same lake.

The dbt profile reads the lake and its DuckDB file from the environment; `environment`
gives those variables for a catlas deployment (a local folder or an `s3://` lake through
the profile's fsspec filesystem, never httpfs), and `applied` sets them for the time it
takes to start a dbt process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from catlas_assets.settings import Settings


def environment(settings: Settings) -> dict[str, str]:
    lake = settings.resolved_lake_url
    on_s3 = lake.startswith("s3://")
    duckdb_path = settings.resolved_dbt_duckdb_path.resolve()
    env = {
        "CATLAS_LAKE_URL": lake if on_s3 else str(Path(lake).resolve()),
        "CATLAS_DBT_DUCKDB_PATH": str(duckdb_path),
        "CATLAS_DBT_TARGET": "s3" if on_s3 else "local",
        "DO_NOT_TRACK": "1",
    }
    if settings.s3_endpoint_url:
        env["CATLAS_S3_ENDPOINT_URL"] = settings.s3_endpoint_url
    return env


@contextmanager
def applied(settings: Settings) -> Iterator[dict[str, str]]:
    """The variables set in this process while a dbt invocation starts, then restored."""
    env = environment(settings)
    Path(env["CATLAS_DBT_DUCKDB_PATH"]).parent.mkdir(parents=True, exist_ok=True)
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

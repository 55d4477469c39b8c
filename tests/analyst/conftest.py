"""A demo lake for the analyst's tests: fourteen simulated days, lived once per session.

Tests that change state (a delivery) work on a copy (`demo_copy`), so the shared lake stays
as the demo left it.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from catlas_assets.services.demo import run_demo
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings

DAYS = 12


@pytest.fixture(scope="session")
def demo_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The state folder (SQLite file and lake) of a fourteen-day demo."""
    state = tmp_path_factory.mktemp("analyst-demo") / ".catlas"
    result = run_demo(Settings(state_dir=str(state)), days=DAYS)
    assert result.changes, "the demo detected no change"
    return state


@pytest.fixture
def demo_copy(demo_state: Path, tmp_path: Path) -> Path:
    copy = tmp_path / ".catlas"
    shutil.copytree(demo_state, copy)
    return copy


@pytest.fixture
def demo_runtime(demo_state: Path) -> Iterator[Runtime]:
    runtime = Runtime(Settings(state_dir=str(demo_state)))
    try:
        yield runtime
    finally:
        runtime.close()


AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="session")
def s3_demo_lake(demo_state: Path) -> Iterator[tuple[str, str]]:
    """The demo lake's tables copied to a bucket on a local S3 server: (lake URL, endpoint)."""
    import fsspec
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in AWS_ENV.items():
            patch.setenv(name, value)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            endpoint = f"http://{host}:{port}"
            fs = fsspec.filesystem("s3", client_kwargs={"endpoint_url": endpoint})
            fs.mkdir("analyst-demo")
            lake = demo_state / "lake"
            for path in lake.rglob("*.parquet"):
                fs.put_file(str(path), f"analyst-demo/lake/{path.relative_to(lake).as_posix()}")
            yield "s3://analyst-demo/lake", endpoint
        finally:
            server.stop()

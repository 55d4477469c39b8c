"""The servers a run depends on go away mid-run and come back: nothing is lost, the outbox
drains once they answer again, and the run ends with a verdict (never a traceback).

PostgreSQL: restarting the local cluster would disturb every other user of the server, so
the test does what a restart does to a client instead: it terminates every backend
connection of the run's database (`pg_terminate_backend`) while the run is fetching.
S3: the moto server (as tests/lake/conftest.py starts it) is stopped mid-run and started
again on the same port, with the bucket made anew (moto keeps nothing across a restart).
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import psycopg
import pytest
from moto.server import ThreadedMotoServer
from sqlalchemy.engine import make_url

from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb
from tests.chaos.invariants import broken, measure
from tests.chaos.mesh_site import HOST, mesh_root
from tests.chaos.processes import catlas_env, run, start
from tests.chaos.test_killed_runs import watch_the_mesh
from tests.conftest import PG_ADMIN_URL, reset_postgres
from tests.lake.conftest import AWS_ENV

PAGES = 40
VERDICTS = ("failed", "partial", "success")


@pytest.fixture(scope="module")
def slow_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureWeb]:
    with FixtureWeb(root=mesh_root(tmp_path_factory.mktemp("mesh"), PAGES, 150)) as web:
        yield web


def _page_requests(web: FixtureWeb) -> int:
    return sum(1 for r in web.requests if r.host == HOST and r.path.startswith("/p/"))


def _wait_for(web: FixtureWeb, proc: subprocess.Popen[str], count: int) -> None:
    deadline = time.monotonic() + 60
    while _page_requests(web) < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _ends_with_a_verdict(proc: subprocess.Popen[str]) -> str:
    """The verdict the run printed (a run that got past the fault may well succeed), or
    the one error line of exit 3 when the fault hit a write it could not redo (the run's
    row then gets its verdict from the next worker, which `measure` checks)."""
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in out + err, err
    if proc.returncode == 3:
        [line] = err.splitlines()
        assert line.startswith("catlas: error:"), line
        return "error"
    verdict = re.search(r"verdict: (\w+)", out + err)
    assert verdict is not None and verdict.group(1) in VERDICTS, out + err
    return verdict.group(1)


def terminate_backends(database: str) -> int:
    """What a PostgreSQL restart does to the run: every connection to `database` is cut."""
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            [database],
        ).fetchall()
    return len(rows)


def _settled(env: dict[str, str]) -> tuple[Runtime, int]:
    """A tick after the fault (what a restarted daemon does), then the invariants."""
    done = run(env, "schedule", "--once")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done
    runtime = Runtime(Settings.from_env(env))
    found = measure(runtime)
    assert broken(found) == {}
    return runtime, found["rows checked"]


@pytest.mark.postgres
def test_connections_cut_mid_run_lose_nothing(
    slow_mesh: FixtureWeb, tmp_path: Path, postgres_database: str
) -> None:
    reset_postgres(postgres_database)
    env = catlas_env(tmp_path, slow_mesh, postgres_database, CATLAS_DOMAIN_CONCURRENCY="4")
    runtime = Runtime(Settings.from_env(env))
    watch_the_mesh(runtime)
    runtime.close()
    before = _page_requests(slow_mesh)
    proc = start(env, "schedule", "--once")
    _wait_for(slow_mesh, proc, before + PAGES // 3)

    cut = terminate_backends(str(make_url(postgres_database).database))

    assert cut >= 1  # the run was connected: the fault hit it
    _ends_with_a_verdict(proc)
    runtime, rows = _settled(env)
    try:
        assert rows == PAGES  # every page observed once, the cut run's included
    finally:
        runtime.close()


@pytest.fixture
def s3_port() -> int:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server.get_host_and_port()[1]
    server.stop()
    return port


def _bucket(port: int, name: str) -> None:
    client = boto3.client(
        "s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
    )  # fmt: skip
    if name not in {b["Name"] for b in client.list_buckets()["Buckets"]}:
        client.create_bucket(Bucket=name)


def _last_tick(env: dict[str, str]) -> dict:
    runtime = Runtime(Settings.from_env(env))
    try:
        return runtime.store.runs(limit=1, kind="tick")[0]
    finally:
        runtime.close()


def test_the_s3_server_stopped_mid_run_loses_nothing(
    slow_mesh: FixtureWeb, tmp_path: Path, s3_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in AWS_ENV.items():  # this process reads the lake too
        monkeypatch.setenv(name, value)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=s3_port, verbose=False)
    server.start()
    _bucket(s3_port, "chaos")
    env = catlas_env(
        tmp_path, slow_mesh, f"sqlite:///{tmp_path / 'state.db'}",
        CATLAS_DOMAIN_CONCURRENCY="4", CATLAS_LAKE_URL="s3://chaos/lake",
        CATLAS_S3_ENDPOINT_URL=f"http://127.0.0.1:{s3_port}", **AWS_ENV,
        AWS_MAX_ATTEMPTS="1",  # a refused connection is not retried: the test stays short
    )  # fmt: skip
    runtime = Runtime(Settings.from_env(env))
    watch_the_mesh(runtime)
    runtime.close()
    before = _page_requests(slow_mesh)
    proc = start(env, "schedule", "--once")
    _wait_for(slow_mesh, proc, before + PAGES // 3)

    server.stop()  # the archive writes and the lake flush now find no server

    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, (out, err)  # the environment failed: one line, exit 3
    [line] = err.splitlines()
    assert line.startswith("catlas: error: cannot write to the lake"), line
    tick = _last_tick(env)
    assert (tick["stop"], tick["outcome"]) == ("error", "failed")
    # The same port again (the same process keeps moto's objects, as a real server would).
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=s3_port, verbose=False)
    server.start()
    try:
        _bucket(s3_port, "chaos")
        # The outbox drains, the released sensors run; as a restarted daemon, with the
        # default retries (a 500 from the busy test server is retried, as from a real one).
        restarted = {k: v for k, v in env.items() if k != "AWS_MAX_ATTEMPTS"}
        runtime, rows = _settled(restarted)
        runtime.close()
    finally:
        server.stop()
    assert rows == PAGES

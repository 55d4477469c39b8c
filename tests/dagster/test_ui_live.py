"""`catlas ui` for real: the webserver and the daemon over a small demo-like state, the code
location LOADED with its assets, jobs, sensors and schedules over GraphQL, and a reprocess
backfill of three hours submitted through GraphQL that the daemon runs to success."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb
from resources.clock import VirtualClock

# On an idle 2-core machine the whole test takes about two minutes; the bounds are wide.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = (
    600  # a bound on waiting for the servers (minutes on a loaded machine), not a timing assertion
)

LOCATION = """
{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus
  locationOrLoadError { ... on RepositoryLocation { repositories {
    name jobs { name } sensors { name } schedules { name }
    assetNodes { assetKey { path } } } } } } } } }
"""
LAUNCH = """
mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
  __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }
"""
BACKFILL = """
query($id: String!) { partitionBackfillOrError(backfillId: $id) {
  ... on PartitionBackfill { status runs(limit: 10) { status tags { key value } } } } }
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _graphql(base: str, query: str, variables: dict | None = None) -> dict:
    answer = httpx.post(
        f"{base}/graphql", json={"query": query, "variables": variables or {}}, timeout=30
    )
    answer.raise_for_status()
    body = answer.json()
    assert "errors" not in body, body
    return body["data"]


def _wait_for(check, what: str, process: subprocess.Popen) -> object:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, "catlas ui exited early"
        try:
            found = check()
        except (httpx.HTTPError, KeyError, TypeError, ValueError):
            found = None
        if found:
            return found
        time.sleep(1)
    pytest.fail(f"gave up waiting for {what}")


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """Kestrel Labs watched once two hours ago (the UI runs on the wall clock, and an hourly
    partition exists once its hour has ended)."""
    state = tmp_path / ".catlas"
    now = datetime.now(UTC) - timedelta(hours=2)
    with FixtureWeb(now=now) as web:
        hosts = web.write_hosts_file(tmp_path / "seed-hosts")
        runtime = Runtime(
            Settings(state_dir=str(state), hosts=str(hosts), domain_spacing_s=0),
            clock=VirtualClock(now),
        )
        try:
            company = catalog.add_company(
                runtime, name="Kestrel Labs", website="http://kestrel-labs.com", tier=1
            )
            for surface in ("pricing", "careers"):
                sensor = catalog.add_sensor(
                    runtime,
                    company_id=company,
                    surface=surface,
                    url=f"http://kestrel-labs.com/{surface}",
                )
                run_one(runtime, sensor, force=True)
        finally:
            runtime.close()
    return state


def test_ui_serves_the_location_and_runs_a_reprocess_backfill(state: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(CATLAS_STATE_DIR=str(state), CATLAS_UI_PORT=str(port), DAGSTER_HOME="")
    env.pop("DAGSTER_HOME")
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("catlas")), "ui"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def loaded() -> dict | None:
            entries = _graphql(base, LOCATION)["workspaceOrError"]["locationEntries"]
            return entries[0] if entries and entries[0]["loadStatus"] == "LOADED" else None

        entry = _wait_for(loaded, "the code location", process)
        assert entry["name"] == "catlas"  # type: ignore[index]
        [repo] = entry["locationOrLoadError"]["repositories"]  # type: ignore[index]
        assets = {"/".join(a["assetKey"]["path"]) for a in repo["assetNodes"]}
        assert {"observations", "snapshots", "changes", "entity_events", "entities"} <= assets
        assert {"crawl_tick", "reprocess", "maintenance"} <= {j["name"] for j in repo["jobs"]}
        assert "due_sensors" in {s["name"] for s in repo["sensors"]}
        assert {"compact_lake_schedule", "maintenance_schedule"} <= {
            s["name"] for s in repo["schedules"]
        }

        hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        keys = [(hour - timedelta(hours=h)).strftime("%Y-%m-%d-%H:00") for h in (3, 2, 1)]
        params = {
            "selector": {
                "partitionSetName": "reprocess_partition_set",
                "repositorySelector": {
                    "repositoryLocationName": "catlas",
                    "repositoryName": repo["name"],
                },
            },
            "partitionNames": keys,
        }
        launched = _graphql(base, LAUNCH, {"params": params})["launchPartitionBackfill"]
        assert launched["__typename"] == "LaunchBackfillSuccess", launched
        backfill_id = launched["backfillId"]

        def finished() -> dict | None:
            backfill = _graphql(base, BACKFILL, {"id": backfill_id})["partitionBackfillOrError"]
            runs = backfill["runs"]
            done = runs and all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs)
            return backfill if backfill["status"] != "REQUESTED" and done else None

        backfill = _wait_for(finished, "the reprocess backfill", process)
        statuses = [r["status"] for r in backfill["runs"]]  # type: ignore[index]
        assert statuses and set(statuses) == {"SUCCESS"}, backfill
        outcomes = {
            t["value"]
            for r in backfill["runs"]  # type: ignore[index]
            for t in r["tags"]
            if t["key"] == "catlas/outcome"
        }
        assert outcomes == {"success"}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

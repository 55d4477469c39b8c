"""`catlas ui` for real: the webserver and the daemon over a small demo-like state, the code
location LOADED with its assets, jobs, sensors and schedules over GraphQL, and two backfills
of three hours submitted through GraphQL that the daemon runs to success: the `reprocess`
job's and one of the history assets. Each is ONE run (the assets' single-run backfill
policy), and the instance it wrote holds one materialization per hour with that hour's own
figures (the ones `catlas sql` counts) and one check evaluation per hour."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import httpx
import pytest
from click.testing import CliRunner

from catlas_assets.cli import cli
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb
from resources.clock import VirtualClock
from tests.dagster.watched_hour import fetch_kestrel_pages

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
def seeded(tmp_path: Path) -> tuple[Path, datetime]:
    """Kestrel Labs watched once two hours ago (the UI runs on the wall clock, and an hourly
    partition exists once its hour has ended): the state and the hour it was watched in."""
    state = tmp_path / ".catlas"
    now = datetime.now(UTC) - timedelta(hours=2)
    with FixtureWeb(now=now) as web:
        hosts = web.write_hosts_file(tmp_path / "seed-hosts")
        runtime = Runtime(
            Settings(state_dir=str(state), hosts=str(hosts), domain_spacing_s=0),
            clock=VirtualClock(now),
        )
        try:
            fetch_kestrel_pages(runtime)
        finally:
            runtime.close()
    return state, now.replace(minute=0, second=0, microsecond=0)


def _backfill(base: str, params: dict, process: subprocess.Popen) -> dict:
    """Launch a backfill over GraphQL and wait until the daemon has run all its runs."""
    launched = _graphql(base, LAUNCH, {"params": params})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    backfill_id = launched["backfillId"]

    def finished() -> dict | None:
        backfill = _graphql(base, BACKFILL, {"id": backfill_id})["partitionBackfillOrError"]
        runs = backfill["runs"]
        done = runs and all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs)
        return backfill if backfill["status"] not in ("REQUESTED",) and done else None

    return _wait_for(finished, f"backfill {backfill_id}", process)  # type: ignore[return-value]


def _one_run(backfill: dict, keys: list[str]) -> dict[str, str]:
    """The backfill ran as one run over the whole range; that run's tags."""
    (run,) = backfill["runs"]
    assert run["status"] == "SUCCESS", backfill
    tags = {t["key"]: t["value"] for t in run["tags"]}
    assert tags["dagster/asset_partition_range_start"] == keys[0]
    assert tags["dagster/asset_partition_range_end"] == keys[-1]
    return tags


def _per_hour(instance: dg.DagsterInstance, asset: str, run_id: str) -> dict[str, dict]:
    records = instance.fetch_materializations(dg.AssetKey(asset), limit=1000).records
    found = {}
    for record in records:
        if record.run_id == run_id:
            mat = record.asset_materialization
            assert mat is not None and mat.partition is not None
            found[mat.partition] = {k: v.value for k, v in mat.metadata.items()}
    return found


def _sql_per_hour(state: Path, table: str, column: str) -> dict[str, int]:
    query = (
        f"SELECT strftime(timezone('UTC', {column}), '%Y-%m-%d-%H:00') AS hour, count(*) AS n FROM {table} "
        "GROUP BY 1 ORDER BY 1"
    )
    shown = CliRunner().invoke(
        cli, ["sql", "--format", "json", query], env={"CATLAS_STATE_DIR": str(state)}
    )
    assert shown.exit_code == 0, shown.output
    return {row["hour"]: row["n"] for row in json.loads(shown.output)}


def test_ui_serves_the_location_and_runs_single_run_backfills(
    seeded: tuple[Path, datetime],
) -> None:
    state, seeded_hour = seeded
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

        # The hour the sensors were watched in, between two empty hours.
        keys = [(seeded_hour + timedelta(hours=h)).strftime("%Y-%m-%d-%H:00") for h in (-1, 0, 1)]
        repository = {"repositoryLocationName": "catlas", "repositoryName": repo["name"]}
        reprocessed = _backfill(
            base,
            {
                "selector": {
                    "partitionSetName": "reprocess_partition_set",
                    "repositorySelector": repository,
                },
                "partitionNames": keys,
            },
            process,
        )
        reprocess_tags = _one_run(reprocessed, keys)
        assert reprocess_tags["catlas/outcome"] == "success"
        compacted = _backfill(
            base,
            {
                "assetSelection": [{"path": [t]} for t in ("observations", "snapshots")],
                "partitionNames": keys,
            },
            process,
        )
        compact_tags = _one_run(compacted, keys)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

    # What the daemon's runs wrote, read back from the instance once the servers are down.
    with dg.DagsterInstance.from_config(str(state / "dagster")) as instance:
        runs = {r.tags.get("dagster/backfill"): r.run_id for r in instance.get_runs()}
        reprocess_run = runs[reprocess_tags["dagster/backfill"]]
        compact_run = runs[compact_tags["dagster/backfill"]]
        snapshots = _sql_per_hour(state, "snapshots", "captured_at")
        observations = _sql_per_hour(state, "observations", "fetched_at")
        assert snapshots[keys[1]] == 2 and observations[keys[1]] == 2

        rederived = _per_hour(instance, "snapshots", reprocess_run)
        assert sorted(rederived) == keys
        for key in keys:
            assert rederived[key]["rows"] == snapshots.get(key, 0)
            assert rederived[key]["snapshots/rows_old"] == rederived[key]["snapshots/rows_new"]
        for asset, counted in (("observations", observations), ("snapshots", snapshots)):
            hours = _per_hour(instance, asset, compact_run)
            assert {key: hours[key]["rows"] for key in keys} == {
                key: counted.get(key, 0) for key in keys
            }, asset
        assert _per_hour(instance, "observations", compact_run)[keys[0]]["bytes"] == 0

        evaluations = instance.get_records_for_run(
            reprocess_run, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION, limit=1000
        ).records
        checked = {
            (
                e.event_log_entry.dagster_event.asset_check_evaluation_data.check_name,
                e.event_log_entry.dagster_event.asset_check_evaluation_data.partition,
            )
            for e in evaluations
        }
        assert {("snapshots_unique_ids", key) for key in keys} <= checked

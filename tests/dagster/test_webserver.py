"""The real Dagster webserver loads the code location from workspace.yaml (what `make ui`
starts): the workspace entry reports LOADED and the GraphQL API lists the crawl job."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE_QUERY = """
{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus
  locationOrLoadError { ... on RepositoryLocation { repositories { jobs { name } } } } } } } }
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_webserver_loads_the_code_location(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    port = _free_port()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "CATLAS_STATE_DIR": str(tmp_path / "state"),
        "DO_NOT_TRACK": "1",
    }
    webserver = Path(sys.executable).parent / "dagster-webserver"
    process = subprocess.Popen(
        [str(webserver), "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        entries: list[dict] = []
        while time.monotonic() < deadline:
            assert process.poll() is None, "dagster-webserver exited early"
            try:
                answer = httpx.post(f"{base}/graphql", json={"query": WORKSPACE_QUERY}, timeout=5)
                entries = answer.json()["data"]["workspaceOrError"]["locationEntries"]
                if entries and entries[0]["loadStatus"] == "LOADED":
                    break
            except (httpx.HTTPError, KeyError, TypeError, ValueError):
                pass
            time.sleep(1)
        assert [(e["name"], e["loadStatus"]) for e in entries] == [("catlas", "LOADED")]
        repositories = entries[0]["locationOrLoadError"]["repositories"]
        jobs = {job["name"] for repo in repositories for job in repo["jobs"]}
        assert {"crawl_tick", "compact_lake"} <= jobs
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_dagster_definitions_validate_passes(tmp_path: Path) -> None:
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "CATLAS_STATE_DIR": str(tmp_path / "s")}
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    dagster = str(Path(sys.executable).parent / "dagster")
    result = subprocess.run(
        [dagster, "definitions", "validate", "-w", "workspace.yaml"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "All code locations passed validation" in result.stdout + result.stderr

"""`catlas ui` (`make ui`): the Dagster webserver and daemon over the demo's state and lake.

The daemon is what runs launched runs, backfills, schedules and sensors; the webserver alone
leaves them queued. The fixture web serves meanwhile (its clock following the wall clock,
less the demo's calendar shift) and `CATLAS_HOSTS` points at it, so a crawl tick launched
from the UI reaches the demo's sites. Ctrl+C (or SIGTERM) stops all three.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType

import click

from catlas_assets.cli.app import Context, cli, console, pass_context
from catlas_assets.option_types import PORT

PROJECT = Path(__file__).resolve().parents[2]
DEMO_INSTANCE = PROJECT / "dagster_home" / "dagster.yaml"
POLL_S = 1.0  # how soon a stop or an ended process is noticed; the web's clock follows
STOP_TIMEOUT_S = 30.0


def _tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _environment(state: Path, home: Path, hosts: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CATLAS_NOW"}  # the wall clock
    env.update(
        DAGSTER_HOME=str(home),
        CATLAS_STATE_DIR=str(state),
        CATLAS_HOSTS=str(hosts),
        # The fixture web is on this machine: no need to space requests by seconds.
        CATLAS_DOMAIN_SPACING_S=os.environ.get("CATLAS_DOMAIN_SPACING_S", "0.05"),
        DO_NOT_TRACK="1",
    )
    return env


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@cli.command("ui")
@click.option("--port", type=PORT, default=None, help="Port on 127.0.0.1 (default CATLAS_UI_PORT).")
@pass_context
def ui(obj: Context, port: int | None) -> None:
    """Start the Dagster webserver and daemon over the demo's state; Ctrl+C stops them."""
    from catlas_assets.services.demo import demo_shift_days
    from fixture_web import FixtureWeb

    settings = obj.settings
    port = port or settings.ui_port
    state = settings.state_path.resolve()
    home = Path(os.environ.get("DAGSTER_HOME") or state / "dagster").resolve()
    home.mkdir(parents=True, exist_ok=True)
    # The project's instance file under the project home; a home set elsewhere keeps its own.
    if home == state / "dagster" or not (home / "dagster.yaml").exists():
        shutil.copyfile(DEMO_INSTANCE, home / "dagster.yaml")
    shift = timedelta(days=demo_shift_days(state))
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    with FixtureWeb(now=datetime.now(UTC) - shift) as web:
        hosts = web.write_hosts_file(state / "fixture-hosts")
        env = _environment(state, home, hosts)
        workspace = str(PROJECT / "workspace.yaml")
        processes = [
            subprocess.Popen(
                [_tool("dagster-webserver"), "-w", workspace, "-h", "127.0.0.1", "-p", str(port)],
                env=env,
                cwd=PROJECT,
            ),
            subprocess.Popen(
                [_tool("dagster-daemon"), "run", "-w", workspace], env=env, cwd=PROJECT
            ),
        ]
        console.print(
            f"Dagster UI: http://127.0.0.1:{port} (DAGSTER_HOME {home}); fixture web at "
            f"{web.address}, CATLAS_HOSTS={hosts}. Ctrl+C stops."
        )
        try:
            while not stopping.wait(POLL_S):
                web.set_now(datetime.now(UTC) - shift)
                if any(p.poll() is not None for p in processes):
                    console.print("a Dagster process ended: stopping the others")
                    break
        finally:
            _stop(processes)

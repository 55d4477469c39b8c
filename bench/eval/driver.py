"""Run catlas on the corpus as a new user would: the `catlas` command in a fresh state dir,
the fixture web serving the corpus, a virtual clock moved step by step."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fixture_web import EPOCH, FixtureWeb

CATLAS = Path(sys.executable).with_name("catlas")
COMMAND_TIMEOUT_S = 600
# The fixture web runs on this machine while weeks pass on a virtual clock: the real-time
# spacing between two requests to one domain is shortened, as `catlas demo` does.
DOMAIN_SPACING_S = "0.05"
DUE_STATUSES = ("active", "failing", "pending", "blocked")


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Command:
    args: tuple[str, ...]
    now: str
    code: int
    seconds: float
    err: str


@dataclass
class RunLog:
    commands: list[Command] = field(default_factory=list)
    ticks: int = 0
    skipped_steps: int = 0
    onboarding_batches: int = 0

    def failures(self) -> list[Command]:
        """Commands that did not finish as a command should (bad input, environment, crash)."""
        return [c for c in self.commands if c.code not in (0, 1)]


class Catlas:
    """The console script with one state dir, one hosts file and a settable virtual now."""

    def __init__(self, state_dir: Path, hosts: Path, log: RunLog) -> None:
        self.state_dir = state_dir
        self.log = log
        cache = Path(tempfile.gettempdir()) / f"catlas-eval-pycache-{os.getuid()}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
        self.env.update(
            CATLAS_STATE_DIR=str(state_dir),
            CATLAS_HOSTS=str(hosts),
            CATLAS_DOMAIN_SPACING_S=DOMAIN_SPACING_S,
            COLUMNS="250",
            PYTHONPYCACHEPREFIX=str(cache),
        )

    def run(self, now: datetime, *args: str) -> Command:
        started = time.monotonic()
        done = subprocess.run(
            [str(CATLAS), *args],
            env={**self.env, "CATLAS_NOW": iso(now)},
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        command = Command(
            tuple(args), iso(now), done.returncode, time.monotonic() - started, done.stderr
        )
        self.log.commands.append(command)
        return command

    # -- what the state says, to know when to stop or skip ------------------------------

    def _scalar(self, query: str, *params: object) -> object:
        db = self.state_dir / "state.db"
        if not db.exists():
            return None
        con = sqlite3.connect(db)
        try:
            row = con.execute(query, params).fetchone()
            return row[0] if row else None
        finally:
            con.close()

    def due_discover_jobs(self, now: datetime) -> int:
        value = self._scalar(
            "SELECT count(*) FROM queue_jobs WHERE kind = 'discover' AND status = 'pending' AND run_after <= ?",
            now.strftime("%Y-%m-%d %H:%M:%S.%f"),
        )
        return int(str(value or 0))

    def next_due(self) -> datetime | None:
        marks = ",".join("?" * len(DUE_STATUSES))
        value = self._scalar(
            f"SELECT min(next_run_at) FROM sensors WHERE status IN ({marks})", *DUE_STATUSES
        )
        if value is None:
            return None
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def live(
    corpus: Path,
    state_dir: Path,
    *,
    days: int,
    step: timedelta,
    on_day: Callable[[int, RunLog], None],
) -> tuple[RunLog, FixtureWeb]:
    """Import, onboard, then tick through `days` simulated days. The web is returned stopped,
    with its request log."""
    log = RunLog()
    web = FixtureWeb(root=corpus / "web", now=EPOCH + timedelta(hours=8))
    web.start()
    try:
        hosts = web.write_hosts_file(state_dir.parent / "fixture-hosts")
        catlas = Catlas(state_dir, hosts, log)
        start = EPOCH + timedelta(hours=8)
        catlas.run(start, "companies", "import", str(corpus / "companies.csv"))
        onboard(catlas, start, log)
        now = start + step
        end = EPOCH + timedelta(days=days)
        last_day = -1
        while now < end:
            web.set_now(now)
            day = (now - EPOCH).days
            if day != last_day:
                # The daemon runs an onboarding batch every few ticks; once a day is enough
                # here for retries that became due.
                if day > 0 and catlas.due_discover_jobs(now):
                    onboard(catlas, now, log)
                on_day(day, log)
                last_day = day
            due = catlas.next_due()
            if due is None or due <= now:
                catlas.run(now, "schedule", "--once")
                log.ticks += 1
            else:
                log.skipped_steps += 1  # nothing due: a tick would claim nothing
            now += step
    finally:
        web.stop()
    return log, web


def onboard(catlas: Catlas, now: datetime, log: RunLog, limit: int = 10) -> None:
    """`catlas onboard --pending` until no discover job is due (or `limit` batches)."""
    for n in range(limit):
        at = now + timedelta(seconds=n)
        if not catlas.due_discover_jobs(at):
            return
        catlas.run(at, "onboard", "--pending")
        log.onboarding_batches += 1

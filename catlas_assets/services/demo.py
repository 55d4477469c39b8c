"""The demo: live through weeks of monitoring the fixture web on the virtual clock."""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import SUCCESSES, RunKind, Stop
from catlas_assets.services import compaction, demo_seed, onboarding, sql
from catlas_assets.services.periodic import cadence_of
from catlas_assets.services.repair import due_sensors, repair_pass
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder, RunReport, unstarted_report
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.site_crawl import SiteCrawlResult
from catlas_assets.services.tick import run_tick
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb, default_root
from resources.clock import VirtualClock

MIN_STEP = timedelta(minutes=5)
REPAIR_EVERY = timedelta(seconds=cadence_of("repair").every_s or 1800)
DEMO_MARKER = "demo.json"


@dataclass
class DemoResult:
    reset: bool
    report: RunReport
    ticks: int
    changes: list[dict[str, Any]] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    repairs: list[dict[str, Any]] = field(default_factory=list)  # moved or migrated sensors
    site_crawl: SiteCrawlResult | None = None


def fixtures_dir() -> Path:
    return default_root().parent


def reset_state(state_dir: Path) -> bool:
    """Remove a previous demo's state; True when there was one."""
    existed = (state_dir / DEMO_MARKER).exists() or (state_dir / "state.db").exists()
    for name in ("state.db", "state.db-wal", "state.db-shm", ".last_run.json", DEMO_MARKER):
        (state_dir / name).unlink(missing_ok=True)
    shutil.rmtree(state_dir / "lake", ignore_errors=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    return existed


def check_ready(settings: Settings) -> None:
    """The demo's lake lives under the state dir: refuse before resetting anything there."""
    Runtime(settings.with_overrides(database_url="", lake_url="", hosts="")).check_ready()


def shift_to_end_on(today: date, days: int) -> int:
    """Whole days to move the demo's calendar so that its `days` end on `today`."""
    return (today - (DEFAULT_NOW + timedelta(days=days)).date()).days


def run_demo(
    settings: Settings,
    *,
    days: int = 21,
    shift_days: int = 0,
    on_progress: Callable[[datetime, datetime], None] | None = None,
    control: RunControl | None = None,
) -> DemoResult:
    """`control` (`-n`, `--deadline`, a signal) ends the simulation early: the demo's run
    then stops `max_requests` or `interrupted`; before the start, nothing is reset."""
    state_dir = settings.state_path
    check_ready(settings)
    control = control or RunControl()
    if control.stop_before_start() or control.budget_stop():
        budget = control.budget_stop()
        stop = budget[0] if budget else Stop.INTERRUPTED
        return DemoResult(False, unstarted_report(RunKind.DAEMON, DEFAULT_NOW, stop=stop), 0)
    reset = reset_state(state_dir)
    shift = timedelta(days=shift_days)
    start = DEFAULT_NOW + shift
    end = start + timedelta(days=days)
    with FixtureWeb(now=DEFAULT_NOW) as web:
        hosts = web.write_hosts_file(state_dir / "fixture-hosts")
        clock = VirtualClock(start)
        runtime = Runtime(
            settings.with_overrides(
                hosts=str(hosts),
                database_url="",
                lake_url="",
                # The fixture web runs on this machine while weeks pass on a virtual clock.
                domain_spacing_s=min(settings.domain_spacing_s, 0.05),
            ),
            clock=clock,
            rng=random.Random(2026),
        )
        try:
            demo_seed.load_companies(runtime, fixtures_dir() / "companies.csv")
            # Sensors come from discovery, as for any company a user adds; their first
            # runs happen now so that every planted change has a baseline before it.
            onboarding.onboard_pending(runtime, fetch_now=True, control=control)
            recorder = RunRecorder(runtime, RunKind.DAEMON)
            lived = _live(
                runtime, clock, web, end=end, shift=shift, control=control, on_progress=on_progress
            )
            compaction.compact_all(runtime)
            totals = lived.totals
            failed = totals["failed"] + totals["redirected"]
            hours = (clock.now() - start).total_seconds() / 3600
            span = f"{days}" if hours >= days * 24 else f"{hours:.1f} h of {days}"
            report = recorder.finish(
                stop=lived.stop,
                tally=Tally(
                    succeeded=sum(totals[o.value] for o in SUCCESSES),
                    failures=failed,
                    coverage_gaps=failed + totals["skipped"],
                    productive=lived.productive,
                ),
                counters=dict(totals),
                detail=(f"{lived.why}; " if lived.why else "")
                + f"lived {span} simulated days in {lived.ticks} ticks",
            )
            (state_dir / DEMO_MARKER).write_text(
                json.dumps({"run_id": report.run_id, "days": days, "shift_days": shift_days}) + "\n"
            )
            result = DemoResult(
                reset, report, lived.ticks, _changes(runtime), dict(totals), _repairs(runtime)
            )
            if lived.stop is Stop.QUEUE_EMPTY:  # a stopped demo ends where it stopped
                result.site_crawl = _crawl_blog(runtime)
            return result
        finally:
            runtime.close()


DEMO_BLOG = "http://inkwell-press.com"


def _crawl_blog(runtime: Runtime) -> SiteCrawlResult:
    """The demo ends with one site crawl: every post of a fixture blog, scoped to /blog."""
    from catlas_assets.services.crawl_configs import add_config
    from catlas_assets.services.site_crawl import CrawlRequest, prepare, run_site_crawl

    add_config(runtime, "inkwell", company="Inkwell Press", base_url=f"{DEMO_BLOG}/")
    request = CrawlRequest("inkwell", "path_scope", path="/blog")
    return run_site_crawl(runtime, prepare(runtime, request))


@dataclass
class _Lived:
    """What the simulated weeks did, summed over their ticks."""

    totals: Counter[str] = field(default_factory=Counter)
    ticks: int = 0
    productive: bool = False
    stop: Stop = Stop.QUEUE_EMPTY
    why: str = ""


def _live(
    runtime: Runtime,
    clock: VirtualClock,
    web: FixtureWeb,
    *,
    end: datetime,
    shift: timedelta,
    control: RunControl,
    on_progress: Callable[[datetime, datetime], None] | None,
) -> _Lived:
    """Tick, then move the clock (and the fixture web) to the next due sensor, until `end`."""
    lived = _Lived()
    last_repair = clock.now()
    while True:
        if (budget := control.budget_stop()) is not None:
            lived.stop, lived.why = budget
            return lived
        if (reason := control.interruption()) is not None:
            lived.stop, lived.why = Stop.INTERRUPTED, reason
            return lived
        tick = run_tick(runtime, control=control)
        if tick.report.run_id == "-":
            continue  # stopped before it started: the checks above say why
        lived.ticks += 1
        lived.totals.update(tick.report.counters)
        lived.productive = lived.productive or tick.report.productive
        now = clock.now()
        if now - last_repair >= REPAIR_EVERY:
            # The daemon's periodic repair (every 30 min), on the virtual clock; a pass
            # is recorded only when some sensor is due for one.
            if due_sensors(runtime):
                repair_pass(runtime, control=control)
            last_repair = now
        if on_progress is not None:
            on_progress(now, end)
        if now >= end:
            return lived
        due = runtime.store.next_due_at() or end
        target = min(end, max(now + MIN_STEP, due))
        clock.set(target)
        web.set_now(target - shift)


def _changes(runtime: Runtime) -> list[dict[str, Any]]:
    """The changes the demo detected, oldest first, with their company's name."""
    names = {c["id"]: c["name"] for c in runtime.store.list_companies()}
    result = sql.query(
        runtime,
        "SELECT company_id, surface, kind, summary, detected_at FROM changes "
        "ORDER BY detected_at, company_id, surface",
    )
    return [
        {**dict(zip(result.columns, row, strict=True)), "company": names.get(row[0], "?")}
        for row in result.rows
    ]


def _repairs(runtime: Runtime) -> list[dict[str, Any]]:
    """Sensors whose page moved: followed in place (a same-domain 301) or migrated."""
    names = {c["id"]: c["name"] for c in runtime.store.list_companies()}
    out = []
    for sensor in runtime.store.list_sensors():
        config = sensor["config"] or {}
        before = None
        how = ""
        if config.get("predecessor_id"):
            before = runtime.store.sensor(config["predecessor_id"])["url"]
            how = f"migrated by repair (sensor {config['predecessor_id']} retired)"
        elif config.get("previous_urls"):
            before = config["previous_urls"][-1]
            how = "followed a permanent redirect"
        if before is not None:
            out.append(
                {
                    "company": names.get(sensor["company_id"], "?"),
                    "surface": sensor["surface"],
                    "sensor_id": sensor["id"],
                    "from": before,
                    "to": sensor["url"],
                    "how": how,
                }
            )
    return out


def demo_shift_days(state_dir: Path) -> int:
    """The calendar shift of the demo whose state is in `state_dir` (0 if none)."""
    marker = state_dir / DEMO_MARKER
    if not marker.exists():
        return 0
    return int(json.loads(marker.read_text()).get("shift_days", 0))

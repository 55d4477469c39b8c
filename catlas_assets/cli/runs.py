"""Commands that run sensors and report on runs."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from catlas_assets.cli.app import (
    EXIT_RUN_FAILED,
    Context,
    cli,
    console,
    emit,
    finish,
    pass_context,
    table,
)
from catlas_assets.cli.output import format_option, records, write_json
from catlas_assets.domain.verdict import FailWhen, exit_code
from catlas_assets.domain.vocabulary import (
    RunKind,
    Surface,
)
from catlas_assets.option_types import ROW_ID, Duration, count
from catlas_assets.run_options import control_from, run_options

if TYPE_CHECKING:
    from catlas_assets.services.run_history import StaleReport
    from catlas_assets.services.runs import RunReport
    from catlas_assets.services.runtime import Runtime


@cli.command("run-sensor")
@click.argument("sensor_id", type=ROW_ID, required=False)
@click.option("--force", is_flag=True, help="Fetch without conditional headers.")
@click.option(
    "--file",
    "page",
    type=click.Path(path_type=Path),
    help="Run the pipeline on a local file instead (no sensor; writes nothing).",
)
@click.option("--surface", type=click.Choice([s.value for s in Surface]), help="With --file.")
@click.option("--connector", default="generic_html", show_default=True, help="With --file.")
@run_options
@pass_context
def run_sensor_cmd(
    obj: Context,
    sensor_id: int | None,
    force: bool,
    page: Path | None,
    surface: str | None,
    connector: str,
    max_requests: int | None,
    deadline: float | None,
    fail_when: str,
) -> None:
    """Run one sensor now and print what it found (or extract a local --file)."""
    from catlas_assets.services.sensor_run import run_one_within

    if page is not None:
        from catlas_assets.cli.facts import run_file

        run_file(obj, page, surface, connector)
        return
    if sensor_id is None:
        raise click.UsageError("give a SENSOR_ID, or --file PAGE")

    obj.runtime.check_ready()
    control = control_from(max_requests, deadline)
    result, report = run_one_within(obj.runtime, sensor_id, force=force, control=control)
    if result is not None:
        console.print(
            f"sensor {result.sensor_id} {result.surface}: [bold]{result.outcome.value}[/]"
            + (f" ({result.change_kind.value})" if result.change_kind else "")
            + (f" - {escape(result.summary)}" if result.summary else "")
        )
    finish(report, fail_when=fail_when)


# -- scheduler -----------------------------------------------------------------------------
@cli.command("schedule")
@click.option("--once", is_flag=True, help="Run a single tick and exit.")
@click.option(
    "--no-onboarding", is_flag=True, help="Daemon: skip the onboarding batch every 4 ticks."
)
@click.option(
    "--json", "as_json", is_flag=True, help="With --once: print the verdict as one JSON object."
)
@run_options
@pass_context
def schedule(
    obj: Context,
    once: bool,
    no_onboarding: bool,
    as_json: bool,
    max_requests: int | None,
    deadline: float | None,
    fail_when: str,
) -> None:
    """Run the sensors that are due (one tick with --once, else every scheduler_tick_s)."""
    from catlas_assets.services.daemon import run_daemon
    from catlas_assets.services.run_control import signals_stop
    from catlas_assets.services.runs import refused_report
    from catlas_assets.services.tick import run_tick

    if as_json and not once:
        raise click.UsageError("--json goes with --once")
    runtime = obj.runtime
    runtime.check_ready()
    control = control_from(max_requests, deadline)
    kind = RunKind.TICK if once else RunKind.DAEMON
    done = partial(_finish_json, runtime) if as_json else finish
    # With a Dagster instance configured, each tick is told to it as runless asset events.
    tell_dagster = None
    if os.environ.get("DAGSTER_HOME"):
        from catlas_assets.cli.runless import tick_reporter

        tell_dagster = tick_reporter()

    def on_tick(tick: RunReport, *, echo: bool = False) -> None:
        if echo:
            console.print(tick.summary_line, markup=False)
        if tell_dagster is not None:
            tell_dagster(tick)

    try:
        with signals_stop(control):
            if once:
                report = run_tick(runtime, control=control).report
                on_tick(report)
                done(report, fail_when=fail_when)
                return
            result = run_daemon(
                runtime,
                control,
                onboarding=not no_onboarding,
                on_tick=partial(on_tick, echo=True),
            )
    except BlockingIOError as exc:
        done(refused_report(kind, runtime.clock.now(), exc), fail_when=fail_when)
        return
    finish(result.report, fail_when=fail_when, others=result.ticks)


def _finish_json(runtime: Runtime, report: RunReport, *, fail_when: str) -> None:
    """The verdict as one JSON object on stdout, `tick_ms` in its counters; exit as `finish`.

    `tick_ms` is read back from the run's `crawl_runs` row, so the figure printed is the
    one stored (a run that never started has no row and no `tick_ms`).
    """
    from catlas_assets.services.run_history import run_row

    data = report.as_json()
    row = run_row(runtime, report.run_id)
    tick_ms = row["tick_ms"] if row else None
    if tick_ms is not None:
        data["counters"] = {**data["counters"], "tick_ms": tick_ms}
    click.echo(json.dumps(data, sort_keys=True))
    if exit_code([report.outcome], FailWhen(fail_when)):
        raise SystemExit(EXIT_RUN_FAILED)


RUN_COLUMNS = ["run", "kind", "started", "stop", "outcome", "claimed", "ok", "changed", "failed", "gaps", "streak", "detail"]  # fmt: skip


def _run_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            r["id"], r["kind"], r["started_at"], r["stop"], r["outcome"], r["claimed"],
            r["ok"], r["changed"], r["failed"], r["coverage_gaps"], r["empty_streak"], r["detail"] or "",
        )
        for r in rows
    ]  # fmt: skip


@cli.command("report")
@click.option("--limit", type=count(), default=20, show_default=True)
@click.option("--kind", default=None)
@click.option(
    "--stale-after",
    type=count(),
    default=None,
    help="List only what has not been productive for N runs in a row.",
)
@format_option()
@pass_context
def report(obj: Context, limit: int, kind: str | None, stale_after: int | None, fmt: str) -> None:
    """Recent runs with their verdicts (shared by every machine on this database)."""
    from catlas_assets.services.run_history import recent_runs, stale_report

    if stale_after is not None:
        _print_stale(stale_report(obj.runtime, stale_after, kind), fmt)
        return
    emit(fmt, RUN_COLUMNS, _run_rows(recent_runs(obj.runtime, limit=limit, kind=kind)))


STALE_RUN_COLUMNS = ["kind", "last run", "completed", "outcome", "empty-run streak"]
STALE_SENSOR_COLUMNS = ["sensor", "company", "surface", "status", "failed runs", "class", "last success", "url"]  # fmt: skip


def _print_stale(report: StaleReport, fmt: str) -> None:
    runs, stale_runs, sensors_rows = report.runs, report.run_kinds, report.sensors
    run_rows = [
        (r["kind"], r["id"], r["completed_at"], r["outcome"], r["empty_streak"]) for r in stale_runs
    ]
    sensor_rows = [
        (
            r["id"], r["company_id"], r["surface"], r["status"], r["consecutive_failures"],
            r["last_failure_class"] or "", r["last_success_at"], r["url"],
        )
        for r in sensors_rows
    ]  # fmt: skip
    if fmt == "json":
        write_json(
            {
                "runs": runs,
                "run_kinds": records(STALE_RUN_COLUMNS, run_rows),
                "sensors": records(STALE_SENSOR_COLUMNS, sensor_rows),
            }
        )
        return
    emit(
        fmt,
        STALE_RUN_COLUMNS,
        run_rows,
        title=f"run kinds not productive for {runs} runs in a row: {len(stale_runs)}",
    )
    if fmt == "csv":
        click.echo("")
    emit(
        fmt,
        STALE_SENSOR_COLUMNS,
        sensor_rows,
        title=f"sensors not productive for {runs} runs in a row: {len(sensors_rows)}",
    )


@cli.command("stats-crawl")
@click.option(
    "--window", type=Duration(positive=True), default="1h", show_default=True, help="Look-back."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_context
def stats_crawl(obj: Context, window: float, as_json: bool) -> None:
    """Throughput, outcome mix, failing/stale counts and the due backlog."""
    from catlas_assets.services.crawl_stats import crawl_stats

    stats = crawl_stats(obj.runtime, window_s=int(window))
    if as_json:
        click.echo(json.dumps(stats, indent=2, sort_keys=True))
        return
    outcomes = stats.pop("outcomes")
    by_status = stats.pop("by_status")
    table(["figure", "value"], sorted(stats.items()), title="crawling")
    table(["outcome", "sensor runs"], sorted(outcomes.items()), title="outcome mix")
    table(["status", "sensors"], sorted(by_status.items()), title="sensors by status")

"""The `catlas` command line: a thin front over the services (no business rules here)."""

from __future__ import annotations

import csv
import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from catlas_assets.domain.vocabulary import RunOutcome, SensorStatus, Surface
from catlas_assets.errors import CatlasError, ConfigError, StorageError
from catlas_assets.services import catalog, sql
from catlas_assets.services.runs import RunReport
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy import Engine

console = Console()
errors = Console(stderr=True)

# Exit codes (README: "Exit codes").
EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3


class Context:
    def __init__(self) -> None:
        self._runtime: Runtime | None = None

    @property
    def settings(self) -> Settings:
        return Settings.from_env()

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            self._runtime = Runtime(self.settings)
        return self._runtime

    def close(self) -> None:
        if self._runtime is not None:
            self._runtime.close()


pass_context = click.make_pass_decorator(Context, ensure=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def cli(ctx: click.Context) -> None:
    """catlas: watch companies' public web surfaces and turn changes into facts."""
    ctx.obj = Context()
    ctx.call_on_close(ctx.obj.close)


# -- database ------------------------------------------------------------------------------
@cli.group()
def db() -> None:
    """The state store's schema."""


@contextmanager
def _state_engine(obj: Context) -> Iterator[Engine]:
    """An engine on the state database; an unreachable one is a StorageError, not a traceback."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    from resources.state.store import create_state_engine

    url = obj.settings.resolved_database_url
    engine = create_state_engine(url)
    try:
        yield engine
    except OperationalError as exc:
        first = str(exc.orig or exc).strip().splitlines()[0]
        shown = make_url(url).render_as_string(hide_password=True)
        raise StorageError(f"cannot reach the state database {shown}: {first}") from None
    finally:
        engine.dispose()


@db.command("upgrade")
@pass_context
def db_upgrade(obj: Context) -> None:
    """Apply schema migrations up to head."""
    from resources.state import migrate

    with _state_engine(obj) as engine:
        before = migrate.current_revision(engine)
        migrate.upgrade(engine)
        console.print(f"schema at {migrate.head_revision()} (was {before or 'empty'})")


@db.command("current")
@pass_context
def db_current(obj: Context) -> None:
    """Print the database's schema revision and this catlas's head."""
    from resources.state import migrate

    with _state_engine(obj) as engine:
        console.print(
            f"current: {migrate.current_revision(engine) or 'empty'}  head: {migrate.head_revision()}"
        )


# -- companies -----------------------------------------------------------------------------
@cli.group()
def companies() -> None:
    """Companies to watch."""


@companies.command("add")
@click.argument("name")
@click.option("--website", help="Homepage URL, e.g. https://example.com")
@click.option("--importance", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option("--tier", type=click.IntRange(1, 4), default=3, show_default=True)
@pass_context
def companies_add(
    obj: Context, name: str, website: str | None, importance: float, tier: int
) -> None:
    """Add a company."""
    company_id = catalog.add_company(
        obj.runtime, name=name, website=website, importance=importance, tier=tier
    )
    console.print(f"company {company_id}: {name}")


@companies.command("list")
@pass_context
def companies_list(obj: Context) -> None:
    """List companies."""
    rows = obj.runtime.store.list_companies()
    _table(
        ["id", "name", "domain", "importance", "tier", "onboarding", "sensors"],
        [
            (
                r["id"],
                r["name"],
                r["domain"],
                r["importance"],
                r["tier"],
                r["onboarding_status"],
                r["sensors"],
            )
            for r in rows
        ],
    )


# -- sensors -------------------------------------------------------------------------------
@cli.group(invoke_without_command=True)
@click.option("--company", help="Company id or exact name.")
@click.option("--status", type=click.Choice([s.value for s in SensorStatus]))
@click.option("--surface", type=click.Choice([s.value for s in Surface]))
@click.pass_context
def sensors(
    ctx: click.Context, company: str | None, status: str | None, surface: str | None
) -> None:
    """List sensors (or `sensors add`)."""
    if ctx.invoked_subcommand is not None:
        return
    obj: Context = ctx.find_object(Context)
    runtime = obj.runtime
    company_id = catalog.resolve_company(runtime, company)["id"] if company else None
    rows = runtime.store.list_sensors(company_id=company_id, status=status, surface=surface)
    _table(
        ["id", "company", "surface", "status", "tier", "interval", "next run", "failures", "url"],
        [
            (
                r["id"],
                r["company"],
                r["surface"],
                r["status"] + (f" ({r['last_failure_class']})" if r["last_failure_class"] else ""),
                r["tier"],
                _duration(r["current_interval_s"]),
                _when(r["next_run_at"]),
                r["consecutive_failures"],
                r["url"],
            )
            for r in rows
        ],
    )


@sensors.command("add")
@click.option("--company", required=True, help="Company id or exact name.")
@click.option("--surface", required=True, type=click.Choice([s.value for s in Surface]))
@click.option("--url", required=True)
@click.option("--connector", default="generic_html", show_default=True)
@click.option(
    "--fetch-now/--staggered", default=True, help="First run now, or within the first interval."
)
@pass_context
def sensors_add(
    obj: Context, company: str, surface: str, url: str, connector: str, fetch_now: bool
) -> None:
    """Declare a sensor by hand."""
    runtime = obj.runtime
    company_row = catalog.resolve_company(runtime, company)
    sensor_id = catalog.add_sensor(
        runtime,
        company_id=company_row["id"],
        surface=surface,
        url=url,
        connector=connector,
        fetch_now=fetch_now,
    )
    console.print(f"sensor {sensor_id}: {company_row['name']} {surface} {url}")


@cli.command("run-sensor")
@click.argument("sensor_id", type=int)
@click.option("--force", is_flag=True, help="Fetch without conditional headers.")
@pass_context
def run_sensor_cmd(obj: Context, sensor_id: int, force: bool) -> None:
    """Run one sensor now and print what it found."""
    from catlas_assets.services.sensor_run import run_one

    obj.runtime.check_ready()
    result, report = run_one(obj.runtime, sensor_id, force=force)
    console.print(
        f"sensor {result.sensor_id} {result.surface}: [bold]{result.outcome.value}[/]"
        + (f" ({result.change_kind.value})" if result.change_kind else "")
        + (f" - {result.summary}" if result.summary else "")
    )
    _finish(report)


# -- scheduler -----------------------------------------------------------------------------
@cli.command("schedule")
@click.option("--once", is_flag=True, help="Run a single tick and exit.")
@pass_context
def schedule(obj: Context, once: bool) -> None:
    """Run the sensors that are due (one tick with --once, else every scheduler_tick_s)."""
    from catlas_assets.services.tick import run_tick

    runtime = obj.runtime
    runtime.check_ready()
    while True:
        result = run_tick(runtime)
        if once:
            _finish(result.report)
            return
        console.print(result.report.summary_line)
        try:
            time.sleep(runtime.settings.scheduler_tick_s)
        except KeyboardInterrupt:
            return


@cli.command("report")
@click.option("--limit", default=20, show_default=True)
@click.option("--kind", default=None)
@pass_context
def report(obj: Context, limit: int, kind: str | None) -> None:
    """Recent runs with their verdicts (shared by every machine on this database)."""
    rows = obj.runtime.store.runs(limit=limit, kind=kind)
    _table(
        ["run", "kind", "started", "stop", "outcome", "claimed", "ok", "changed", "failed", "gaps", "streak", "detail"],
        [
            (
                r["id"], r["kind"], _when(r["started_at"]), r["stop"], r["outcome"], r["claimed"],
                r["ok"], r["changed"], r["failed"], r["coverage_gaps"], r["empty_streak"], r["detail"] or "",
            )
            for r in rows
        ],
    )  # fmt: skip


# -- the lake ------------------------------------------------------------------------------
@cli.command("sql")
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table")
@pass_context
def sql_cmd(obj: Context, query: str, fmt: str) -> None:
    """Run SQL against the lake's tables (DuckDB views named like the tables)."""
    result = sql.query(obj.runtime, query)
    if fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(result.columns)
        writer.writerows(result.rows)
    elif fmt == "json":
        rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
        click.echo(json.dumps(rows, default=str, indent=2))
    else:
        _table(result.columns, result.rows)


@cli.command("compact")
@pass_context
def compact(obj: Context) -> None:
    """Flush pending lake rows and compact every hour partition into one file per table."""
    from catlas_assets.services.compaction import compact_all

    results = compact_all(obj.runtime)
    merged = [r for r in results if r.files_before > 1]
    console.print(f"{len(results)} partitions checked, {len(merged)} compacted")


# -- fixture web and demo ------------------------------------------------------------------
@cli.group("fixture-web")
def fixture_web_group() -> None:
    """The fixture web (fictional company sites on 127.0.0.1)."""


@fixture_web_group.command("serve")
@click.option("--port", default=0, help="Port on 127.0.0.1 (0: any free port).")
@click.option(
    "--hosts-file",
    type=click.Path(path_type=Path),
    default=Path(".catlas/fixture-hosts"),
    show_default=True,
)
@click.option("--day", type=click.IntRange(0), default=None, help="Simulated day to serve.")
def fixture_web_serve(port: int, hosts_file: Path, day: int | None) -> None:
    """Serve the fixture web until Ctrl+C; point CATLAS_HOSTS at the hosts file."""
    from fixture_web import at_day, serve_forever

    serve_forever(port=port, hosts_file=hosts_file, now=at_day(day) if day is not None else None)


@cli.command("demo")
@click.option("--days", type=click.IntRange(14, 60), default=15, show_default=True)
@pass_context
def demo(obj: Context, days: int) -> None:
    """Live through weeks of monitoring the fixture web on the virtual clock."""
    from catlas_assets.services.demo import run_demo

    settings = obj.settings
    with Progress(
        TextColumn("[bold]simulating[/]"),
        BarColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("", total=days * 24)
        start: list[datetime] = []

        def on_progress(now: datetime, end: datetime) -> None:
            if not start:
                start.append(now)
            hours = (now - start[0]).total_seconds() / 3600
            progress.update(
                task, completed=hours, description=f"day {int(hours // 24)} {now:%Y-%m-%d %H:%M}Z"
            )

        result = run_demo(settings, days=days, on_progress=on_progress)
    state = settings.state_path
    console.print(
        ("Reset the previous demo state in " if result.reset else "Fresh demo state in ")
        + f"{state}/ (SQLite {state}/state.db, lake {state}/lake)"
    )
    _table(
        ["detected", "company", "surface", "kind", "summary"],
        [
            (
                f"{c['detected_at']:%Y-%m-%d %H:%M}",
                c["company"],
                c["surface"],
                c["kind"],
                c["summary"],
            )
            for c in result.changes
        ],
        title=f"{len(result.changes)} changes detected",
    )
    console.print(
        "outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(result.outcomes.items()) if v)
    )
    console.print(
        'explore the lake:  catlas sql "select surface, kind, count(*) from changes group by all"'
    )
    console.print("  (through uv: uv run catlas sql ...; the Dagster UI: make ui)")
    _finish(result.report)


# -- output helpers ------------------------------------------------------------------------
def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    table = Table(*columns, title=title, show_lines=False)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)


def _when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M}Z" if value else ""


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds // 60}m"


def _finish(report: RunReport) -> None:
    style = {"success": "green", "partial": "yellow", "failed": "red"}[report.outcome.value]
    console.print(f"verdict: [{style}]{report.outcome.value}[/] - {report.summary_line}")
    if report.outcome is RunOutcome.FAILED:
        raise SystemExit(EXIT_RUN_FAILED)


@contextmanager
def _errors_as_messages() -> Iterator[None]:
    try:
        yield
    except (ConfigError, StorageError) as exc:
        errors.print(f"catlas: error: {exc}", markup=False, highlight=False)
        raise SystemExit(EXIT_ENVIRONMENT) from None
    except CatlasError as exc:
        errors.print(f"catlas: error: {exc}", markup=False, highlight=False)
        raise SystemExit(EXIT_BAD_INPUT) from None


def main(argv: Sequence[str] | None = None) -> None:
    with _errors_as_messages():
        cli.main(
            args=list(argv) if argv is not None else None, prog_name="catlas", standalone_mode=True
        )

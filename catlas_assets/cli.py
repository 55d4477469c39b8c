"""The `catlas` command line: a thin front over the services (no business rules here)."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from catlas_assets.domain.verdict import FailWhen, exit_code
from catlas_assets.domain.vocabulary import (
    ReviewKind,
    ReviewStatus,
    RunKind,
    SensorStatus,
    Surface,
)
from catlas_assets.errors import CatlasError, ConfigError, StorageError
from catlas_assets.run_options import Duration, control_from, run_options
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


@cli.command("settings")
@click.option("--markdown", is_flag=True, help="Print the README's settings table.")
@pass_context
def settings_cmd(obj: Context, markdown: bool) -> None:
    """Show every setting with its current value (from CATLAS_* variables)."""
    from dataclasses import asdict

    from catlas_assets.settings import ENV_PREFIX, settings_markdown

    if markdown:
        click.echo(settings_markdown())
        return
    current = asdict(obj.settings)
    _table(["variable", "value"], [(ENV_PREFIX + k.upper(), v) for k, v in current.items()])


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
        [
            "id",
            "company",
            "surface",
            "status",
            "tier",
            "interval",
            "next run",
            "failures",
            "url",
            "why",
        ],
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
                _shorten(_why(r), 160),
            )
            for r in rows
        ],
    )


def _why(row: dict[str, Any]) -> str:
    """Why a sensor is not fetched normally: its last failure, or where it moved."""
    if row["status"] == SensorStatus.REDIRECTED:
        return f"moved to {(row['config'] or {}).get('redirect_url', '?')}"
    if (
        row["status"] in (SensorStatus.ACTIVE, SensorStatus.PENDING)
        and not row["last_failure_class"]
    ):
        return ""
    return row.get("last_failure_detail") or ""


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


# -- politeness: robots.txt and the review queue ------------------------------------------
@cli.group()
def robots() -> None:
    """robots.txt: what catlas may fetch."""


@robots.command("check")
@click.argument("url")
@click.option("--agent", default=None, help="User-agent product token (default: catlas's).")
@pass_context
def robots_check(obj: Context, url: str, agent: str | None) -> None:
    """Say whether URL may be fetched and which rule decided (exit 0 allowed, 1 not)."""
    from catlas_assets.services.robots_check import check_robots

    obj.runtime.check_ready()
    result = check_robots(obj.runtime, url, agent)
    for line in result.lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if not result.allowed:
        raise SystemExit(EXIT_RUN_FAILED)


@cli.group()
def review() -> None:
    """The review queue: what needs a person (blocked sources, migrations, stale sensors)."""


@review.command("list")
@click.option("--kind", type=click.Choice([k.value for k in ReviewKind]))
@click.option(
    "--status",
    type=click.Choice([s.value for s in ReviewStatus] + ["all"]),
    default=ReviewStatus.OPEN.value,
    show_default=True,
)
@pass_context
def review_list(obj: Context, kind: str | None, status: str) -> None:
    """List review items, oldest first."""
    rows = obj.runtime.store.list_review(kind=kind, status=None if status == "all" else status)
    _table(
        ["id", "kind", "status", "sensor", "company", "opened", "detail"],
        [
            (
                r["id"],
                r["kind"],
                r["status"],
                r["sensor_id"],
                r["company_id"],
                _when(r["created_at"]),
                _shorten(json.dumps(r["detail"], default=str, sort_keys=True), 160),
            )
            for r in rows
        ],
        title=f"{len(rows)} review item(s)",
    )


@cli.command("run-sensor")
@click.argument("sensor_id", type=int, required=False)
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
        from catlas_assets.cli_facts import run_file

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
            + (f" - {result.summary}" if result.summary else "")
        )
    _finish(report, fail_when=fail_when)


# -- scheduler -----------------------------------------------------------------------------
@cli.command("schedule")
@click.option("--once", is_flag=True, help="Run a single tick and exit.")
@click.option(
    "--no-onboarding", is_flag=True, help="Daemon: skip the onboarding batch every 4 ticks."
)
@run_options
@pass_context
def schedule(
    obj: Context,
    once: bool,
    no_onboarding: bool,
    max_requests: int | None,
    deadline: float | None,
    fail_when: str,
) -> None:
    """Run the sensors that are due (one tick with --once, else every scheduler_tick_s)."""
    from catlas_assets.services.daemon import run_daemon
    from catlas_assets.services.run_control import signals_stop
    from catlas_assets.services.runs import refused_report
    from catlas_assets.services.tick import run_tick

    runtime = obj.runtime
    runtime.check_ready()
    control = control_from(max_requests, deadline)
    kind = RunKind.TICK if once else RunKind.DAEMON
    try:
        with signals_stop(control):
            if once:
                _finish(run_tick(runtime, control=control).report, fail_when=fail_when)
                return
            result = run_daemon(
                runtime,
                control,
                onboarding=not no_onboarding,
                on_tick=lambda tick: console.print(tick.summary_line),
            )
    except BlockingIOError as exc:
        _finish(refused_report(kind, runtime.clock.now(), exc), fail_when=fail_when)
        return
    _finish(result.report, fail_when=fail_when, others=result.ticks)


@cli.command("report")
@click.option("--limit", default=20, show_default=True)
@click.option("--kind", default=None)
@click.option(
    "--stale-after",
    type=click.IntRange(1),
    default=None,
    help="List only what has not been productive for N runs in a row.",
)
@pass_context
def report(obj: Context, limit: int, kind: str | None, stale_after: int | None) -> None:
    """Recent runs with their verdicts (shared by every machine on this database)."""
    if stale_after is not None:
        _stale_report(obj.runtime, stale_after, kind)
        return
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


def _stale_report(runtime: Runtime, runs: int, kind: str | None) -> None:
    from resources.state.crawl_stats import unproductive_sensors

    kinds = [RunKind(kind)] if kind else list(RunKind)
    latest = [r for k in kinds if (r := runtime.store.last_run(k.value)) is not None]
    stale_runs = [r for r in latest if r["empty_streak"] >= runs]
    _table(
        ["kind", "last run", "completed", "outcome", "empty-run streak"],
        [
            (r["kind"], r["id"], _when(r["completed_at"]), r["outcome"], r["empty_streak"])
            for r in stale_runs
        ],
        title=f"run kinds not productive for {runs} runs in a row: {len(stale_runs)}",
    )
    sensors_rows = unproductive_sensors(runtime.store.engine, runs=runs)
    _table(
        ["sensor", "company", "surface", "status", "failed runs", "class", "last success", "url"],
        [
            (
                r["id"], r["company_id"], r["surface"], r["status"], r["consecutive_failures"],
                r["last_failure_class"] or "", _when(r["last_success_at"]), r["url"],
            )
            for r in sensors_rows
        ],
        title=f"sensors not productive for {runs} runs in a row: {len(sensors_rows)}",
    )  # fmt: skip


@cli.command("stats-crawl")
@click.option("--window", type=Duration(), default="1h", show_default=True, help="Look-back.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_context
def stats_crawl(obj: Context, window: float, as_json: bool) -> None:
    """Throughput, outcome mix, failing/stale counts and the due backlog."""
    from resources.state.crawl_stats import crawl_stats

    runtime = obj.runtime
    stats = crawl_stats(runtime.store.engine, now=runtime.clock.now(), window_s=int(window))
    if as_json:
        click.echo(json.dumps(stats, indent=2, sort_keys=True))
        return
    outcomes = stats.pop("outcomes")
    by_status = stats.pop("by_status")
    _table(["figure", "value"], sorted(stats.items()), title="crawling")
    _table(["outcome", "sensor runs"], sorted(outcomes.items()), title="outcome mix")
    _table(["status", "sensors"], sorted(by_status.items()), title="sensors by status")


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
@click.option("--days", type=click.IntRange(14, 60), default=21, show_default=True)
@pass_context
def demo(obj: Context, days: int) -> None:
    """Live through weeks of monitoring the fixture web on the virtual clock."""
    from catlas_assets.services.demo import check_ready, run_demo

    settings = obj.settings
    check_ready(settings)
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
                _shorten(c["summary"], 90),
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


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M}Z" if value else ""


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds // 60}m"


def _finish(report: RunReport, *, fail_when: str = "any", others: Sequence[RunReport] = ()) -> None:
    """Print the verdict; exit 1 as `--fail-when` says over every run the command started."""
    style = {"success": "green", "partial": "yellow", "failed": "red"}[report.outcome.value]
    console.print(f"verdict: [{style}]{report.outcome.value}[/] - {report.summary_line}")
    outcomes = [r.outcome for r in (*others, report)]
    if exit_code(outcomes, FailWhen(fail_when)):
        raise SystemExit(EXIT_RUN_FAILED)


def _print_error(message: object) -> None:
    """One line on stderr, whatever the message holds and however narrow the terminal."""
    text = " ".join(line.strip() for line in str(message).splitlines() if line.strip())
    errors.print(f"catlas: error: {text}", markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _errors_as_messages() -> Iterator[None]:
    try:
        yield
    except (ConfigError, StorageError) as exc:
        _print_error(exc)
        raise SystemExit(EXIT_ENVIRONMENT) from None
    except CatlasError as exc:
        _print_error(exc)
        raise SystemExit(EXIT_BAD_INPUT) from None


def main(argv: Sequence[str] | None = None) -> None:
    with _errors_as_messages():
        try:
            code = cli.main(
                args=list(argv) if argv is not None else None,
                prog_name="catlas",
                standalone_mode=False,
            )
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()
            raise SystemExit(EXIT_BAD_INPUT) from None
        except click.ClickException as exc:
            # Usage errors read like every other error: one line, exit code 2.
            where = getattr(exc, "ctx", None)
            hint = f" (see '{where.command_path} --help')" if where is not None else ""
            _print_error(exc.format_message() + hint)
            raise SystemExit(EXIT_BAD_INPUT) from None
        except click.Abort:
            click.echo("Aborted!", err=True)
            raise SystemExit(1) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)


# Discovery and onboarding commands live in their own module (registered last: it imports
# the helpers above).
from catlas_assets import cli_discovery  # noqa: E402

cli_discovery.register(cli, companies)


# Commands about facts (connectors, changes, notify, diff) live in their own module.
from catlas_assets import cli_facts  # noqa: E402, F401

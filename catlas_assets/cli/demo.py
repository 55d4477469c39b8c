"""The fixture web and the demo."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from catlas_assets.cli.app import (
    Context,
    cli,
    console,
    finish,
    pass_context,
    shorten,
    table,
)
from catlas_assets.option_types import DAY_NUMBER, PORT_OR_ANY
from catlas_assets.run_options import control_from, run_options


# -- fixture web and demo ------------------------------------------------------------------
@cli.group("fixture-web")
def fixture_web_group() -> None:
    """The fixture web (fictional company sites on 127.0.0.1)."""


@fixture_web_group.command("serve")
@click.option("--port", type=PORT_OR_ANY, default=0, help="Port on 127.0.0.1 (0: any free port).")
@click.option(
    "--hosts-file",
    type=click.Path(path_type=Path),
    default=Path(".catlas/fixture-hosts"),
    show_default=True,
)
@click.option("--day", type=DAY_NUMBER, default=None, help="Simulated day to serve.")
def fixture_web_serve(port: int, hosts_file: Path, day: int | None) -> None:
    """Serve the fixture web until Ctrl+C; point CATLAS_HOSTS at the hosts file."""
    from fixture_web import at_day, serve_forever

    serve_forever(port=port, hosts_file=hosts_file, now=at_day(day) if day is not None else None)


@cli.command("demo")
@click.option("--days", type=click.IntRange(14, 60), default=21, show_default=True)
@run_options
@pass_context
def demo(
    obj: Context, days: int, max_requests: int | None, deadline: float | None, fail_when: str
) -> None:
    """Live through weeks of monitoring the fixture web on the virtual clock."""
    from catlas_assets.services.demo import check_ready, run_demo, shift_to_end_on
    from catlas_assets.services.run_control import signals_stop

    settings = obj.settings
    check_ready(settings)
    control = control_from(max_requests, deadline)
    with (
        signals_stop(control),
        Progress(
            TextColumn("[bold]simulating[/]"),
            BarColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
        ) as progress,
    ):
        task = progress.add_task("", total=days * 24)
        start: list[datetime] = []

        def on_progress(now: datetime, end: datetime) -> None:
            if not start:
                start.append(now)
            hours = (now - start[0]).total_seconds() / 3600
            progress.update(
                task, completed=hours, description=f"day {int(hours // 24)} {now:%Y-%m-%d %H:%M}Z"
            )

        # The simulated weeks end on the real current day, where the UI's time windows look.
        shift = shift_to_end_on(datetime.now(UTC).date(), days)
        result = run_demo(
            settings, days=days, shift_days=shift, on_progress=on_progress, control=control
        )
    if result.report.run_id == "-":
        finish(result.report, fail_when=fail_when)  # stopped before it started
        return
    state = settings.state_path
    console.print(
        ("Reset the previous demo state in " if result.reset else "Fresh demo state in ")
        + f"{state}/ (SQLite {state}/state.db, lake {state}/lake)"
    )
    table(
        ["detected", "company", "surface", "kind", "summary"],
        [
            (
                f"{c['detected_at']:%Y-%m-%d %H:%M}",
                c["company"],
                c["surface"],
                c["kind"],
                shorten(c["summary"], 90),
            )
            for c in result.changes
        ],
        title=f"{len(result.changes)} changes detected",
    )
    table(
        ["company", "surface", "sensor", "from", "to", "how"],
        [
            (r["company"], r["surface"], r["sensor_id"], r["from"], r["to"], r["how"])
            for r in result.repairs
        ],
        title=f"{len(result.repairs)} sensor(s) repaired",
    )
    console.print(
        "outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(result.outcomes.items()) if v)
    )
    console.print(
        'explore the lake:  catlas sql "select surface, kind, count(*) from changes group by all"'
    )
    console.print("  (through uv: uv run catlas sql ...; the Dagster UI: make ui)")
    if result.site_crawl is not None:
        crawl = result.site_crawl
        console.print(
            "site crawl of the Inkwell Press blog (catlas crawl --config inkwell --mode "
            "path_scope --path /blog): "
            + " ".join(f"{k}={v}" for k, v in crawl.events.items())
            + f" - {crawl.report.outcome.value}"
        )
    finish(result.report, fail_when=fail_when)

"""`catlas sensors import FILE.csv`: a thin front over services/sensor_import.py."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from catlas_assets.cli.app import EXIT_BAD_INPUT, Context, console, errors, pass_context
from catlas_assets.cli.catalog import sensors


@sensors.command("import")
@click.argument("csv_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--fetch-now/--staggered", default=True, help="First runs now, or within the first interval."
)
@pass_context
def sensors_import(obj: Context, csv_file: Path, fetch_now: bool) -> None:
    """Declare sensors from a CSV (company, surface, url[, connector]); companies are created."""
    from catlas_assets.services.sensor_import import import_sensors, read_rows

    rows, bad = read_rows(csv_file)
    with Progress(
        TextColumn("[bold]importing[/]"), BarColumn(), MofNCompleteColumn(), console=console
    ) as progress:
        task = progress.add_task("", total=len(rows))
        report = import_sensors(
            obj.runtime, rows, fetch_now=fetch_now, on_row=lambda: progress.advance(task)
        )
    rejected = bad + report.problems
    for problem in rejected:
        errors.print(f"catlas: {csv_file} {problem}", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"{report.added} sensors added, {report.existing} already known, "
        f"{report.companies_added} companies created, {len(rejected)} bad rows skipped"
    )
    if rejected:
        raise SystemExit(EXIT_BAD_INPUT)

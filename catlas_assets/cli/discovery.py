"""CLI commands of discovery and onboarding: `discover`, `onboard`, `companies import`.

Thin fronts over services/discovery.py,
services/onboarding.py and services/company_import.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from catlas_assets.cli.app import (
    EXIT_BAD_INPUT,
    EXIT_RUN_FAILED,
    Context,
    cli,
    console,
    errors,
    finish,
    pass_context,
    table,
)
from catlas_assets.cli.catalog import companies
from catlas_assets.errors import CatlasError
from catlas_assets.option_types import CompanyRef, count
from catlas_assets.run_options import control_from, run_options


@cli.command("discover")
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_context
def discover(obj: Context, url: str, as_json: bool) -> None:
    """Dry run: the surfaces discovery would create sensors for (writes nothing)."""
    from catlas_assets.services.discovery import discover_company

    runtime = obj.runtime
    _ = runtime.resolver  # a malformed CATLAS_HOSTS is one error before any request
    result = discover_company(runtime, url, dry_run=True)
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2))
        return
    table(
        ["", "surface", "url", "method", "conf", "verified", "score", "connector", "reason"],
        [
            (
                "✓" if c.selected else "",
                c.surface.value,
                c.url,
                c.method.value,
                f"{c.confidence:.2f}",
                "yes" if c.verified else "no",
                f"{c.score:.3f}",
                c.connector,
                c.reason,
            )
            for c in result.candidates
        ],
        title=f"{url}: {len(result.selected)} surfaces selected of {len(result.candidates)} candidates",
    )
    line = (
        f"{result.status}: {result.requests}/{result.max_requests} requests, "
        f"{result.elapsed_s:.1f}/{result.budget_s:g} s"
    )
    if result.cut:
        line += f", cut: {', '.join(result.cut)}"
    if result.redirected_from:
        line += f", redirected from {result.redirected_from} to {result.domain}"
    console.print(line)
    if result.error:
        errors.print(f"catlas: {result.error}", markup=False, highlight=False)
    if result.status == "failed":
        raise SystemExit(EXIT_RUN_FAILED)


@cli.command("onboard")
@click.option("--company", type=CompanyRef(), help="Company id or exact name: discover it now.")
@click.option("--pending", is_flag=True, help="Process a batch of queued discover jobs.")
@click.option("--fetch-now", is_flag=True, help="New sensors run at once (else staggered).")
@click.option("--limit", type=count(), default=None, help="Batch size (--pending).")
@run_options
@pass_context
def onboard(
    obj: Context,
    company: str | None,
    pending: bool,
    fetch_now: bool,
    limit: int | None,
    max_requests: int | None,
    deadline: float | None,
    fail_when: str,
) -> None:
    """Discover a company's surfaces and seed its sensors (or a batch with --pending)."""
    from catlas_assets.services.onboarding import onboard_company, onboard_pending
    from catlas_assets.services.run_control import signals_stop

    if bool(company) == pending:
        raise CatlasError("give either --company X or --pending")
    runtime = obj.runtime
    runtime.check_ready()
    control = control_from(max_requests, deadline)
    with signals_stop(control):
        if company:
            result = onboard_company(runtime, company, fetch_now=fetch_now, control=control)
        else:
            result = onboard_pending(runtime, limit=limit, control=control)
    table(
        ["company", "onboarding", "job", "requests", "created", "updated", "surfaces / error"],
        [
            (
                c.name,
                c.status,
                c.job_status,
                c.result.requests if c.result else 0,
                len(c.created),
                len(c.updated),
                c.error
                or ", ".join(
                    sorted(s.surface.value for s in (c.result.selected if c.result else []))
                ),
            )
            for c in result.companies
        ],
    )
    finish(result.report, fail_when=fail_when)


@companies.command("import")
@click.argument("csv_file", type=click.Path(path_type=Path, dir_okay=False))
@pass_context
def companies_import(obj: Context, csv_file: Path) -> None:
    """Import companies from a CSV (name, website, importance, tier); queue their discovery."""
    from catlas_assets.services.company_import import import_companies, read_rows

    rows, bad = read_rows(csv_file)
    with Progress(
        TextColumn("[bold]importing[/]"), BarColumn(), MofNCompleteColumn(), console=console
    ) as progress:
        task = progress.add_task("", total=len(rows))
        report = import_companies(obj.runtime, rows, on_row=lambda: progress.advance(task))
    for problem in bad + report.problems:
        errors.print(f"catlas: {csv_file} {problem}", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"{report.added} added, {report.existing} already known, "
        f"{len(bad) + len(report.problems)} bad rows skipped; discovery queued for new companies"
        + (f"; {report.moved} websites changed, discovery queued again" if report.moved else "")
    )
    if bad or report.problems:
        raise SystemExit(EXIT_BAD_INPUT)

"""Commands about companies and sensors."""

from __future__ import annotations

from typing import Any

import click

from catlas_assets.cli.app import (
    Context,
    cli,
    console,
    duration,
    emit,
    pass_context,
    shorten,
)
from catlas_assets.cli.output import format_option
from catlas_assets.domain.vocabulary import (
    SensorStatus,
    Surface,
)
from catlas_assets.option_types import CompanyRef, Fraction


def _catalog():  # type: ignore[no-untyped-def]
    """The catalog service, imported by the commands that use it (it opens the state store)."""
    from catlas_assets.services import catalog

    return catalog


# -- companies -----------------------------------------------------------------------------
@cli.group()
def companies() -> None:
    """Companies to watch."""


@companies.command("add")
@click.argument("name")
@click.option("--website", help="Homepage URL, e.g. https://example.com")
@click.option("--importance", type=Fraction(), default=0.5, show_default=True)
@click.option("--tier", type=click.IntRange(1, 4), default=3, show_default=True)
@pass_context
def companies_add(
    obj: Context, name: str, website: str | None, importance: float, tier: int
) -> None:
    """Add a company."""
    company_id = _catalog().add_company(
        obj.runtime, name=name, website=website, importance=importance, tier=tier
    )
    console.print(f"company {company_id}: {name}", markup=False)


@companies.command("list")
@format_option()
@pass_context
def companies_list(obj: Context, fmt: str) -> None:
    """List companies."""
    rows = _catalog().list_companies(obj.runtime)
    emit(
        fmt,
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
@click.option("--company", type=CompanyRef(), help="Company id or exact name.")
@click.option("--status", type=click.Choice([s.value for s in SensorStatus]))
@click.option("--surface", type=click.Choice([s.value for s in Surface]))
@format_option()
@click.pass_context
def sensors(
    ctx: click.Context, company: str | None, status: str | None, surface: str | None, fmt: str
) -> None:
    """List sensors (or `sensors add`)."""
    if ctx.invoked_subcommand is not None:
        return
    obj: Context = ctx.find_object(Context)
    rows = _catalog().list_sensors(obj.runtime, company=company, status=status, surface=surface)
    emit(
        fmt,
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
                duration(r["current_interval_s"]),
                r["next_run_at"],
                r["consecutive_failures"],
                r["url"],
                shorten(_why(r), 160),
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
@click.option("--company", type=CompanyRef(), required=True, help="Company id or exact name.")
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
    company_row = _catalog().resolve_company(runtime, company)
    sensor_id = _catalog().add_sensor(
        runtime,
        company_id=company_row["id"],
        surface=surface,
        url=url,
        connector=connector,
        fetch_now=fetch_now,
    )
    console.print(f"sensor {sensor_id}: {company_row['name']} {surface} {url}", markup=False)

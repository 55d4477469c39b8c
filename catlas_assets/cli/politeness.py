"""Commands about robots.txt and the review queue."""

from __future__ import annotations

import json

import click

from catlas_assets.cli.app import (
    EXIT_RUN_FAILED,
    Context,
    cli,
    console,
    pass_context,
    shorten,
    table,
    when,
)
from catlas_assets.domain.vocabulary import (
    ReviewKind,
    ReviewStatus,
)


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
    table(
        ["id", "kind", "status", "sensor", "company", "opened", "detail"],
        [
            (
                r["id"],
                r["kind"],
                r["status"],
                r["sensor_id"],
                r["company_id"],
                when(r["created_at"]),
                shorten(json.dumps(r["detail"], default=str, sort_keys=True), 160),
            )
            for r in rows
        ],
        title=f"{len(rows)} review item(s)",
    )

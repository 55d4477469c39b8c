"""`catlas review list`: the review queue, what needs a person."""

from __future__ import annotations

import json

import click

from catlas_assets.cli.app import Context, cli, emit, pass_context, shorten
from catlas_assets.cli.output import format_option
from catlas_assets.domain.vocabulary import ReviewKind, ReviewStatus
from catlas_assets.services.review import list_review


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
@format_option()
@pass_context
def review_list(obj: Context, kind: str | None, status: str, fmt: str) -> None:
    """List review items, oldest first."""
    rows = list_review(obj.runtime, kind=kind, status=None if status == "all" else status)
    machine = fmt != "table"
    emit(
        fmt,
        ["id", "kind", "status", "sensor", "company", "opened", "detail"],
        [
            (
                r["id"],
                r["kind"],
                r["status"],
                r["sensor_id"],
                r["company_id"],
                r["created_at"],
                r["detail"]
                if machine
                else shorten(json.dumps(r["detail"], default=str, sort_keys=True), 160),
            )
            for r in rows
        ],
        title=f"{len(rows)} review item(s)",
    )

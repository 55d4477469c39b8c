"""`catlas review list`: the review queue, what needs a person."""

from __future__ import annotations

import json

import click

from catlas_assets.cli.app import Context, cli, pass_context, shorten, table, when
from catlas_assets.domain.vocabulary import ReviewKind, ReviewStatus


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
    from catlas_assets.services.review import list_review

    rows = list_review(obj.runtime, kind=kind, status=None if status == "all" else status)
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

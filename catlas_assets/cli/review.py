"""`catlas review list|show|accept|reject`: the review queue, what needs a person."""

from __future__ import annotations

import json

import click

from catlas_assets.cli.app import Context, cli, console, emit, pass_context, shorten, table, when
from catlas_assets.cli.output import format_option
from catlas_assets.domain.vocabulary import ReviewKind, ReviewStatus
from catlas_assets.option_types import ROW_ID


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
    from catlas_assets.services.review import list_review

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


def _review():  # type: ignore[no-untyped-def]
    """The review service, imported by the commands that use it (it opens the state store)."""
    from catlas_assets.services import review

    return review


def _print_item(item: dict) -> None:
    console.print(
        f"review item {item['id']}: {item['kind']} ({item['status']}), sensor {item['sensor_id']}, "
        f"company {item['company_id']}, opened {when(item['created_at'])}"
        + (f", closed {when(item['closed_at'])}" if item.get("closed_at") else "")
    )
    detail = dict(item["detail"] or {})
    candidates = detail.pop("candidates", None)
    for key, value in sorted(detail.items()):
        console.print(f"  {key}: {json.dumps(value, default=str, sort_keys=True)}", markup=False)
    if candidates:
        table(
            ["candidate", "source", "simhash distance", "ratio", "passes"],
            [(c["url"], c["source"], c["distance"], c["ratio"], c["passes"]) for c in candidates],
        )


@review.command("show")
@click.argument("item_id", type=ROW_ID)
@pass_context
def review_show(obj: Context, item_id: int) -> None:
    """One review item in full, with its candidates and its sensor."""
    item = _review().show_review(obj.runtime, item_id)
    _print_item(item)
    sensor = item.get("sensor")
    if sensor:
        console.print(
            f"sensor {sensor['id']}: {sensor['surface']} {sensor['url']} ({sensor['status']}, "
            f"{sensor['consecutive_failures']} failure(s), last {sensor['last_failure_class'] or '-'})",
            markup=False,
        )


@review.command("accept")
@click.argument("item_id", type=ROW_ID)
@click.option("--to", "to", help="The candidate URL to migrate to (when there are several).")
@click.option("--note", default="", help="Why, for the record.")
@pass_context
def review_accept(obj: Context, item_id: int, to: str | None, note: str) -> None:
    """Accept: perform a migration, unblock a source robots.txt allows again, acknowledge."""
    item = _review().accept_review(obj.runtime, item_id, to=to, note=note)
    _print_item(item)


@review.command("reject")
@click.argument("item_id", type=ROW_ID)
@click.option(
    "--retire/--keep",
    default=False,
    show_default=True,
    help="Retire the item's sensor, or keep it as it is.",
)
@click.option("--note", default="", help="Why, for the record.")
@pass_context
def review_reject(obj: Context, item_id: int, retire: bool, note: str) -> None:
    """Reject: close the item; the sensor is retired (--retire) or kept (--keep)."""
    item = _review().reject_review(obj.runtime, item_id, retire=retire, note=note)
    _print_item(item)

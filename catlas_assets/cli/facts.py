"""CLI commands about facts: connectors, the change inbox, the notifier and the file tools.

Thin fronts over the services, like every command.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import click

from catlas_assets.cli.app import Context, cli, console, emit, pass_context, when
from catlas_assets.cli.output import format_option, write_json
from catlas_assets.domain.vocabulary import Surface
from catlas_assets.option_types import CompanyRef, count
from catlas_assets.settings import parse_utc_instant


@cli.command("connectors")
@format_option()
@pass_context
def connectors_cmd(obj: Context, fmt: str) -> None:
    """The connector registry with each connector's stats (from the `connectors` table)."""
    from catlas_assets.services.connector_stats import connector_table

    emit(
        fmt,
        ["name", "kind", "version", "runs", "failures", "schema", "entities", "last run", "reads"],
        [
            (
                c.name,
                c.kind,
                c.version,
                c.runs,
                c.failures,
                c.schema_failures,
                c.entities_last,
                c.last_run_at,
                c.description,
            )
            for c in connector_table(obj.runtime)
        ],
    )


@cli.group("changes", invoke_without_command=True)
@click.option("--pending", is_flag=True, help="Only changes not delivered yet.")
@click.option("--company", type=CompanyRef(), help="Company id or exact name.")
@click.option("--since", help="ISO-8601 UTC instant, e.g. 2026-01-05T00:00:00Z.")
@format_option()
@click.pass_context
def changes_cmd(
    ctx: click.Context, pending: bool, company: str | None, since: str | None, fmt: str
) -> None:
    """The change inbox: meaningful-or-above changes, pending or delivered (`changes show`)."""
    if ctx.invoked_subcommand is not None:
        return
    from catlas_assets.services.change_inbox import list_changes

    obj: Context = ctx.find_object(Context)
    since_at = parse_utc_instant(since, "--since") if since else None
    rows = list_changes(obj.runtime, pending=pending, company=company, since=since_at)
    emit(
        fmt,
        ["detected", "company", "surface", "kind", "status", "change", "summary"],
        [
            (
                r["detected_at"],
                r["company"],
                r["surface"],
                r["kind"],
                r["status"],
                r["change_id"],
                r["summary"],
            )
            for r in rows
        ],
        title=f"{len(rows)} changes",
    )


@changes_cmd.command("show")
@click.argument("change_id")
@click.option(
    "--html", "html_file", type=click.Path(path_type=Path), help="Write a side-by-side HTML diff."
)
@click.option("--json", "as_json", is_flag=True, help="The change and its delta as JSON.")
@pass_context
def changes_show(obj: Context, change_id: str, html_file: Path | None, as_json: bool) -> None:
    """One change: its row, structured delta and the unified diff of the two snapshots' text."""
    from catlas_assets.services.change_view import show

    view = show(obj.runtime, change_id)
    c = view.change
    if as_json:
        write_json({**c, "structured_delta": view.structured_delta, "diff": view.unified_diff})
    else:
        console.print(
            f"[bold]{c['change_id']}[/]  {c['kind']} ({c['significance']:.2f})  status {c['status']}"
        )
        for label, value in (
            ("company", c["company_name"]),
            ("surface", c["surface"]),
            ("url", c["url"]),
            ("detected", when(c["detected_at"])),
            ("summary", c["summary"]),
        ):
            console.print(f"{label:>9}: {value}", markup=False, highlight=False, soft_wrap=True)
        click.echo("structured delta:")
        click.echo(json.dumps(view.structured_delta, indent=2, ensure_ascii=False, default=str))
        click.echo("diff of the normalized text:")
        click.echo(view.unified_diff or "(the normalized text is the same)")
    if html_file is not None:
        html_file.write_text(view.html(), encoding="utf-8")
        click.echo(f"side-by-side diff written to {html_file}", err=True)


@cli.command("feed")
@click.option(
    "--company", type=CompanyRef(), help="Company id or exact name (default: every company)."
)
@click.option(
    "--kind",
    type=click.Choice(["minor", "meaningful", "major", "critical"]),
    default="meaningful",
    show_default=True,
    help="This kind or above.",
)
@click.option("--limit", type=count(), default=200, show_default=True)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    required=True,
    help="The Atom file to write ('-': stdout).",
)
@pass_context
def feed_cmd(obj: Context, company: str | None, kind: str, limit: int, out: Path) -> None:
    """Write an Atom 1.0 feed of changes (one entry per change, stable ids)."""
    from catlas_assets.services.change_feed import build_feed

    feed = build_feed(obj.runtime, company=company, kind=kind, limit=limit)
    if str(out) == "-":
        click.echo(feed.document.decode("utf-8"))
        return
    out.write_bytes(feed.document)
    click.echo(f"{feed.entries} entries written to {out}", err=True)


@cli.command("notify")
@pass_context
def notify_cmd(obj: Context) -> None:
    """Deliver pending changes to CATLAS_NOTIFY_WEBHOOK_URL and mark them delivered."""
    from catlas_assets.services.notify import deliver_pending

    result = deliver_pending(obj.runtime)
    console.print(
        f"delivered {result.delivered}, failed {result.failed}, still pending {result.waiting}"
    )


def _surface_option(default: str | None = None):  # type: ignore[no-untyped-def]
    return click.option(
        "--surface",
        type=click.Choice([s.value for s in Surface]),
        default=default,
        required=default is None,
        help="The surface the page is (decides what is extracted).",
    )


@cli.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@_surface_option()
@click.option("--connector", default="generic_html", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_context
def diff_cmd(
    obj: Context, old: Path, new: Path, surface: str, connector: str, as_json: bool
) -> None:
    """Significance, kind, reasons, summary and structured delta between two files."""
    from catlas_assets.services.offline import diff_files

    result = diff_files(
        old, new, surface=surface, connector=connector, now=_now(obj), settings=obj.settings
    )
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
        return
    console.print(f"kind: [bold]{result['kind']}[/]  significance: {result['significance']:.4f}")
    console.print(f"summary: {result['summary']}", markup=False)
    for reason in result["reasons"]:
        console.print(f"  - {reason}", markup=False)
    click.echo(json.dumps(result["structured_delta"], indent=2, ensure_ascii=False, default=str))


def run_file(obj: Context, page: Path, surface: str | None, connector: str) -> None:
    """`catlas run-sensor --file`: extract a local page and print it; writes nothing."""
    from catlas_assets.services.offline import extract_file

    normalized, extraction = extract_file(
        page, surface=surface or "homepage", connector=connector, now=_now(obj)
    )
    out = {
        "file": str(page),
        "normalized_hash": normalized.normalized_hash,
        "structured_hash": extraction.content_hash(),
        "blocks": len(normalized.blocks),
        "summary": extraction.summary(),
        "extraction": extraction.to_dict(),
    }
    click.echo(json.dumps(out, indent=2, ensure_ascii=False, default=str))


def _now(obj: Context) -> datetime:
    from catlas_assets.services import clock

    return clock.now(obj.settings)

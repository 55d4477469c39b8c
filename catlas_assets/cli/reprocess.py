"""`catlas reprocess`: re-derive a range of hours from the archive (no network)."""

from __future__ import annotations

import click

from catlas_assets.cli.app import Context, cli, console, finish, pass_context, table
from catlas_assets.domain.vocabulary import Surface
from catlas_assets.option_types import CompanyRef


@cli.command("reprocess")
@click.option("--from", "start", required=True, help="First hour (ISO date or instant, UTC).")
@click.option("--to", "end", required=True, help="End, exclusive (ISO date or instant, UTC).")
@click.option("--surface", type=click.Choice([s.value for s in Surface]), help="Only this surface.")
@click.option("--company", type=CompanyRef(), help="Only this company (id or name).")
@pass_context
def reprocess_cmd(
    obj: Context, start: str, end: str, surface: str | None, company: str | None
) -> None:
    """Re-derive snapshots, changes and entity events of a range of hours from the archived
    raw bytes with the current extractor (no network request)."""
    from catlas_assets.services.reprocess import reprocess, scope_of

    runtime = obj.runtime
    runtime.check_ready()
    scope = scope_of(runtime, start, end, surface=surface, company=company)
    result = reprocess(runtime, scope)
    rows = [
        (
            partition,
            *(
                f"{counts.old[t]} -> {counts.new[t]}"
                for t in ("snapshots", "changes", "entity_events")
            ),
        )
        for partition, counts in sorted(result.hours.items())
        if any(counts.old.values()) or any(counts.new.values())
    ]
    if rows:
        table(("hour", "snapshots", "changes", "entity_events"), rows)
    console.print(
        f"extractor: {', '.join(result.old_extractor_versions) or 'none'} -> "
        f"{result.new_extractor_version}"
    )
    finish(result.report)

"""Commands over the lake: SQL and compaction."""

from __future__ import annotations

import csv
import json
import sys

import click

from catlas_assets.cli.app import (
    Context,
    cli,
    console,
    pass_context,
    table,
)


# -- the lake ------------------------------------------------------------------------------
@cli.command("sql")
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table")
@pass_context
def sql_cmd(obj: Context, query: str, fmt: str) -> None:
    """Run SQL against the lake's tables (DuckDB views named like the tables)."""
    from catlas_assets.services import sql

    result = sql.query(obj.runtime, query)
    if fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(result.columns)
        writer.writerows(result.rows)
    elif fmt == "json":
        rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
        click.echo(json.dumps(rows, default=str, indent=2))
    else:
        table(result.columns, result.rows)


@cli.command("compact")
@pass_context
def compact(obj: Context) -> None:
    """Flush pending lake rows and compact every hour partition into one file per table."""
    from catlas_assets.services.compaction import compact_all

    results = compact_all(obj.runtime)
    merged = [r for r in results if r.files_before > 1]
    console.print(f"{len(results)} partitions checked, {len(merged)} compacted")

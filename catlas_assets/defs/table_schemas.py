"""Column schemas of the lake tables as Dagster table metadata (shown on each asset)."""

from __future__ import annotations

from typing import Any

import dagster as dg

from catlas_assets.services.lake_schema import columns


def table_schema(table: str) -> dg.TableSchema:
    return dg.TableSchema(
        columns=[dg.TableColumn(name=name, type=kind) for name, kind in columns(table)]
    )


def lake_asset_metadata(table: str) -> dict[str, Any]:
    """The definition-time metadata of a lake asset: its columns and where it lives."""
    return {
        "dagster/column_schema": table_schema(table),
        "lake_table": table,
        "partitioning": "date=YYYY-MM-DD/hour=HH (UTC event time)",
    }

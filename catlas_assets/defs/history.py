"""The lake's history tables as Dagster assets on one hourly partitions definition.

Ticks append rows all hour; materializing an hour compacts what they wrote into one file
per table and records the row counts (the checks are in `checks.py`).
"""

import dagster as dg

from catlas_assets.defs.partitions import hourly_partitions, lake_partition
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import compaction, periodic

HISTORY_TABLES = ("observations", "snapshots", "changes", "entity_events")
GROUP = "lake"


def _history_asset(table: str) -> dg.AssetsDefinition:
    deps = {
        "snapshots": ["observations"],
        "changes": ["snapshots"],
        "entity_events": ["snapshots"],
    }.get(table, [])

    @dg.asset(
        name=table,
        group_name=GROUP,
        partitions_def=hourly_partitions,
        deps=deps,
        kinds={"parquet", "duckdb"},
        description=f"The `{table}` lake table for one UTC hour (compacted on materialization).",
        backfill_policy=dg.BackfillPolicy.single_run(),
    )
    def _asset(context: dg.AssetExecutionContext, catlas: CatlasResource) -> dg.MaterializeResult:
        partitions = [lake_partition(key) for key in context.partition_keys]
        # Under the compaction lease: never at the same time as a daemon's compaction.
        with periodic.leased(catlas.runtime, "lake_compaction"):
            totals = compaction.compact_hours(catlas.runtime, partitions, table)
        return dg.MaterializeResult(
            metadata={
                "rows": dg.MetadataValue.int(totals.rows),
                "files_compacted": dg.MetadataValue.int(totals.files),
                "bytes": dg.MetadataValue.int(totals.bytes),
                "duplicates_dropped": dg.MetadataValue.int(totals.duplicates_dropped),
                "partitions": dg.MetadataValue.int(len(context.partition_keys)),
            }
        )

    return _asset


history_assets = [_history_asset(table) for table in HISTORY_TABLES]

defs = dg.Definitions(assets=history_assets)

"""The lake's history tables as Dagster assets on one hourly partitions definition.

Ticks append rows all hour; materializing an hour compacts what they wrote into one file
per table and records the row counts. Asset checks guard the invariants analysts rely on.
"""

import dagster as dg

from catlas_assets.partitions import hourly_partitions, lake_partition
from catlas_assets.runtime_resource import CatlasRuntime
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
    def _asset(context: dg.AssetExecutionContext, catlas: CatlasRuntime) -> dg.MaterializeResult:
        runtime = catlas.build()
        try:
            rows = files = size = dropped = 0
            # Under the compaction lease: never at the same time as a daemon's compaction.
            with periodic.leased(runtime, "lake_compaction"):
                results = [
                    result
                    for key in context.partition_keys
                    for result in compaction.compact_partition(
                        runtime, lake_partition(key), (table,)
                    )
                ]
            for result in results:
                rows += result.rows
                files += result.files_before
                size += result.bytes
                dropped += result.duplicates_dropped
            return dg.MaterializeResult(
                metadata={
                    "rows": dg.MetadataValue.int(rows),
                    "files_compacted": dg.MetadataValue.int(files),
                    "bytes": dg.MetadataValue.int(size),
                    "duplicates_dropped": dg.MetadataValue.int(dropped),
                    "partitions": dg.MetadataValue.int(len(context.partition_keys)),
                }
            )
        finally:
            runtime.close()

    return _asset


history_assets = [_history_asset(table) for table in HISTORY_TABLES]


def _unique_ids_check(table: str, id_column: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=table, name=f"{table}_unique_ids", blocking=False)
    def _check(catlas: CatlasRuntime) -> dg.AssetCheckResult:
        runtime = catlas.build()
        try:
            con = runtime.lake.connect()
            total, distinct = con.execute(
                f"SELECT count(*), count(DISTINCT {id_column}) FROM {table}"
            ).fetchone() or (0, 0)
        finally:
            runtime.close()
        return dg.AssetCheckResult(
            passed=total == distinct,
            metadata={"rows": total, "distinct_ids": distinct},
        )

    return _check


@dg.asset_check(asset="changes", name="changes_have_snapshots", blocking=False)
def changes_have_snapshots(catlas: CatlasRuntime) -> dg.AssetCheckResult:
    """Every change points at a snapshot that exists (no orphans)."""
    runtime = catlas.build()
    try:
        orphans = (
            runtime.lake.connect()
            .execute(
                "SELECT count(*) FROM changes c LEFT JOIN snapshots s USING (snapshot_id) "
                "WHERE s.snapshot_id IS NULL"
            )
            .fetchone()
        )
    finally:
        runtime.close()
    count = orphans[0] if orphans else 0
    return dg.AssetCheckResult(passed=count == 0, metadata={"orphans": count})


lake_checks = [
    _unique_ids_check("observations", "observation_id"),
    _unique_ids_check("snapshots", "snapshot_id"),
    _unique_ids_check("changes", "change_id"),
    changes_have_snapshots,
]

defs = dg.Definitions(
    assets=history_assets,
    asset_checks=lake_checks,
)

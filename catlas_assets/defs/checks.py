"""Asset checks on the history tables: the invariants analysts rely on."""

import dagster as dg

from catlas_assets.services import lake_checks
from catlas_assets.services.runtime import Lake, ObjectArchive


def _unique_ids_check(table: str, id_column: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=table, name=f"{table}_unique_ids", blocking=False)
    def _check(lake: dg.ResourceParam[Lake]) -> dg.AssetCheckResult:
        total, distinct = lake_checks.id_counts(lake, table, id_column)
        return dg.AssetCheckResult(
            passed=total == distinct,
            metadata={"rows": total, "distinct_ids": distinct},
        )

    return _check


@dg.asset_check(asset="changes", name="changes_have_snapshots", blocking=False)
def changes_have_snapshots(lake: dg.ResourceParam[Lake]) -> dg.AssetCheckResult:
    """Every change points at a snapshot that exists (no orphans)."""
    count = lake_checks.orphan_changes(lake)
    return dg.AssetCheckResult(passed=count == 0, metadata={"orphans": count})


@dg.asset_check(asset="observations", name="object_keys_resolve", blocking=False)
def object_keys_resolve(
    lake: dg.ResourceParam[Lake], archive: dg.ResourceParam[ObjectArchive]
) -> dg.AssetCheckResult:
    """Every archive key an observation or a snapshot names is in the archive."""
    dangling = lake_checks.dangling_keys(lake, archive)
    return dg.AssetCheckResult(
        passed=not dangling, metadata={"dangling": len(dangling), "first": dangling[:5]}
    )


history_checks = [
    _unique_ids_check("observations", "observation_id"),
    _unique_ids_check("snapshots", "snapshot_id"),
    _unique_ids_check("changes", "change_id"),
    changes_have_snapshots,
    object_keys_resolve,
]

defs = dg.Definitions(asset_checks=history_checks)

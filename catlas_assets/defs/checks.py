"""Asset checks on the history tables, one evaluation per hour partition.

Each check reads only its partition's files (services/lake_checks.py). A run over a range
of hours (a single-run backfill) logs one evaluation per hour itself, then returns the
range's verdict, so the UI shows each hour's result, not one stamped on all of them.
"""

from collections.abc import Callable

import dagster as dg

from catlas_assets.defs.dagster_previews import partitioned_checks
from catlas_assets.defs.partitions import hourly_partitions, lake_partition
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import lake_checks
from catlas_assets.services.lake_checks import Finding
from catlas_assets.services.runtime import Lake, ObjectArchive, Runtime

Probe = Callable[[Runtime, str], Finding]


def _partition_check(
    asset: str, name: str, description: str, probe: Probe
) -> dg.AssetChecksDefinition:
    with partitioned_checks():  # preview in the pinned Dagster (dagster_previews.py)

        @dg.asset_check(
            asset=asset,
            name=name,
            description=description,
            partitions_def=hourly_partitions,
            blocking=False,
        )
        def _check(
            context: dg.AssetCheckExecutionContext, catlas: CatlasResource
        ) -> dg.AssetCheckResult:
            op = context.op_execution_context
            keys = op.partition_keys if op.has_partition_key_range else [op.partition_key]
            findings = {key: probe(catlas.runtime, lake_partition(key)) for key in keys}
            if len(keys) == 1:
                finding = findings[keys[0]]
                return dg.AssetCheckResult(passed=finding.passed, metadata=finding.metadata)
            for key, finding in findings.items():
                context.op_execution_context.log_event(
                    dg.AssetCheckEvaluation(
                        asset_key=dg.AssetKey(asset),
                        check_name=name,
                        passed=finding.passed,
                        metadata=finding.metadata,
                        partition=key,
                    )
                )
            failing = [key for key, finding in findings.items() if not finding.passed]
            return dg.AssetCheckResult(
                passed=not failing,
                metadata={"partitions": len(keys), "failing_partitions": failing[:10]},
            )

    return _check


def _unique(table: str) -> dg.AssetChecksDefinition:
    return _partition_check(
        table,
        f"{table}_unique_ids",
        f"No {table} id is stored twice in the hour.",
        lambda runtime, part: lake_checks.unique_ids(runtime, table, part),
    )


def _orphans(table: str, parent: str, column: str) -> dg.AssetChecksDefinition:
    return _partition_check(
        table,
        f"{table}_have_{parent}",
        f"Every row of {table} in the hour points at a {parent} row ({column}).",
        lambda runtime, part: lake_checks.orphans(runtime, table, part, parent, column),
    )


def _archived(table: str) -> dg.AssetChecksDefinition:
    return _partition_check(
        table,
        f"{table}_keys_archived",
        f"Every archive key of {table} in the hour resolves in the object archive.",
        lambda runtime, part: lake_checks.missing_objects(runtime, table, part),
    )


def _schema(table: str) -> dg.AssetChecksDefinition:
    return _partition_check(
        table,
        f"{table}_schema",
        f"Every {table} file of the hour has the declared schema.",
        lambda runtime, part: lake_checks.schema_as_declared(runtime, table, part),
    )


@dg.asset_check(asset="observations", name="object_keys_resolve", blocking=False)
def object_keys_resolve(
    lake: dg.ResourceParam[Lake], archive: dg.ResourceParam[ObjectArchive]
) -> dg.AssetCheckResult:
    """Every archive key an observation or a snapshot names is in the archive."""
    dangling = lake_checks.dangling_keys(lake, archive)
    return dg.AssetCheckResult(
        passed=not dangling, metadata={"dangling": len(dangling), "first": dangling[:5]}
    )


HISTORY = ("observations", "snapshots", "changes", "entity_events")

history_checks = [
    *(_unique(table) for table in HISTORY),
    *(_schema(table) for table in HISTORY),
    _orphans("snapshots", "observations", "observation_id"),
    _orphans("changes", "snapshots", "snapshot_id"),
    _orphans("entity_events", "snapshots", "snapshot_id"),
    _archived("observations"),
    _archived("snapshots"),
    _partition_check(
        "observations",
        "observations_match_runs",
        "Each finished run of the hour wrote as many observations as its crawl_runs counters.",
        lake_checks.counts_match_runs,
    ),
    object_keys_resolve,
]

defs = dg.Definitions(asset_checks=history_checks)

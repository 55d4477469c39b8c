"""The lake's history tables as Dagster assets on one hourly partitions definition.

Ticks append rows all hour; materializing an hour compacts what they wrote into one file
per table and records the row counts (the checks are in `checks.py`).
"""

import dagster as dg

from catlas_assets.defs.dagster_previews import asset_backfill_policy
from catlas_assets.defs.partitions import hourly_partitions, lake_partition
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.defs.table_schemas import lake_asset_metadata
from catlas_assets.defs.verdict_metadata import tag_run, verdict_metadata
from catlas_assets.domain.vocabulary import RunOutcome
from catlas_assets.services import compaction, periodic, reprocess

# On a run of the `reprocess` job: the snapshots step re-derives its hours from the archive.
REPROCESS_TAG = "catlas/reprocess"

DESCRIPTIONS = {
    "observations": (
        "One row per sensor fetch of the hour: outcome, HTTP status, validators, hashes and "
        "the archive keys of the raw bytes, text and blocks. Materializing an hour compacts "
        "the ticks' files into one and records the hour's rows, bytes and outcome mix."
    ),
    "snapshots": (
        "One row per new version of a surface in the hour (first fetch or a change), with "
        "its extraction summary and archive keys. Re-derived from raw bytes by reprocess."
    ),
    "changes": (
        "One row per detected change of the hour: significance, kind, summary and the "
        "structured delta. Re-derived by reprocess."
    ),
    "entity_events": (
        "Entity reconciliation events of the hour (added, seen, updated, no_longer_listed, "
        "superseded, removed). Re-derived by reprocess; feeds the daily `entities`."
    ),
}
HISTORY_TABLES = ("observations", "snapshots", "changes", "entity_events")
GROUP = "lake"


def _history_asset(table: str) -> dg.AssetsDefinition:
    deps = {
        "snapshots": ["observations"],
        "changes": ["snapshots"],
        "entity_events": ["snapshots"],
    }.get(table, [])

    with asset_backfill_policy():  # beta in the pinned Dagster (dagster_previews.py)

        @dg.asset(
            name=table,
            group_name=GROUP,
            partitions_def=hourly_partitions,
            deps=deps,
            kinds={"parquet", "duckdb"},
            owners=["team:catlas-data"],
            metadata=lake_asset_metadata(table),
            description=DESCRIPTIONS[table],
            backfill_policy=dg.BackfillPolicy.single_run(),
        )
        def _asset(
            context: dg.AssetExecutionContext, catlas: CatlasResource
        ) -> dg.MaterializeResult:
            partitions = {lake_partition(key): key for key in context.partition_keys}
            if context.run.tags.get(REPROCESS_TAG) == "true" and table == "snapshots":
                return _reprocess(context, catlas, partitions)
            # Under the compaction lease: never at the same time as a daemon's compaction.
            with periodic.leased(catlas.runtime, "lake_compaction"):
                figures = compaction.compact_hours(catlas.runtime, list(partitions), table)
            # One metadata set per hour, so a range run stamps each hour with its own figures.
            for hour in figures:
                context.add_asset_metadata(
                    hour_metadata(hour), partition_key=partitions[hour.partition]
                )
            return dg.MaterializeResult()

    return _asset


def hour_metadata(hour: compaction.HourFigures) -> dict[str, dg.MetadataValue]:
    metadata = {
        "rows": dg.MetadataValue.int(hour.rows),
        "files_compacted": dg.MetadataValue.int(hour.files),
        "bytes": dg.MetadataValue.int(hour.bytes),
        "duplicates_dropped": dg.MetadataValue.int(hour.duplicates_dropped),
        "partition": dg.MetadataValue.text(hour.partition),
    }
    for outcome, count in hour.outcomes.items():
        metadata[f"outcome/{outcome}"] = dg.MetadataValue.int(count)
    return metadata


def _reprocess(
    context: dg.AssetExecutionContext, catlas: CatlasResource, partitions: dict[str, str]
) -> dg.MaterializeResult:
    """Re-derive the run's hours from the archive (the `reprocess` job); one catlas run."""
    window = context.partition_time_window
    scope = reprocess.Scope(window.start, window.end)
    result = reprocess.reprocess(catlas.runtime, scope, launch_handle=context.run_id)
    for partition, key in partitions.items():
        counts = result.hours.get(partition, reprocess.HourCounts())
        metadata: dict[str, dg.MetadataValue] = {"partition": dg.MetadataValue.text(partition)}
        for name in reprocess.DERIVED:
            metadata[f"{name}/rows_old"] = dg.MetadataValue.int(counts.old.get(name, 0))
            metadata[f"{name}/rows_new"] = dg.MetadataValue.int(counts.new.get(name, 0))
        metadata["rows"] = dg.MetadataValue.int(counts.new.get("snapshots", 0))
        context.add_asset_metadata(metadata, partition_key=key)
    report = result.report
    tag_run(context, report)
    run_metadata = {
        **verdict_metadata(report),
        "extractor_version_old": ", ".join(result.old_extractor_versions) or "none",
        "extractor_version_new": result.new_extractor_version,
    }
    if report.outcome is RunOutcome.FAILED:
        raise dg.Failure(description=report.summary_line, metadata=run_metadata)
    context.log.info(report.summary_line)
    return dg.MaterializeResult(metadata=run_metadata)


history_assets = [_history_asset(table) for table in HISTORY_TABLES]

defs = dg.Definitions(assets=history_assets)

"""The `discovery` lake table as a Dagster asset on daily partitions.

Materializing today's partition (by the catlas clock) runs one onboarding batch (the same
service as `catlas onboard --pending`): it claims the due discover jobs, discovers each
company and appends every candidate it considered to that day of the `discovery` table.
Materializing a past day fetches nothing: it reports that day's batches as the lake holds
them. A day after today is refused. The batch is the unit of Dagster work, never a
single company.
"""

from datetime import date

import dagster as dg

from catlas_assets.defs.partitions import daily_partitions
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.defs.table_schemas import lake_asset_metadata
from catlas_assets.domain.vocabulary import RunOutcome
from catlas_assets.services.discovery_days import day_figures
from catlas_assets.services.onboarding import onboard_pending


@dg.asset(
    name="discovery",
    group_name="lake",
    partitions_def=daily_partitions,
    kinds={"parquet", "duckdb"},
    owners=["team:catlas-discovery"],
    metadata=lake_asset_metadata("discovery"),
    description=(
        "Every discovery candidate considered on this UTC day. Today's partition runs one "
        "onboarding batch of the due companies; a past day reports its own batches."
    ),
)
def discovery_asset(
    context: dg.AssetExecutionContext, catlas: CatlasResource
) -> dg.MaterializeResult:
    runtime = catlas.runtime
    day = date.fromisoformat(context.partition_key)
    today = runtime.clock.now().date()
    if day > today:
        raise dg.Failure(description=f"{day} is after today ({today}): nothing to discover yet")
    metadata: dict = {"day": str(day)}
    if day == today:
        result = onboard_pending(runtime, launch_handle=context.run_id)
        report = result.report
        metadata.update(
            {
                "catlas_run_id": report.run_id,
                "stop": report.stop.value,
                "outcome": report.outcome.value,
                "detail": report.detail,
                "companies_discovered": dg.MetadataValue.int(
                    len([c for c in result.companies if c.status in ("active", "no_website")])
                ),
                "companies_failed": dg.MetadataValue.int(
                    len([c for c in result.companies if c.status == "failed"])
                ),
                "sensors_created": dg.MetadataValue.int(result.sensors_created),
                "candidates": dg.MetadataValue.int(
                    sum(len(c.result.candidates) for c in result.companies if c.result)
                ),
            }
        )
        # The Dagster run fails exactly when the catlas verdict is failed.
        if report.outcome is RunOutcome.FAILED:
            raise dg.Failure(description=report.summary_line, metadata=metadata)
        context.log.info(report.summary_line)
    else:
        context.log.info(f"{day} is past: reporting its batches from the lake, no fetch")
    figures = day_figures(runtime, day)
    metadata.update({f"day/{k}": dg.MetadataValue.int(v) for k, v in figures.items()})
    return dg.MaterializeResult(metadata=metadata)


defs = dg.Definitions(assets=[discovery_asset])

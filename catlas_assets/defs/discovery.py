"""The `discovery` lake table as a Dagster asset on daily partitions.

Materializing a day runs one onboarding batch (the same service as `catlas onboard
--pending`): it claims the due discover jobs, discovers each company and appends every
candidate it considered to the `discovery` table. The batch is the unit of Dagster work,
never a single company.
"""

import dagster as dg

from catlas_assets.defs.partitions import daily_partitions
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.domain.vocabulary import RunOutcome
from catlas_assets.services.onboarding import onboard_pending


@dg.asset(
    name="discovery",
    group_name="lake",
    partitions_def=daily_partitions,
    kinds={"parquet", "duckdb"},
    description="Every discovery candidate considered on this UTC day (one onboarding batch).",
)
def discovery_asset(
    context: dg.AssetExecutionContext, catlas: CatlasResource
) -> dg.MaterializeResult:
    result = onboard_pending(catlas.runtime, launch_handle=context.run_id)
    report = result.report
    metadata = {
        "catlas_run_id": report.run_id,
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
    # The Dagster run fails exactly when the catlas verdict is failed.
    if report.outcome is RunOutcome.FAILED:
        raise dg.Failure(description=report.summary_line, metadata=metadata)
    context.log.info(report.summary_line)
    return dg.MaterializeResult(metadata=metadata)


defs = dg.Definitions(assets=[discovery_asset])

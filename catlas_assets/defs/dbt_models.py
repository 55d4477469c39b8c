"""The dbt_intel models as Dagster assets, downstream of the Python lake assets.

Each dbt source declares the lake asset it reads (`meta.dagster.asset_key` in
`_lake__sources.yml`), so the staging models hang under `observations`, `changes`,
`entity_events`, `companies`, `sensors` ... and the asset graph is one graph. A daily
schedule runs `dbt build` (models and their tests) over the runtime's lake.
"""

from collections.abc import Iterator
from typing import Any

import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets

from catlas_assets.defs.dbt_project import dbt_intel_project
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import dbt_build


@dbt_assets(manifest=dbt_intel_project.manifest_path, name="dbt_intel")
def dbt_intel_models(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, catlas: CatlasResource
) -> Iterator[Any]:
    with dbt_build.applied(catlas.runtime.settings):
        invocation = dbt.cli(["build"], context=context)
    yield from invocation.stream()


dbt_build_job = dg.define_asset_job(
    "dbt_build",
    selection=dg.AssetSelection.assets(dbt_intel_models),
    description="Build the dbt_intel models over the lake and run their tests (daily).",
)

daily_dbt_build = dg.ScheduleDefinition(
    job=dbt_build_job,
    cron_schedule="30 3 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Daily at 03:30 UTC: dbt build of the dbt_intel models and their tests.",
)

defs = dg.Definitions(
    assets=[dbt_intel_models],
    jobs=[dbt_build_job],
    schedules=[daily_dbt_build],
    resources={"dbt": DbtCliResource(project_dir=dbt_intel_project)},
)

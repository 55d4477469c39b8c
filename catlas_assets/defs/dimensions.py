"""The lake's dimensions (`companies`, `domains`, `sensors`, `change_deliveries`) as assets.

One multi-asset on the history tables' hourly partitions, so the hourly compaction job
refreshes them: each materialization rewrites today's snapshot from the state store.
"""

import dagster as dg

from catlas_assets.defs.partitions import hourly_partitions
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services.dimensions import DIMENSION_NAMES, export_dimensions

GROUP = "lake"


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            name,
            group_name=GROUP,
            kinds={"parquet", "duckdb"},
            description=f"The `{name}` dimension: the state store's rows, one snapshot a day.",
        )
        for name in DIMENSION_NAMES
    ],
    partitions_def=hourly_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
)
def dimensions(catlas: CatlasResource):  # type: ignore[no-untyped-def]
    exported = export_dimensions(catlas.runtime)
    for name, rows in exported.rows.items():
        yield dg.MaterializeResult(
            asset_key=name,
            metadata={"rows": dg.MetadataValue.int(rows), "day": exported.day},
        )


defs = dg.Definitions(assets=[dimensions])

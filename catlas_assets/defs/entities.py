"""The daily `entities` asset: the SCD2 view of every entity, derived from `entity_events`."""

from datetime import date

import dagster as dg

from catlas_assets.defs.partitions import daily_partitions
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.defs.table_schemas import lake_asset_metadata
from catlas_assets.services.entities import derive_entities


@dg.asset(
    name="entities",
    group_name="lake",
    partitions_def=daily_partitions,
    deps=["entity_events"],
    kinds={"parquet", "duckdb"},
    owners=["team:catlas-data"],
    metadata=lake_asset_metadata("entities"),
    description=(
        "Entities (jobs, people, products, pricing plans, news, locations, incidents) as SCD2 "
        "versions: first_seen_at, last_seen_at, removed_at, valid_from/valid_to. Each day's "
        "partition is the state as of that day: the previous day's state advanced by the "
        "day's entity_events."
    ),
)
def entities(context: dg.AssetExecutionContext, catlas: CatlasResource) -> dg.MaterializeResult:
    day = date.fromisoformat(context.partition_key)
    derived = derive_entities(catlas.runtime, day)
    context.log.info(f"{day}: {derived.rows} entity versions after {derived.events} events")
    return dg.MaterializeResult(
        metadata={
            "events": dg.MetadataValue.int(derived.events),
            "days_derived": dg.MetadataValue.int(derived.days_derived),
            "rows": dg.MetadataValue.int(derived.rows),
            "current": dg.MetadataValue.int(derived.current),
            "removed": dg.MetadataValue.int(derived.removed),
        }
    )


defs = dg.Definitions(assets=[entities])

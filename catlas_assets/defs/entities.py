"""The daily `entities` asset: the SCD2 view of every entity, derived from `entity_events`."""

import dagster as dg

from catlas_assets.defs.partitions import daily_partitions
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services.entities import derive_entities


@dg.asset(
    name="entities",
    group_name="lake",
    partitions_def=daily_partitions,
    deps=["entity_events"],
    kinds={"parquet", "duckdb"},
    description=(
        "Entities (jobs, people, products, pricing plans, news, locations, incidents) as SCD2 "
        "versions: first_seen_at, last_seen_at, removed_at, valid_from/valid_to. Derived whole "
        "from entity_events each day."
    ),
)
def entities(context: dg.AssetExecutionContext, catlas: CatlasResource) -> dg.MaterializeResult:
    derived = derive_entities(catlas.runtime)
    context.log.info(f"{derived.rows} entity versions from {derived.events} events")
    return dg.MaterializeResult(
        metadata={
            "events": dg.MetadataValue.int(derived.events),
            "rows": dg.MetadataValue.int(derived.rows),
            "current": dg.MetadataValue.int(derived.current),
            "removed": dg.MetadataValue.int(derived.removed),
        }
    )


defs = dg.Definitions(assets=[entities])

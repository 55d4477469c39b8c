"""The Dagster definitions of catlas's lake and operations, one module per concern.

`partitions` holds the hourly and daily time partitions the others share. Each other
module exposes `defs`, merged here: `resources` (the runtime per run and the named
adapters, per deployment), `history` (the hourly history tables), `dimensions` (the
catalog's daily snapshots), `checks` (their
invariants), `entities` (the daily SCD2 table), `change_feed` (the daily Atom feed),
`dbt_models` (the dbt_intel models over the lake, project in `dbt_project`),
`discovery` (the daily onboarding batch)
and `crawl_stats` (the crawl figures).
"""

import dagster as dg

from catlas_assets.defs import (
    change_feed,
    checks,
    crawl_stats,
    dbt_models,
    dimensions,
    discovery,
    entities,
    history,
    resources,
)

defs = dg.Definitions.merge(
    resources.defs,
    history.defs,
    dimensions.defs,
    checks.defs,
    entities.defs,
    change_feed.defs,
    dbt_models.defs,
    discovery.defs,
    crawl_stats.defs,
)

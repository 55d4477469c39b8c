"""The Dagster definitions of catlas's lake and operations, one module per concern.

`partitions` holds the hourly and daily time partitions the others share. Each other
module exposes `defs`, merged here: `resources` (the runtime per run and the named
adapters, per deployment), `history` (the hourly history tables), `checks` (their
invariants), `entities` (the daily SCD2 table), `discovery` (the daily onboarding batch)
and `crawl_stats` (the crawl figures).
"""

import dagster as dg

from catlas_assets.defs import checks, crawl_stats, discovery, entities, history, resources

defs = dg.Definitions.merge(
    resources.defs,
    history.defs,
    checks.defs,
    entities.defs,
    discovery.defs,
    crawl_stats.defs,
)

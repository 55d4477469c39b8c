"""The code location: the lake assets plus the orchestration that drives them.

This module is the composition root, the one place that imports `sensors_dag`; everything
else in `catlas_assets` is imported by `sensors_dag`, never the other way round.
"""

import dagster as dg

from catlas_assets import crawl_stats_asset, discovery_assets, entities_asset, lake_assets
from catlas_assets.runtime_resource import CatlasRuntime
from sensors_dag import definitions as orchestration

defs = dg.Definitions.merge(
    lake_assets.defs,
    crawl_stats_asset.defs,
    discovery_assets.defs,
    entities_asset.defs,
    orchestration.defs,
    dg.Definitions(resources={"catlas": CatlasRuntime()}),
)

"""The code location: the lake assets plus the orchestration that drives them.

This module is the composition root, the one place that imports `sensors_dag`; everything
else in `catlas_assets` is imported by `sensors_dag`, never the other way round.
"""

import dagster as dg

from catlas_assets import lake_assets
from catlas_assets.runtime_resource import CatlasRuntime
from sensors_dag import definitions as orchestration

defs = dg.Definitions.merge(
    lake_assets.defs,
    orchestration.defs,
    dg.Definitions(resources={"catlas": CatlasRuntime()}),
)

"""The code location: catlas's definitions plus the orchestration that drives them.

This module is the composition root, the one place that imports `sensors_dag`; everything
else in `catlas_assets` is imported by `sensors_dag`, never the other way round.
"""

import dagster as dg

from catlas_assets.defs import defs as catlas_defs
from sensors_dag.definitions import defs as orchestration_defs

defs = dg.Definitions.merge(catlas_defs, orchestration_defs)

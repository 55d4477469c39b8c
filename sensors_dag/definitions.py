"""What the orchestration package contributes to the code location."""

from __future__ import annotations

import dagster as dg

from sensors_dag.jobs import compaction_job, crawl_tick
from sensors_dag.schedules import hourly_compaction
from sensors_dag.sensors import due_sensors

defs = dg.Definitions(
    jobs=[crawl_tick, compaction_job],
    sensors=[due_sensors],
    schedules=[hourly_compaction],
)

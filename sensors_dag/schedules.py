"""Schedules: hourly compaction of the lake's history tables."""

from __future__ import annotations

import dagster as dg

from sensors_dag.jobs import compaction_job

hourly_compaction = dg.build_schedule_from_partitioned_job(
    compaction_job, minute_of_hour=10, default_status=dg.DefaultScheduleStatus.STOPPED
)

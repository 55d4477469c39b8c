"""What the orchestration package contributes to the code location."""

from __future__ import annotations

import dagster as dg

from sensors_dag.jobs import compaction_job, crawl_tick
from sensors_dag.notifications import (
    daily_change_feed,
    daily_entities,
    derive_entities_job,
    notify_changes,
    pending_changes,
    refresh_feed_job,
)
from sensors_dag.onboarding import onboarding_job, pending_companies
from sensors_dag.periodic import periodic_jobs, periodic_schedules
from sensors_dag.schedules import hourly_compaction
from sensors_dag.sensors import due_sensors

defs = dg.Definitions(
    jobs=[
        crawl_tick,
        compaction_job,
        onboarding_job,
        notify_changes,
        derive_entities_job,
        refresh_feed_job,
        *periodic_jobs,
    ],
    sensors=[due_sensors, pending_companies, pending_changes],
    schedules=[hourly_compaction, daily_entities, daily_change_feed, *periodic_schedules],
)

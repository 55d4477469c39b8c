"""What the orchestration package contributes to the code location."""

from __future__ import annotations

import dagster as dg

from sensors_dag.jobs import compaction_job, crawl_tick, reprocess_job
from sensors_dag.maintenance import (
    budgets_reset_job,
    budgets_reset_schedule,
    maintenance,
    maintenance_schedule,
)
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
from sensors_dag.repair import failed_runs_to_review, repair_job, repair_schedule
from sensors_dag.schedules import hourly_compaction
from sensors_dag.sensors import due_sensors
from sensors_dag.site_crawl import site_crawl

defs = dg.Definitions(
    jobs=[
        crawl_tick,
        compaction_job,
        reprocess_job,
        onboarding_job,
        notify_changes,
        derive_entities_job,
        repair_job,
        site_crawl,
        refresh_feed_job,
        *periodic_jobs,
        maintenance,
        budgets_reset_job,
    ],
    sensors=[due_sensors, pending_companies, pending_changes, failed_runs_to_review],
    schedules=[
        hourly_compaction,
        daily_entities,
        daily_change_feed,
        repair_schedule,
        *periodic_schedules,
        maintenance_schedule,
        budgets_reset_schedule,
    ],
)

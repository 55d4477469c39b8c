"""Time partitions of the lake assets: one hourly definition shared by every history table
(one job or backfill covers observations, snapshots and changes together) and one daily
definition shared by the daily tables (`discovery`, `entities`)."""

from __future__ import annotations

from datetime import datetime

import dagster as dg

LAKE_START = "2026-01-01-00:00"

hourly_partitions = dg.HourlyPartitionsDefinition(start_date=LAKE_START, timezone="UTC")
daily_partitions = dg.DailyPartitionsDefinition(start_date=LAKE_START[:10], timezone="UTC")


def lake_partition(partition_key: str) -> str:
    """Dagster's hourly key ("2026-01-05-08:00") as the lake's Hive path ("date=.../hour=08")."""
    instant = datetime.strptime(partition_key, "%Y-%m-%d-%H:%M")
    return f"date={instant:%Y-%m-%d}/hour={instant:%H}"

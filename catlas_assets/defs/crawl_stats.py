"""`crawl_stats`: the figures of `catlas stats-crawl` as Dagster asset metadata.

Materialized on a schedule (sensors_dag/periodic.py), it plots throughput, the outcome
mix, failing/stale counts and the due backlog over time in the Dagster UI; the crawl tick
op attaches the same figures to each tick run.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services.crawl_stats import crawl_stats as read_crawl_stats


def stats_metadata(stats: dict[str, Any]) -> dict[str, Any]:
    """Flat Dagster metadata (`crawl/...`) from the stats-crawl figures."""
    metadata: dict[str, Any] = {}
    for name, value in stats.items():
        if isinstance(value, dict):
            for key, inner in value.items():
                metadata[f"crawl/{name}/{key}"] = dg.MetadataValue.int(int(inner))
        elif isinstance(value, int):
            metadata[f"crawl/{name}"] = dg.MetadataValue.int(value)
        else:
            metadata[f"crawl/{name}"] = dg.MetadataValue.float(float(value))
    return metadata


@dg.asset(
    name="crawl_stats",
    group_name="operations",
    owners=["team:catlas-data"],
    kinds={"sqlite", "postgresql"},
    description="Throughput, outcome mix, failing/stale counts and due backlog (stats-crawl).",
)
def crawl_stats(catlas: CatlasResource) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata=stats_metadata(read_crawl_stats(catlas.runtime)))


defs = dg.Definitions(assets=[crawl_stats])

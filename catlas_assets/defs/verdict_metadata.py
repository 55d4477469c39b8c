"""A catlas run's verdict as Dagster shows it: step metadata and tags on the Dagster run."""

from __future__ import annotations

from typing import Any

import dagster as dg

from catlas_assets.services.runs import RunReport


def verdict_metadata(report: RunReport) -> dict[str, Any]:
    return {
        "catlas_run_id": report.run_id,
        "stop": report.stop.value,
        "outcome": report.outcome.value,
        "detail": report.detail,
        "coverage_gaps": dg.MetadataValue.int(report.coverage_gaps),
        **{
            f"counter/{name}": dg.MetadataValue.int(int(value))
            for name, value in report.counters.items()
        },
    }


def tag_run(context: dg.OpExecutionContext | dg.AssetExecutionContext, report: RunReport) -> None:
    """The verdict on the Dagster run itself, so the runs list shows and filters by it."""
    context.instance.add_run_tags(
        context.run_id,
        {
            "catlas/run_id": report.run_id,
            "catlas/outcome": report.outcome.value,
            "catlas/stop": report.stop.value,
        },
    )

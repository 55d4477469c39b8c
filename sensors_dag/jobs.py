"""Jobs: the crawl tick (the same service `catlas schedule --once` runs) and compaction."""

import dagster as dg

from catlas_assets.defs.crawl_stats import stats_metadata
from catlas_assets.defs.dimensions import dimensions
from catlas_assets.defs.history import REPROCESS_TAG, history_assets
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.defs.verdict_metadata import tag_run
from catlas_assets.domain.vocabulary import RunKind, RunOutcome
from catlas_assets.services.crawl_stats import crawl_stats
from catlas_assets.services.runs import refused_report
from catlas_assets.services.tick import run_tick


@dg.op(description="Claim the due sensors, run them, and record one verdict.")
def crawl_tick_op(context: dg.OpExecutionContext, catlas: CatlasResource) -> dg.Output[str]:
    runtime = catlas.runtime
    try:
        report = run_tick(runtime, launch_handle=context.run_id).report
    except BlockingIOError as exc:  # another scheduler holds the SQLite state file
        report = refused_report(RunKind.TICK, runtime.clock.now(), exc)
    metadata = {
        "catlas_run_id": report.run_id,
        "stop": report.stop.value,
        "outcome": report.outcome.value,
        "detail": report.detail,
        "coverage_gaps": report.coverage_gaps,
        "empty_streak": report.empty_streak,
        **{name: dg.MetadataValue.int(value) for name, value in report.counters.items()},
        **stats_metadata(crawl_stats(runtime)),
    }
    tag_run(context, report)  # the verdict on the Dagster run, for the runs list
    # The Dagster run fails exactly when the catlas verdict is failed.
    if report.outcome is RunOutcome.FAILED:
        raise dg.Failure(description=report.summary_line, metadata=metadata)
    context.log.info(report.summary_line)
    return dg.Output(report.run_id, metadata=metadata)


@dg.job(description="One scheduler tick: fetch every due sensor.", tags={"catlas/kind": "tick"})
def crawl_tick() -> None:
    crawl_tick_op()


compaction_job = dg.define_asset_job(
    "compact_lake",
    selection=dg.AssetSelection.assets(*history_assets, dimensions),
    description=(
        "Compact one hour of the history tables (and run their checks); refresh the dimensions."
    ),
)


reprocess_job = dg.define_asset_job(
    "reprocess",
    selection=dg.AssetSelection.assets("snapshots", "changes", "entity_events"),
    tags={REPROCESS_TAG: "true", "catlas/kind": "reprocess"},
    description=(
        "Re-derive snapshots, changes and entity_events of a range of hours from the archived "
        "raw bytes with the current extractor: no network request. Backfill a range of hours "
        "(one run per backfill) from this job's partitions page."
    ),
)

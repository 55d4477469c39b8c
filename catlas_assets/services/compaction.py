"""Hourly lake compaction: flush the outbox, merge each table's hour into one file, then
fold the new observation files into the kept latest-observation table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catlas_assets.domain.vocabulary import Outcome
from catlas_assets.services import dimensions, lake_sync
from catlas_assets.services.runtime import Runtime
from resources.lake import Compaction
from resources.lake_latest import LatestUpdate
from resources.lake_tables import TABLES


def compact_partition(
    runtime: Runtime, partition: str, tables: tuple[str, ...] | None = None
) -> list[Compaction]:
    # Flushing first means no outbox group for this hour can be rewritten after its
    # files were merged (which would bring a row back twice until the next compaction).
    lake_sync.flush(runtime)
    results = []
    names = tables or tuple(TABLES)
    for name in names:
        if partition in runtime.lake.partitions(name):
            results.append(runtime.lake.compact(name, partition))
    if "observations" in names:
        runtime.lake.update_latest()
    return results


@dataclass(frozen=True)
class CompactionRun:
    """What `compact_all` did: each table-hour checked, and the kept latest table's update."""

    partitions: list[Compaction]
    latest: LatestUpdate

    @property
    def merged(self) -> list[Compaction]:
        return [p for p in self.partitions if p.files_before > 1]

    def summary(self) -> str:
        text = f"{len(self.partitions)} partition(s) checked, {len(self.merged)} compacted"
        if self.latest.key is not None:
            text += (
                f"; latest_observations: {self.latest.rows} sensor(s), "
                f"{self.latest.files_folded} new file(s) folded in"
            )
        return text


def compact_all(runtime: Runtime) -> CompactionRun:
    """Flush, compact every hour of every table, fold the new observation files into the
    kept latest table, then snapshot the dimensions for today."""
    lake_sync.flush(runtime)
    results = []
    for name in TABLES:
        for partition in runtime.lake.partitions(name):
            results.append(runtime.lake.compact(name, partition))
    latest = runtime.lake.update_latest()
    dimensions.export_dimensions(runtime)
    return CompactionRun(results, latest)


@dataclass(frozen=True)
class HourFigures:
    """One table's hour after compaction: what its materialization says."""

    partition: str
    rows: int
    files: int  # files merged (before compaction)
    bytes: int
    duplicates_dropped: int
    outcomes: dict[str, int]  # observations only: rows per outcome, every outcome named


def compact_hours(runtime: Runtime, partitions: Sequence[str], table: str) -> list[HourFigures]:
    """Compact one table's hour partitions; one figure set per hour (an empty hour says 0)."""
    lake_sync.flush(runtime)
    figures = []
    for partition in partitions:
        if partition in runtime.lake.partitions(table):
            done = runtime.lake.compact(table, partition)
            rows, files, size, dropped = (
                done.rows,
                done.files_before,
                done.bytes,
                done.duplicates_dropped,
            )
        else:
            rows = files = size = dropped = 0
        outcomes = _outcomes(runtime, partition) if table == "observations" else {}
        figures.append(HourFigures(partition, rows, files, size, dropped, outcomes))
    if table == "observations":
        runtime.lake.update_latest()
    return figures


def _outcomes(runtime: Runtime, partition: str) -> dict[str, int]:
    mix = dict.fromkeys((o.value for o in Outcome), 0)
    con = runtime.lake.connect()
    try:
        runtime.lake.scope_view(con, "observations", partition, "part")
        for outcome, count in con.execute(
            "SELECT outcome, count(*) FROM part GROUP BY outcome"
        ).fetchall():
            mix[outcome] = count
    finally:
        con.close()
    return mix

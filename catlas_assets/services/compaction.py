"""Hourly lake compaction: flush the outbox, then merge each table's hour into one file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catlas_assets.services import dimensions, lake_sync
from catlas_assets.services.runtime import Runtime
from resources.lake import Compaction
from resources.lake_tables import TABLES


def compact_partition(
    runtime: Runtime, partition: str, tables: tuple[str, ...] | None = None
) -> list[Compaction]:
    # Flushing first means no outbox group for this hour can be rewritten after its
    # files were merged (which would bring a row back twice until the next compaction).
    lake_sync.flush(runtime)
    results = []
    for name in tables or tuple(TABLES):
        if partition in runtime.lake.partitions(name):
            results.append(runtime.lake.compact(name, partition))
    return results


def compact_all(runtime: Runtime) -> list[Compaction]:
    """Flush, compact every hour of every table, then snapshot the dimensions for today."""
    lake_sync.flush(runtime)
    results = []
    for name in TABLES:
        for partition in runtime.lake.partitions(name):
            results.append(runtime.lake.compact(name, partition))
    dimensions.export_dimensions(runtime)
    return results


@dataclass(frozen=True)
class CompactionTotals:
    rows: int
    files: int  # files merged (before compaction)
    bytes: int
    duplicates_dropped: int


def compact_hours(runtime: Runtime, partitions: Sequence[str], table: str) -> CompactionTotals:
    """Compact one table's hour partitions, summed (a Dagster materialization)."""
    results = [
        result
        for partition in partitions
        for result in compact_partition(runtime, partition, (table,))
    ]
    return CompactionTotals(
        rows=sum(r.rows for r in results),
        files=sum(r.files_before for r in results),
        bytes=sum(r.bytes for r in results),
        duplicates_dropped=sum(r.duplicates_dropped for r in results),
    )

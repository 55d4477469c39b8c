"""Hourly lake compaction: flush the outbox, then merge each table's hour into one file."""

from __future__ import annotations

from catlas_assets.services import lake_sync
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
    lake_sync.flush(runtime)
    results = []
    for name in TABLES:
        for partition in runtime.lake.partitions(name):
            results.append(runtime.lake.compact(name, partition))
    return results

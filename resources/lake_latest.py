"""The kept table of each sensor's latest observation: the `latest_observations` view.

"The latest observation of every sensor" asked of the history is an arg_max over every
observation ever written, a cost that grows with the lake (0.4 s at ten million rows). The
kept table holds that answer as of its last update: one row per sensor (and per site-crawl
page), every observation column plus `date` and `hour`, sorted by sensor, with the names
of the observation files it folded in. The view reads it and folds in, as it reads, only
the visible observation files it does not cover (those written since), so it answers
exactly what the arg_max over the `observations` view would, however stale the table is.

Compaction updates it (`catlas compact`, the daemon's compaction, the observations asset):
after an hour is merged, the kept table and the files it lacks become the next kept table.
A compacted file replacing covered files is one it lacks, once: its rows are already in,
so folding them again changes nothing. Each update is written under a new, later name
(`latest-<unix ms>-<id>.parquet`) and readers take the newest, so none sees half an update;
older ones are deleted once ``HIDDEN_GRACE_S`` has passed, as hidden partition files are.
"""

from __future__ import annotations

import itertools
import json
import os
import posixpath
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from resources.lake_tables import OBSERVATIONS

if TYPE_CHECKING:
    import duckdb

    from resources.lake import Lake

FOLDER = "latest_observations"
COVERS_KEY = b"catlas.covers"
# A row group per batch: sorted by sensor, a lookup reads the one whose min/max hold it.
BATCH_ROWS = 131_072
MEMORY_LIMIT = "1GB"  # DuckDB's, for an update: sorting a million sensors' rows spills past it
# The observation columns, then the partition an analyst filters the history by.
SCHEMA = OBSERVATIONS.schema.append(pa.field("date", pa.date32())).append(
    pa.field("hour", pa.int32())
)
# One row per sensor, or per page for a site crawl's rows (their sensor_id is null); the
# latest by time, ties broken by id so that every reader picks the same row.
LATEST = (
    "QUALIFY row_number() OVER (PARTITION BY sensor_id, webpage_id "
    "ORDER BY fetched_at DESC, observation_id DESC) = 1"
)


@dataclass(frozen=True)
class LatestUpdate:
    key: str | None  # the new kept file; None when no observation file was new to it
    rows: int
    files_folded: int
    bytes: int
    deleted: int  # older kept files past their grace period


def kept_files(lake: Lake) -> list[str]:
    """Every kept file, oldest first (names sort by the time they were written)."""
    return sorted(lake.storage.glob(f"{FOLDER}/latest-*.parquet"))


def covers(lake: Lake, key: str) -> set[str]:
    """The observation files (lake keys) the kept file `key` folded in."""
    meta = lake.parquet_schema(key).metadata or {}
    return {f"{OBSERVATIONS.name}/{name}" for name in json.loads(meta.get(COVERS_KEY, b"[]"))}


def source_sql(
    lake: Lake, con: duckdb.DuckDBPyConnection, observation_keys: list[str]
) -> str | None:
    """A query for the latest observation of each sensor, given the visible observation files.

    The kept table alone when it covers every file; the kept table folded with the files it
    lacks when some are new; the reduction of every file when no table was kept yet; None
    when there is no observation at all.
    """
    kept = kept_files(lake)
    if not kept:
        if not observation_keys:
            return None
        every = lake.source_sql(con, OBSERVATIONS.schema, observation_keys)
        return f"SELECT * FROM ({every}) {LATEST}"
    return _over_kept(lake, con, kept[-1], covers(lake, kept[-1]), observation_keys)


def _over_kept(
    lake: Lake,
    con: duckdb.DuckDBPyConnection,
    newest: str,
    covered: set[str],
    observation_keys: list[str],
) -> str:
    """The kept file `newest` (covering `covered`), folded with the files it lacks."""
    fresh = [k for k in observation_keys if k not in covered]
    table = lake.source_sql(con, SCHEMA, [newest], hive=False)
    if not fresh:
        return table
    return _folded(table, lake.source_sql(con, OBSERVATIONS.schema, fresh))


# Each side keeps a row unless the other has a later one for the same sensor: two anti
# joins whose hash tables are the new rows' (a window over both sides sorts them all: 1.7×
# the time). A row in both (a compacted file the table already folded) is kept once, the
# table's.
_SAME = "k.sensor_id IS NOT DISTINCT FROM f.sensor_id AND k.webpage_id IS NOT DISTINCT FROM f.webpage_id"
_F_LATER = (
    "(f.fetched_at > k.fetched_at OR "
    "(f.fetched_at = k.fetched_at AND f.observation_id > k.observation_id))"
)


def _folded(kept: str, fresh: str) -> str:
    return (
        f"WITH k AS ({kept}), f AS (SELECT * FROM ({fresh}) {LATEST}) "
        f"SELECT k.* FROM k ANTI JOIN f ON {_SAME} AND {_F_LATER} "
        f"UNION ALL BY NAME SELECT f.* FROM f ANTI JOIN k ON {_SAME} AND NOT {_F_LATER}"
    )


def _first_build(every: str) -> str:
    """The reduction of every file, for the table's first build: the winners from the
    four columns that decide, then their whole rows (a third of the time of a window over
    whole rows). The files are read twice: DuckDB would keep `e`, used twice, in memory,
    for 5× the time. A winner is one row of one file: a row written twice (two files of an
    hour not yet compacted) is kept once."""
    narrow = f"SELECT sensor_id, webpage_id, fetched_at, observation_id, filename FROM e {LATEST}"
    return (
        f"WITH e AS NOT MATERIALIZED ({every}), w AS ({narrow}) "
        "SELECT e.* EXCLUDE (filename) FROM e SEMI JOIN w "
        "ON e.observation_id = w.observation_id AND e.filename = w.filename"
    )


def update(lake: Lake, grace_s: float) -> LatestUpdate:
    """Fold the observation files the kept table lacks into a new kept table.

    Held under the lake's lease on the kept table, so two processes' updates take turns
    (one would otherwise drop the other's folded files from its covers, which only costs
    a later refold, but the lease keeps the work done once).
    """
    from resources.lake import parquet_encodings  # the lake imports this module for views

    with lake.locks.hold(lake.lock_name(FOLDER)) as confirm:
        observation_keys = lake.files(OBSERVATIONS.name)
        kept = kept_files(lake)
        covered = covers(lake, kept[-1]) if kept else set()
        fresh = [k for k in observation_keys if k not in covered]
        if not fresh:
            return LatestUpdate(None, 0, 0, 0, _collect(lake, kept, grace_s, confirm))
        # Later than every kept name even if this host's clock is behind the last writer's.
        last = _stamp(kept[-1]) if kept else 0
        stamp = max(int(time.time() * 1000), last + 1)
        key = f"{FOLDER}/latest-{stamp:013d}-{uuid.uuid4().hex[:8]}.parquet"
        names = json.dumps(sorted(k.split("/", 1)[1] for k in observation_keys))
        con = lake.duckdb()
        try:
            if kept:  # listed and read once, above
                query = _over_kept(lake, con, kept[-1], covered, observation_keys)
            else:
                every = lake.source_sql(con, OBSERVATIONS.schema, observation_keys, filename=True)
                query = _first_build(every)
            columns = ", ".join(SCHEMA.names)
            con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")  # what is past it spills
            batches = con.sql(
                f"SELECT {columns} FROM ({query}) ORDER BY sensor_id, webpage_id"
            ).to_arrow_reader(BATCH_ROWS)
            meta = SCHEMA.with_metadata({COVERS_KEY: names.encode()})
            confirm()
            # One batch at a time, one row group each: the table never sits whole in memory.
            rows = 0
            with lake.storage.staged_file(key) as path:
                dictionary, statistics = parquet_encodings(tuple(SCHEMA.names))
                with pq.ParquetWriter(
                    path,
                    meta,
                    compression="zstd",
                    use_dictionary=dictionary,
                    write_statistics=statistics,
                ) as writer:
                    for batch in batches:
                        writer.write_batch(batch.cast(SCHEMA))
                        rows += batch.num_rows
                size = os.path.getsize(path)
        finally:
            con.close()
        deleted = _collect(lake, [*kept, key], grace_s, confirm)
        return LatestUpdate(key, rows, len(fresh), size, deleted)


def _stamp(key: str) -> int:
    return int(posixpath.basename(key).split("-")[1])


def _collect(lake: Lake, kept: list[str], grace_s: float, confirm: Callable[[], None]) -> int:
    """Delete the kept files superseded for longer than `grace_s` (a reader that opened its
    view on one before keeps reading it that long)."""
    cutoff = int((time.time() - grace_s) * 1000)
    old = [k for k, newer in itertools.pairwise(kept) if _stamp(newer) <= cutoff]
    if old:
        confirm()
        lake.storage.delete(old)
    return len(old)

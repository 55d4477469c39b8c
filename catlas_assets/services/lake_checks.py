"""Read model of the lake's invariants for one hour partition, asked by the asset checks.

Every function looks at one table's rows of one `date=/hour=` partition (the parents an
orphan check looks for may sit anywhere in the lake) and returns a `Finding`: whether the
invariant holds, and the figures the Dagster UI shows beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from catlas_assets.domain.vocabulary import Outcome
from catlas_assets.services.runtime import Runtime
from resources.archive import ObjectArchive
from resources.lake import Lake
from resources.lake_tables import TABLES

# The outcomes that write one observation row (a skipped fetch writes none).
OBSERVED = tuple(o.value for o in Outcome if o is not Outcome.SKIPPED)

# The archive keys each table's rows carry.
ARCHIVE_KEYS: dict[str, tuple[str, ...]] = {
    "observations": ("object_key", "text_key", "blocks_key"),
    "snapshots": ("object_key", "text_key", "blocks_key", "extraction_key"),
}

# The lake columns that name an archived object (observations' raw bytes, snapshots' parts).
OBJECT_KEY_COLUMNS = {
    "observations": ("object_key", "text_key", "blocks_key"),
    "snapshots": ("object_key", "text_key", "blocks_key", "extraction_key"),
}


def object_keys(lake: Lake) -> set[str]:
    """Every archive key a lake row names."""
    con = lake.connect()
    keys: set[str] = set()
    try:
        for table, columns in OBJECT_KEY_COLUMNS.items():
            present = {row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()}
            for column in columns:
                if column in present:
                    rows = con.execute(
                        f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL"
                    ).fetchall()
                    keys.update(str(row[0]) for row in rows)
    finally:
        con.close()
    return keys


def dangling_keys(lake: Lake, archive: ObjectArchive) -> list[str]:
    """Keys named in the lake whose bytes are not in the archive (there should be none)."""
    return sorted(archive.missing(object_keys(lake)))


@dataclass(frozen=True)
class Finding:
    passed: bool
    metadata: dict[str, Any] = field(default_factory=dict)


def _scoped(runtime: Runtime, table: str, partition: str) -> duckdb.DuckDBPyConnection:
    """The lake's views plus `part`: `table`'s rows of this partition only."""
    con = runtime.lake.connect()
    runtime.lake.scope_view(con, table, partition, "part")
    return con


def _one(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[Any, ...]:
    try:
        row = con.execute(sql).fetchone()
    finally:
        con.close()
    return tuple(row) if row else ()


def unique_ids(runtime: Runtime, table: str, partition: str) -> Finding:
    column = TABLES[table].id_column
    rows, distinct = _one(
        _scoped(runtime, table, partition), f"SELECT count(*), count(DISTINCT {column}) FROM part"
    )
    return Finding(rows == distinct, {"rows": rows, "distinct_ids": distinct})


def orphans(runtime: Runtime, table: str, partition: str, parent: str, column: str) -> Finding:
    """Rows of the partition whose `column` names no row of `parent` (there should be none)."""
    (count,) = _one(
        _scoped(runtime, table, partition),
        f"SELECT count(*) FROM part WHERE {column} IS NOT NULL "
        f"AND {column} NOT IN (SELECT {column} FROM {parent})",
    )
    return Finding(count == 0, {"orphans": count, "parent": parent})


def missing_objects(runtime: Runtime, table: str, partition: str) -> Finding:
    """Archive keys named by the partition's rows that the archive does not hold."""
    columns = ARCHIVE_KEYS[table]
    union = " UNION ".join(f"SELECT {c} AS k FROM part WHERE {c} IS NOT NULL" for c in columns)
    con = _scoped(runtime, table, partition)
    try:
        keys = [row[0] for row in con.execute(f"SELECT DISTINCT k FROM ({union})").fetchall()]
    finally:
        con.close()
    missing = sorted(runtime.archive.missing(keys))
    return Finding(
        not missing, {"keys": len(keys), "missing": len(missing), "first_missing": missing[:5]}
    )


def counts_match_runs(runtime: Runtime, partition: str) -> Finding:
    """Each finished run seen in this hour wrote as many observations as its counters say.

    The run's rows are counted over the whole lake, since a run can straddle an hour.
    """
    con = _scoped(runtime, "observations", partition)
    try:
        run_ids = [r[0] for r in con.execute("SELECT DISTINCT run_id FROM part").fetchall()]
        written = dict(
            con.execute(
                "SELECT run_id, count(*) FROM observations WHERE run_id IN "
                "(SELECT DISTINCT run_id FROM part) GROUP BY run_id"
            ).fetchall()
        )
    finally:
        con.close()
    mismatched: list[str] = []
    compared = 0
    for run_id in run_ids:
        run = runtime.store.run(run_id)
        if run is None or run["completed_at"] is None:
            continue  # a run still writing, or one without counters (not a sensor run)
        compared += 1
        # A run that counts its observation rows (a site crawl: its events are per URL, and
        # a redirect's origin writes none) is held to that figure.
        recorded = (run.get("counters") or {}).get("observations")
        counted = (
            int(recorded)
            if recorded is not None
            else sum(int(run.get(name) or 0) for name in OBSERVED)
        )
        if counted != written.get(run_id, 0):
            mismatched.append(f"{run_id}: {written.get(run_id, 0)} rows, counters {counted}")
    return Finding(
        not mismatched,
        {"runs": len(run_ids), "runs_compared": compared, "mismatched": mismatched[:5]},
    )


def schema_as_declared(runtime: Runtime, table: str, partition: str) -> Finding:
    declared = TABLES[table].schema
    wrong = [
        key
        for key, schema in runtime.lake.file_schemas(table, partition)
        if not schema.remove_metadata().equals(declared)
    ]
    return Finding(not wrong, {"files_off_schema": len(wrong), "first_off_schema": wrong[:3]})

"""Read model of the lake's invariants, asked by the Dagster asset checks."""

from __future__ import annotations

from resources.lake import Lake


def id_counts(lake: Lake, table: str, id_column: str) -> tuple[int, int]:
    """(rows, distinct ids) of one lake table: equal when no id is stored twice."""
    con = lake.connect()
    try:
        row = con.execute(f"SELECT count(*), count(DISTINCT {id_column}) FROM {table}").fetchone()
    finally:
        con.close()
    return (row[0], row[1]) if row else (0, 0)


def orphan_changes(lake: Lake) -> int:
    """Changes whose snapshot is not in the lake (there should be none)."""
    con = lake.connect()
    try:
        row = con.execute(
            "SELECT count(*) FROM changes c LEFT JOIN snapshots s USING (snapshot_id) "
            "WHERE s.snapshot_id IS NULL"
        ).fetchone()
    finally:
        con.close()
    return row[0] if row else 0

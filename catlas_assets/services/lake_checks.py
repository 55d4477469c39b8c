"""Read model of the lake's invariants, asked by the Dagster asset checks."""

from __future__ import annotations

from resources.archive import ObjectArchive
from resources.lake import Lake

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
    return sorted(key for key in object_keys(lake) if not archive.storage.exists(key))


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

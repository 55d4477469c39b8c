"""Where packed archive objects lie: `archive_objects`, one row per key.

A row is written in the transaction that commits the run naming its key, never before the
pack holding the bytes is durable (`resources/archive.py`), so a key any committed row
names is always found: in this index, or as a file of its own (objects written before
packs). Two runs may pack the same object (two workers at once): the first row written
stands and the other copy is never read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from sqlalchemy import Connection

from catlas_assets.domain.pipeline_data import PackedObject
from resources.state.schema import archive_objects
from resources.state.store import StateStore

# Keys looked up in one statement (SQLite binds at most 32,766 values; a lake check asks
# for every key of an hour).
_LOOKUP_BATCH = 500


class ArchiveIndex:
    def __init__(self, store: StateStore) -> None:
        self.store = store

    def locate(self, keys: Iterable[str]) -> dict[str, PackedObject]:
        """The packed objects among `keys`, by key (a key not packed is left out)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, PackedObject] = {}
        if not wanted:
            return found
        with self.store.engine.connect() as conn:
            for start in range(0, len(wanted), _LOOKUP_BATCH):
                batch = tuple(wanted[start : start + _LOOKUP_BATCH])
                lookup = _lookup(conn.dialect.paramstyle, len(batch))
                for row in conn.exec_driver_sql(lookup, batch):
                    found[row[0]] = PackedObject(*row)
        return found


def record(conn: Connection, objects: Sequence[PackedObject]) -> None:
    """Add `objects` inside the caller's transaction (a key already there keeps its row)."""
    if objects:
        # One row a key, its first place given (a later one would be ignored anyway).
        rows: dict[str, tuple[str, str, int, int]] = {}
        for o in objects:
            rows.setdefault(o.key, (o.key, o.pack, o.offset, o.length))
        # In key order: two PostgreSQL workers recording shared keys (an empty extraction,
        # a page under two URLs) take their locks in one order and cannot deadlock.
        ordered = [rows[key] for key in sorted(rows)]
        conn.exec_driver_sql(_insert(conn.dialect.paramstyle), ordered)


# Statements built once per shape and run through the driver: SQLAlchemy compiled an
# expanding IN for every lookup, most of a run's ~100 us lookup (one a run).
@cache
def _lookup(paramstyle: str, keys: int) -> str:
    marks = ", ".join([_mark(paramstyle)] * keys)
    return (
        f"SELECT key, pack, byte_offset, byte_length FROM {archive_objects.name} "
        f"WHERE key IN ({marks})"
    )


@cache
def _insert(paramstyle: str) -> str:
    marks = ", ".join([_mark(paramstyle)] * 4)
    return (
        f"INSERT INTO {archive_objects.name} (key, pack, byte_offset, byte_length) "
        f"VALUES ({marks}) ON CONFLICT (key) DO NOTHING"
    )


def _mark(paramstyle: str) -> str:
    return "?" if paramstyle == "qmark" else "%s"

"""robots.txt files in the state store: one row per origin, trusted until it expires.

A worker process keeps the files it uses in memory (`RobotsCache`); this is where a new
process finds them, so a site is asked for its robots.txt once per `CATLAS_ROBOTS_TTL_S`
by all of catlas, not once per process. The row keeps what the rules are made from: the
answer's status, why the rules are unknown (a 5xx, an unreachable origin), and a 2xx
file's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from resources.state.schema import robots_files
from resources.state.store import StateStore


@dataclass(frozen=True)
class StoredRobots:
    origin: str
    source_url: str
    status: int | None
    unavailable: str
    body: bytes  # a 2xx file's bytes; b"" otherwise
    fetched_at: datetime
    expires_at: datetime


class RobotsFiles:
    def __init__(self, store: StateStore) -> None:
        self.store = store

    def load(self, origin: str, now: datetime) -> StoredRobots | None:
        """The origin's file as last stored, unless it has expired by `now`."""
        query = select(robots_files).where(
            robots_files.c.origin == origin, robots_files.c.expires_at > now
        )
        with self.store.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            return None
        return StoredRobots(
            origin=row["origin"],
            source_url=row["source_url"],
            status=row["status"],
            unavailable=row["unavailable"],
            body=bytes(row["body"] or b""),
            fetched_at=row["fetched_at"],
            expires_at=row["expires_at"],
        )

    def save(self, stored: StoredRobots) -> None:
        """Keep `stored` as the origin's file (the later fetch wins between two workers)."""
        values = {
            "origin": stored.origin,
            "source_url": stored.source_url,
            "status": stored.status,
            "unavailable": stored.unavailable,
            "body": stored.body or None,
            "fetched_at": stored.fetched_at,
            "expires_at": stored.expires_at,
        }
        upsert = (postgresql_insert if self.store.is_postgres else sqlite_insert)(robots_files)
        upsert = upsert.values(**values)
        statement = upsert.on_conflict_do_update(
            index_elements=["origin"],
            set_={k: upsert.excluded[k] for k in values if k != "origin"},
            where=robots_files.c.fetched_at <= upsert.excluded.fetched_at,
        )
        with self.store.transaction(write_lock=True) as conn:
            conn.execute(statement)

"""Leases on periodic tasks, in the state store shared by every machine.

A task runs only while its holder has the lease: `acquire` succeeds when nobody holds an
unexpired lease and, when `min_gap_s` is given, nobody completed the task less than that
long ago (so two daemons whose cron fires a few seconds apart do not run it twice in one
period). The row is updated with a conditional UPDATE, so the database decides the race.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Engine, and_, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from resources.state.schema import task_leases


class Leases:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def acquire(
        self, name: str, holder: str, *, now: datetime, ttl_s: int, min_gap_s: int = 0
    ) -> bool:
        expires = now + timedelta(seconds=ttl_s)
        free = or_(
            task_leases.c.holder.is_(None),
            task_leases.c.expires_at.is_(None),
            task_leases.c.expires_at <= now,
        )
        rested = or_(
            task_leases.c.last_completed_at.is_(None),
            task_leases.c.last_completed_at <= now - timedelta(seconds=min_gap_s),
        )
        with self.engine.begin() as conn:
            result = conn.execute(
                update(task_leases)
                .where(task_leases.c.name == name, and_(free, rested))
                .values(holder=holder, acquired_at=now, expires_at=expires)
            )
            if result.rowcount == 1:
                return True
            exists = conn.execute(
                select(task_leases.c.name).where(task_leases.c.name == name)
            ).first()
        if exists is not None:
            return False
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    insert(task_leases).values(
                        name=name, holder=holder, acquired_at=now, expires_at=expires
                    )
                )
        except IntegrityError:
            return False  # another holder inserted it first
        return True

    def release(self, name: str, holder: str, *, now: datetime, completed: bool) -> None:
        values: dict[str, object] = {"holder": None, "expires_at": None}
        if completed:
            values.update(last_completed_at=now, last_holder=holder)
        with self.engine.begin() as conn:
            conn.execute(
                update(task_leases)
                .where(task_leases.c.name == name, task_leases.c.holder == holder)
                .values(**values)
            )

    def renew(self, name: str, holder: str, *, now: datetime, ttl_s: int) -> bool:
        """Extend `holder`'s unexpired lease; False once it expired or another holder has it."""
        with self.engine.begin() as conn:
            result = conn.execute(
                update(task_leases)
                .where(
                    task_leases.c.name == name,
                    task_leases.c.holder == holder,
                    task_leases.c.expires_at > now,
                )
                .values(expires_at=now + timedelta(seconds=ttl_s))
            )
        return result.rowcount == 1

    def drop(self, name: str, holder: str) -> None:
        """Release a one-off lease by deleting its row (no completion to remember)."""
        with self.engine.begin() as conn:
            conn.execute(
                delete(task_leases).where(
                    task_leases.c.name == name, task_leases.c.holder == holder
                )
            )

    def get(self, name: str) -> dict[str, object] | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(select(task_leases).where(task_leases.c.name == name))
                .mappings()
                .first()
            )
        return dict(row) if row else None

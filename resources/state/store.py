"""The state store adapter: every read and write of operational state goes through here.

One class for SQLite and PostgreSQL. The two differ in one place each, behind a method:
claims use ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, and on SQLite a ``BEGIN IMMEDIATE``
transaction that holds the single write lock while it selects and stamps the batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Select,
    and_,
    bindparam,
    create_engine,
    delete,
    event,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Dialect, RootTransaction, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, OperationalError

from catlas_assets.domain.masking import masked
from catlas_assets.domain.pipeline_data import InboxEntry, LedgerCharge, ReviewItem
from catlas_assets.domain.repair import onto_watched_url
from catlas_assets.domain.vocabulary import CLAIMABLE_STATUSES, ReviewKind, ReviewStatus
from catlas_assets.errors import CatlasError, NotFoundError, StorageError
from resources.json_values import plain, without_nul
from resources.lake_batches import pack, to_arrow
from resources.lake_tables import TABLES
from resources.state import migrate
from resources.state.schema import (
    change_inbox,
    companies,
    cost_ledger,
    crawl_runs,
    lake_outbox,
    review_queue,
    sensors,
    settings_kv,
)
from resources.state.writer_queue import WriterBusy, WriterQueue

Row = dict[str, Any]


# How long a SQLite writer outside the writers queue waits for the write lock.
BUSY_TIMEOUT_MS = 30_000


def create_state_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise StorageError(f"CATLAS_DATABASE_URL={masked(url)!r} is not a database URL") from None
    try:
        return _create_engine(url, parsed)
    except ArgumentError as exc:  # e.g. an unknown driver (NoSuchModuleError)
        raise StorageError(f"CATLAS_DATABASE_URL={masked(url)!r}: {exc}") from None


def _create_engine(url: str, parsed: URL) -> Engine:
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:":
            folder = Path(database).parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file in the way, a read-only or virtual file system
                raise StorageError(
                    f"cannot create the state database {database}: {folder} - {exc.strerror}"
                ) from None
        engine = create_engine(url, connect_args={"timeout": 30}, json_serializer=_to_json)

        @event.listens_for(engine, "connect")
        def _sqlite_setup(dbapi_connection: Any, _record: Any) -> None:
            # Let SQLAlchemy emit BEGIN itself (pysqlite's implicit transactions are off),
            # so that claims can open their transaction with BEGIN IMMEDIATE.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            # WAL: readers never wait for the writer. synchronous=NORMAL, the level SQLite
            # documents for WAL: a commit survives the process being killed (kill -9); a
            # power loss or OS crash may lose the last commits, never the file's integrity.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # Some builds (Debian's) zero every page a delete frees: each flush wrote its
            # outbox rows' size a second time (74 of a first pass's 350 ms flush). FAST
            # still clears deleted rows from the table's pages, at no extra write.
            cursor.execute("PRAGMA secure_delete=FAST")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            mode = conn.info.pop("begin_mode", "")
            conn.exec_driver_sql(f"BEGIN {mode}".strip())

        return engine
    if parsed.get_backend_name() == "postgresql":
        return create_engine(url, pool_pre_ping=True, json_serializer=_to_json)
    raise StorageError(f"CATLAS_DATABASE_URL: unsupported database {parsed.get_backend_name()!r}")


def _begin(conn: Connection, wait: bool) -> RootTransaction:
    """`conn.begin()` on SQLite; without waiting, a writer outside the queue holding the
    file makes it `WriterBusy` at once instead of after the busy timeout."""
    if wait:
        return conn.begin()
    raw = conn.connection.dbapi_connection
    assert raw is not None
    raw.execute("PRAGMA busy_timeout=0")
    try:
        return conn.begin()
    except OperationalError as exc:
        # The primary code: an extended one (SQLITE_BUSY_RECOVERY, ...) is busy too.
        if getattr(exc.orig, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY:
            raise WriterBusy("another writer holds the state file") from None
        raise
    finally:
        raw.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


# A PostgreSQL claim locks its batch among the first CLAIM_WINDOW batches' worth of due
# sensors: room for three other workers' batches still locked before it looks further.
CLAIM_WINDOW = 4
# The columns a claim is ordered by: every claimed row carries them.
_CLAIM_ORDER = ("priority", "next_run_at", "id")


def _claimable(now: datetime, claim_timeout_s: int) -> tuple[ColumnElement[bool], ...]:
    """A sensor a worker may claim at `now`: claimable status, due, and no live claim."""
    stale_claim = now - timedelta(seconds=claim_timeout_s)
    return (
        sensors.c.status.in_([s.value for s in CLAIMABLE_STATUSES]),
        sensors.c.next_run_at <= now,
        or_(sensors.c.claimed_at.is_(None), sensors.c.claimed_at < stale_claim),
    )


class StateStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.is_postgres = engine.dialect.name == "postgresql"
        # SQLite writers (group commits, claims, budget reservations) queue for the lock
        # rather than sleep in SQLite's busy handler; re-entrant: a nested one is as before.
        database = engine.url.database
        on_disk = not self.is_postgres and database not in (None, "", ":memory:")
        self._sqlite_writers = WriterQueue(Path(database) if on_disk and database else None)
        self._sensor_updates: dict[tuple[str, ...], DriverStatement] = {}

    @classmethod
    def open(cls, url: str, *, auto_create: bool = True) -> StateStore:
        engine = create_state_engine(url)
        try:
            migrate.ensure_current(engine, auto_create=auto_create)
        except OperationalError as exc:
            first = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
            raise StorageError(f"cannot reach the state database {masked(url)}: {first}") from None
        return cls(engine)

    def close(self) -> None:
        self.engine.dispose()
        self._sqlite_writers.close()

    # -- transactions ---------------------------------------------------------------------
    @contextmanager
    def transaction(self, *, write_lock: bool = False, wait: bool = True) -> Iterator[Connection]:
        """A transaction; `write_lock` takes SQLite's write lock at its start (in the writers
        queue). With `wait=False` (a caller on an event loop) the lock is taken now or
        `WriterBusy` is raised; PostgreSQL always raises it then: its statements may wait
        for other workers' row locks."""
        if not wait and (self.is_postgres or not write_lock):
            raise WriterBusy("only a SQLite write transaction can start without waiting")
        if not write_lock or self.is_postgres:
            with self.engine.connect() as conn, conn.begin():
                yield conn
            return
        with self._sqlite_writers.held(wait=wait), self.engine.connect() as conn:
            conn.info["begin_mode"] = "IMMEDIATE"
            with _begin(conn, wait):
                yield conn

    # -- companies ----------------------------------------------------------------------
    def add_company(
        self,
        *,
        name: str,
        website: str | None,
        domain: str | None,
        importance: float,
        tier: int,
        now: datetime,
    ) -> int:
        try:
            with self.transaction() as conn:
                result = conn.execute(
                    insert(companies).values(
                        name=name,
                        website=website,
                        domain=domain,
                        importance=importance,
                        tier=tier,
                        onboarding_status="pending",
                        stats={},
                        source_meta={},
                        created_at=now,
                        updated_at=now,
                    )
                )
                return int(result.inserted_primary_key[0])
        except IntegrityError as exc:
            if not _is_duplicate(exc):
                raise  # a CHECK or foreign-key refusal is not a duplicate
            raise CatlasError(f"company {name!r} already exists") from None

    def company_by_name(self, name: str) -> Row | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(companies).where(companies.c.name == name)).mappings().first()
            return dict(row) if row else None

    def company(self, company_id: int) -> Row:
        with self.engine.connect() as conn:
            row = (
                conn.execute(select(companies).where(companies.c.id == company_id))
                .mappings()
                .first()
            )
        if row is None:
            raise NotFoundError(f"no company with id {company_id}")
        return dict(row)

    def list_companies(self) -> list[Row]:
        counts = (
            select(sensors.c.company_id, func.count().label("sensors"))
            .group_by(sensors.c.company_id)
            .subquery()
        )
        query = (
            select(companies, func.coalesce(counts.c.sensors, 0).label("sensors"))
            .outerjoin(counts, counts.c.company_id == companies.c.id)
            .order_by(companies.c.id)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def update_company(self, company_id: int, **values: Any) -> None:
        with self.transaction() as conn:
            conn.execute(update(companies).where(companies.c.id == company_id).values(**values))

    # -- sensors ------------------------------------------------------------------------
    def add_sensor(self, **values: Any) -> int:
        try:
            with self.transaction() as conn:
                result = conn.execute(insert(sensors).values(**values))
                return int(result.inserted_primary_key[0])
        except IntegrityError as exc:
            if not _is_duplicate(exc):
                raise  # a CHECK or foreign-key refusal is not a duplicate
            raise CatlasError(
                f"company {values['company_id']} already has a {values['surface']} sensor on {values['url']}"
            ) from None

    def sensor(self, sensor_id: int) -> Row:
        with self.engine.connect() as conn:
            row = conn.execute(select(sensors).where(sensors.c.id == sensor_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"no sensor with id {sensor_id}")
        return dict(row)

    def list_sensors(
        self,
        *,
        company_id: int | None = None,
        status: str | None = None,
        surface: str | None = None,
    ) -> list[Row]:
        query = select(sensors, companies.c.name.label("company")).join(
            companies, companies.c.id == sensors.c.company_id
        )
        if company_id is not None:
            query = query.where(sensors.c.company_id == company_id)
        if status:
            query = query.where(sensors.c.status == status)
        if surface:
            query = query.where(sensors.c.surface == surface)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query.order_by(sensors.c.id)).mappings()]

    def claim_due(
        self,
        *,
        now: datetime,
        worker: str,
        limit: int,
        claim_timeout_s: int,
        exclude: Collection[int] = (),
        columns: Sequence[str] | None = None,
    ) -> list[Row]:
        """Claim up to ``limit`` due sensors for ``worker``; another worker never gets the same.
        `exclude`: sensors passed over (a tick's own, claimed in an earlier part). `columns`:
        the columns of each row returned (the claim's order, `priority`, `next_run_at` and
        `id`, come too), every one when None."""
        claimable = _claimable(now, claim_timeout_s)
        if exclude:
            claimable += (sensors.c.id.not_in(sorted(exclude)),)
        order = (sensors.c.priority.desc(), sensors.c.next_run_at, sensors.c.id)
        due = select(sensors.c.id).where(*claimable).order_by(*order).limit(limit)
        returned = (
            list(sensors.c)
            if columns is None
            else [sensors.c[name] for name in dict.fromkeys((*columns, *_CLAIM_ORDER))]
        )
        with self.transaction(write_lock=True) as conn:
            if not self.is_postgres:
                return self._mark_claimed(conn, due, now, worker, returned)
            # Locking rows in the sort's order keeps PostgreSQL from a top-N sort: it sorts
            # the whole due set for each batch. So the first WINDOW batches' worth are picked
            # by a top-N sort, and the batch locked among them (the conditions repeated, so
            # a row another worker claimed meanwhile is rechecked and passed over).
            window = (
                select(sensors.c.id).where(*claimable).order_by(*order).limit(limit * CLAIM_WINDOW)
            )
            windowed = (
                select(sensors.c.id)
                .where(sensors.c.id.in_(window.scalar_subquery()), *claimable)
                .order_by(*order)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
            rows = self._mark_claimed(conn, windowed, now, worker, returned)
            if rows:
                return rows
            # Other workers hold the whole window: look past it before answering "none".
            locked = due.with_for_update(skip_locked=True)
            return self._mark_claimed(conn, locked, now, worker, returned)

    def due_count(self, *, now: datetime, claim_timeout_s: int, up_to: int) -> int:
        """How many sensors `claim_due` would find now, counted up to `up_to` (an index probe:
        a tick decides from it whether to start its lanes before it claims)."""
        due = select(sensors.c.id).where(*_claimable(now, claim_timeout_s)).limit(up_to)
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(due.subquery())).scalar())

    @staticmethod
    def _mark_claimed(
        conn: Connection, due: Select, now: datetime, worker: str, returned: list[Any]
    ) -> list[Row]:
        """Claim the sensors `due` selects in one statement: pick, mark and return the
        `returned` columns of them (a select, an update and a re-read would be three round
        trips)."""
        claim = (
            update(sensors)
            .where(sensors.c.id.in_(due.scalar_subquery()))
            .values(claimed_at=now, claimed_by=worker)
            .returning(*returned)
        )
        result = conn.execute(claim)
        keys = list(result.keys())
        rows = [dict(zip(keys, row, strict=True)) for row in result]  # no RowMapping per row
        # RETURNING has no order: give back the batch in the claim's own order.
        rows.sort(key=lambda r: (-r["priority"], r["next_run_at"], r["id"]))
        return rows

    def claim_sensor(
        self, sensor_id: int, *, now: datetime, worker: str, claim_timeout_s: int
    ) -> Row:
        """Claim one sensor by id whatever its schedule (``run-sensor``); refuse if another holds it."""
        stale_claim = now - timedelta(seconds=claim_timeout_s)
        with self.transaction(write_lock=True) as conn:
            query = select(sensors).where(sensors.c.id == sensor_id)
            if self.is_postgres:
                query = query.with_for_update()
            row = conn.execute(query).mappings().first()
            if row is None:
                raise NotFoundError(f"no sensor with id {sensor_id}")
            if (
                row["claimed_at"] is not None
                and row["claimed_at"] >= stale_claim
                and row["claimed_by"] != worker
            ):
                raise CatlasError(
                    f"sensor {sensor_id} is being run by {row['claimed_by']} right now"
                )
            conn.execute(
                update(sensors)
                .where(sensors.c.id == sensor_id)
                .values(claimed_at=now, claimed_by=worker)
            )
            return {**dict(row), "claimed_at": now, "claimed_by": worker}

    def next_due_at(self) -> datetime | None:
        """When the earliest claimable sensor falls due (None when there is none).

        One probe of the (status, next_run_at) index per claimable status, so the answer
        stays instant with a million sensors (a plain min() over an IN list reads every
        matching index entry); bench/ measures it.
        """
        firsts = [
            select(sensors.c.next_run_at)
            .where(sensors.c.status == status.value)
            .order_by(sensors.c.next_run_at)
            .limit(1)
            for status in CLAIMABLE_STATUSES
        ]
        with self.engine.connect() as conn:
            found = [v for q in firsts if (v := conn.execute(q).scalar()) is not None]
        return min(found) if found else None

    def release_claims(self, sensor_ids: Sequence[int], worker: str) -> int:
        if not sensor_ids:
            return 0
        with self.transaction() as conn:
            result = conn.execute(
                update(sensors)
                .where(sensors.c.id.in_(list(sensor_ids)), sensors.c.claimed_by == worker)
                .values(claimed_at=None, claimed_by=None)
            )
            return result.rowcount

    def commit_sensor_run(
        self,
        *,
        sensor_id: int,
        worker: str,
        sensor_update: Mapping[str, Any],
        run_id: str,
        lake_rows: Mapping[str, list[Row]],
        inbox: Iterable[InboxEntry],
        review: Iterable[ReviewItem],
        ledger: LedgerCharge | None,
        now: datetime,
    ) -> bool:
        """Apply one sensor run in one transaction: state, outbox rows, inbox, review, costs.

        Returns False (and writes nothing) when the claim was lost to another worker
        after it timed out, so a slow worker can never overwrite a newer run's state.
        (`resources/state/group_commit.py` applies several runs in one transaction.)
        """
        with self.transaction() as conn:
            applied = self.apply_run(
                conn,
                sensor_id=sensor_id,
                worker=worker,
                sensor_update=sensor_update,
                run_id=run_id,
                lake_rows=lake_rows,
                inbox=inbox,
                review=review,
                now=now,
            )
            if not applied:
                conn.rollback()
                return False
            if ledger is not None:
                self.charge(conn, [ledger])
        return True

    def apply_run(
        self,
        conn: Connection,
        *,
        sensor_id: int,
        worker: str,
        sensor_update: Mapping[str, Any],
        run_id: str,
        lake_rows: Mapping[str, list[Row]],
        inbox: Iterable[InboxEntry],
        review: Iterable[ReviewItem],
        now: datetime,
    ) -> bool:
        """One run's writes inside the caller's transaction; False (nothing written) when
        the claim was lost."""
        if "url" in sensor_update:
            sensor_update, review = self._settle_move(conn, sensor_id, sensor_update, review, now)
        result = conn.execute(
            update(sensors)
            .where(sensors.c.id == sensor_id, sensors.c.claimed_by == worker)
            .values(**{k: without_nul(v) for k, v in sensor_update.items()})
        )
        if result.rowcount != 1:
            return False
        if lake_rows:
            conn.execute(insert(lake_outbox), _outbox_rows([(run_id, lake_rows, now)]))
        for entry in inbox:
            add_to_inbox(conn, entry)
        for item in review:
            self._open_review(conn, item, now)
        return True

    def apply_runs(
        self, conn: Connection, runs: Sequence[RunWrites], prepared: PreparedRuns | None = None
    ) -> list[bool]:
        """`apply_run` for each of `runs` inside the caller's transaction, in a few
        statements: which claims still stand is read once (their rows locked on
        PostgreSQL; the caller's write lock holds SQLite), then the sensor rows are updated
        with one executemany per set of columns and the outbox rows inserted with one.
        A run whose claim was lost writes nothing (False), as alone. `prepared`: the
        statements' values, computed before the transaction (`prepare_runs(runs)`)."""
        if any("url" in run.sensor_update for run in runs):
            # A move is settled against the other sensors' URLs, run after run.
            return [self.apply_run(conn, **_run_fields(run)) for run in runs]
        prepared = prepared or self.prepare_runs(runs)
        ids = sorted({run.sensor_id for run in runs})
        holder = {sensor_id: by for sensor_id, by in conn.execute(self._claims, {"ids": ids})}
        applied = [holder.get(run.sensor_id) == run.worker for run in runs]
        by_statement: dict[str, list[Any]] = {}
        for (sql, row), ok in zip(prepared.updates, applied, strict=True):
            if ok:
                by_statement.setdefault(sql, []).append(row)
        for sql, rows in by_statement.items():
            conn.exec_driver_sql(sql, rows)
        kept = [run for run, ok in zip(runs, applied, strict=True) if ok]
        outbox = (
            prepared.outbox
            if len(kept) == len(runs)
            else _outbox_rows((r.run_id, r.lake_rows, r.now) for r in kept)
        )
        if outbox:
            self._outbox_insert.execute_many(conn, outbox)
        for run in kept:
            for entry in run.inbox:
                add_to_inbox(conn, entry)
            for item in run.review:
                self._open_review(conn, item, run.now)
        return applied

    def prepare_runs(self, runs: Sequence[RunWrites]) -> PreparedRuns:
        """The values `apply_runs` writes for `runs`, computed before its transaction (on
        SQLite a group holds the one write lock for its statements alone): each run's
        sensor row as the driver takes it, and the group's outbox rows."""
        updates = []
        for run in runs:
            values = {k: without_nul(v) for k, v in run.sensor_update.items()}
            statement = self._sensor_update(tuple(sorted(values)))
            values["b_id"], values["b_worker"] = run.sensor_id, run.worker
            updates.append((statement.sql, statement.row(values)))
        return PreparedRuns(updates, _outbox_rows((r.run_id, r.lake_rows, r.now) for r in runs))

    def _sensor_update(self, columns: tuple[str, ...]) -> DriverStatement:
        """The update of a claimed sensor's `columns`, compiled once per set of columns."""
        statement = self._sensor_updates.get(columns)
        if statement is None:
            statement = self._sensor_updates[columns] = DriverStatement.of(
                self._claimed_update, self.engine.dialect, columns
            )
        return statement

    # The statements of every group commit, built once: SQLAlchemy rebuilt and re-keyed
    # them for each group.
    @cached_property
    def _claims(self) -> Any:
        query = select(sensors.c.id, sensors.c.claimed_by).where(
            sensors.c.id.in_(bindparam("ids", expanding=True))
        )
        if self.is_postgres:
            query = query.order_by(sensors.c.id).with_for_update()  # in id order: no deadlock
        return query

    @cached_property
    def _claimed_update(self) -> Any:
        return update(sensors).where(
            sensors.c.id == bindparam("b_id"), sensors.c.claimed_by == bindparam("b_worker")
        )

    def _settle_move(
        self,
        conn: Connection,
        sensor_id: int,
        sensor_update: Mapping[str, Any],
        review: Iterable[ReviewItem],
        now: datetime,
    ) -> tuple[Mapping[str, Any], list[ReviewItem]]:
        """A same-domain move onto a URL another sensor of the company and surface holds
        would break their uniqueness (and the whole commit group): domain/repair decides."""
        me = conn.execute(
            select(sensors.c.company_id, sensors.c.surface, sensors.c.url).where(
                sensors.c.id == sensor_id
            )
        ).first()
        items = list(review)
        if me is None:
            return sensor_update, items
        holder = conn.execute(
            select(sensors.c.id, sensors.c.status).where(
                sensors.c.company_id == me.company_id,
                sensors.c.surface == me.surface,
                sensors.c.url == sensor_update["url"],
                sensors.c.id != sensor_id,
            )
        ).first()
        if holder is None:
            return sensor_update, items
        settled, retired = onto_watched_url(
            dict(sensor_update),
            url=me.url,
            holder_id=holder.id,
            holder_status=holder.status,
            now=now,
        )
        if retired is not None:
            items.append(ReviewItem(ReviewKind.SENSOR_RETIRED, sensor_id, me.company_id, retired))
        return settled, items

    def _open_review(self, conn: Connection, item: ReviewItem, now: datetime) -> None:
        existing = conn.execute(
            select(review_queue.c.id).where(
                review_queue.c.kind == item.kind,
                review_queue.c.sensor_id == item.sensor_id,
                review_queue.c.status == ReviewStatus.OPEN,
            )
        ).first()
        if existing is None:  # one open item per sensor and kind
            conn.execute(
                insert(review_queue).values(
                    kind=item.kind,
                    status=ReviewStatus.OPEN,
                    sensor_id=item.sensor_id,
                    company_id=item.company_id,
                    detail=_jsonable(item.detail),
                    created_at=now,
                )
            )

    def charge(self, conn: Connection, charges: Sequence[LedgerCharge]) -> None:
        """Add `charges` to the cost ledger: one statement for all of a company's rows."""
        rows = [
            {
                "day": c.day,
                "company_id": c.company_id,
                "connector": c.connector,
                "fetch_units": c.fetch_units,
                "bytes_stored": c.bytes_stored,
            }
            for c in charges
        ]
        owned = [r for r in rows if r["company_id"] is not None]
        if owned:
            # An upsert: concurrent runs of one company must not both INSERT. Compiled once,
            # executed for every row (it was most of a group commit's cost, rebuilt per row).
            self._ledger_upsert.execute_many(conn, owned)
        for row in rows:
            if row["company_id"] is not None:
                continue
            # No unique key holds a NULL company: add to the row, or make it.
            where = and_(
                cost_ledger.c.day == row["day"],
                cost_ledger.c.company_id.is_(None),
                cost_ledger.c.connector == row["connector"],
            )
            result = conn.execute(
                update(cost_ledger)
                .where(where)
                .values(
                    fetch_units=cost_ledger.c.fetch_units + row["fetch_units"],
                    bytes_stored=cost_ledger.c.bytes_stored + row["bytes_stored"],
                )
            )
            if result.rowcount == 0:
                conn.execute(insert(cost_ledger).values(**row))

    @cached_property
    def _ledger_upsert(self) -> DriverStatement:
        upsert = (postgresql_insert if self.is_postgres else sqlite_insert)(cost_ledger)
        statement = upsert.on_conflict_do_update(
            index_elements=["day", "company_id", "connector"],
            set_={
                "fetch_units": cost_ledger.c.fetch_units + upsert.excluded.fetch_units,
                "bytes_stored": cost_ledger.c.bytes_stored + upsert.excluded.bytes_stored,
            },
        )
        columns = ("day", "company_id", "connector", "fetch_units", "bytes_stored")
        return DriverStatement.of(statement, self.engine.dialect, columns)

    @cached_property
    def _outbox_insert(self) -> DriverStatement:
        columns = ("run_id", "payload", "arrow", "created_at")
        return DriverStatement.of(insert(lake_outbox), self.engine.dialect, columns)

    # -- review queue and inbox -----------------------------------------------------------
    def list_review(self, *, kind: str | None = None, status: str | None = "open") -> list[Row]:
        query = select(review_queue).order_by(review_queue.c.id)
        if kind:
            query = query.where(review_queue.c.kind == kind)
        if status:
            query = query.where(review_queue.c.status == status)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def list_inbox(self, *, status: str | None = None) -> list[Row]:
        query = select(change_inbox).order_by(change_inbox.c.detected_at, change_inbox.c.change_id)
        if status:
            query = query.where(change_inbox.c.status == status)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    # -- runs -----------------------------------------------------------------------------
    def start_run(
        self,
        *,
        run_id: str,
        kind: str,
        worker: str,
        now: datetime,
        launcher: str = "local",
        launch_handle: str | None = None,
        **extra: Any,
    ) -> None:
        """`extra`: a site crawl's mode, config, inputs and lifecycle status."""
        with self.transaction() as conn:
            conn.execute(
                insert(crawl_runs).values(
                    id=run_id,
                    kind=kind,
                    worker=worker,
                    started_at=now,
                    counters={},
                    launcher=launcher,
                    launch_handle=launch_handle,
                    **extra,
                )
            )

    def finish_run(self, run_id: str, **values: Any) -> None:
        with self.transaction() as conn:
            conn.execute(update(crawl_runs).where(crawl_runs.c.id == run_id).values(**values))

    def open_runs(self) -> list[Row]:
        """Runs without a verdict yet (in progress, or left by a process that died)."""
        query = select(crawl_runs).where(crawl_runs.c.completed_at.is_(None))
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query.order_by(crawl_runs.c.id)).mappings()]

    def close_open_run(self, run_id: str, **values: Any) -> bool:
        """Give a run left open its verdict; False when another worker closed it first."""
        with self.transaction() as conn:
            result = conn.execute(
                update(crawl_runs)
                .where(crawl_runs.c.id == run_id, crawl_runs.c.completed_at.is_(None))
                .values(**values)
            )
            return result.rowcount == 1

    def last_run(self, kind: str, *, before: str | None = None) -> Row | None:
        query = select(crawl_runs).where(
            crawl_runs.c.kind == kind, crawl_runs.c.completed_at.is_not(None)
        )
        if before:
            query = query.where(crawl_runs.c.id < before)
        with self.engine.connect() as conn:
            row = conn.execute(query.order_by(crawl_runs.c.id.desc()).limit(1)).mappings().first()
            return dict(row) if row else None

    def run(self, run_id: str) -> Row | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(select(crawl_runs).where(crawl_runs.c.id == run_id)).mappings().first()
            )
            return dict(row) if row else None

    def runs(self, *, limit: int = 20, kind: str | None = None) -> list[Row]:
        query = select(crawl_runs).order_by(crawl_runs.c.id.desc()).limit(limit)
        if kind:
            query = query.where(crawl_runs.c.kind == kind)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    # -- lake outbox ----------------------------------------------------------------------
    def take_outbox(
        self, flush_id: str, *, run_id: str | None = None
    ) -> list[tuple[str, list[Row | bytes]]]:
        """Stamp unflushed outbox rows with ``flush_id``; return every stamped group, each
        row's lake rows as JSON (`{table: [row, ...]}`) or packed Arrow tables (bytes).

        Groups stamped by a flusher that died are returned too (with their old flush id),
        so they are written under the same file name again: a replace, not a duplicate.
        """
        with self.transaction(write_lock=True) as conn:
            pending = update(lake_outbox).where(lake_outbox.c.flush_id.is_(None))
            if run_id is not None:
                pending = pending.where(lake_outbox.c.run_id == run_id)
            conn.execute(pending.values(flush_id=flush_id))
            rows = conn.execute(
                select(lake_outbox.c.flush_id, lake_outbox.c.payload, lake_outbox.c.arrow)
                .where(lake_outbox.c.flush_id.is_not(None))
                .order_by(lake_outbox.c.id)
            ).all()
        groups: dict[str, list[Row | bytes]] = {}
        for group_id, payload, arrow in rows:
            groups.setdefault(group_id, []).append(bytes(arrow) if arrow is not None else payload)
        return list(groups.items())

    def drop_outbox(self, flush_id: str) -> None:
        with self.transaction() as conn:
            conn.execute(delete(lake_outbox).where(lake_outbox.c.flush_id == flush_id))

    def outbox_size(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(lake_outbox)).scalar_one())

    # -- key/value ------------------------------------------------------------------------
    def put_kv(self, key: str, value: Any, now: datetime) -> None:
        # One statement: two workers ending a tick at once both write the heartbeat, and
        # an update-then-insert lets both insert.
        upsert = (postgresql_insert if self.is_postgres else sqlite_insert)(settings_kv)
        upsert = upsert.values(key=key, value=value, updated_at=now)
        with self.transaction() as conn:
            conn.execute(
                upsert.on_conflict_do_update(
                    index_elements=["key"],
                    set_={"value": upsert.excluded.value, "updated_at": upsert.excluded.updated_at},
                )
            )

    def get_kv(self, key: str) -> Any:
        with self.engine.connect() as conn:
            return conn.execute(
                select(settings_kv.c.value).where(settings_kv.c.key == key)
            ).scalar()


def _is_duplicate(exc: IntegrityError) -> bool:
    """A unique-key violation (PostgreSQL SQLSTATE 23505, SQLite's UNIQUE message)."""
    orig = exc.orig
    return getattr(orig, "sqlstate", None) == "23505" or "UNIQUE constraint failed" in str(orig)


class RunWrites(Protocol):
    """What `apply_runs` reads of one run (group_commit.RunCommit has it)."""

    @property
    def sensor_id(self) -> int: ...
    @property
    def worker(self) -> str: ...
    @property
    def sensor_update(self) -> Mapping[str, Any]: ...
    @property
    def run_id(self) -> str: ...
    @property
    def lake_rows(self) -> Mapping[str, list[Row]]: ...
    @property
    def inbox(self) -> Sequence[InboxEntry]: ...
    @property
    def review(self) -> Sequence[ReviewItem]: ...
    @property
    def now(self) -> datetime: ...


def _run_fields(run: RunWrites) -> dict[str, Any]:
    return {
        "sensor_id": run.sensor_id,
        "worker": run.worker,
        "sensor_update": run.sensor_update,
        "run_id": run.run_id,
        "lake_rows": run.lake_rows,
        "inbox": run.inbox,
        "review": run.review,
        "now": run.now,
    }


class JsonText(str):
    """A value already serialised to JSON: a JSON column stores this text as it is."""


def _to_json(value: Any) -> str:
    # The engines' JSON serialiser: SQLAlchemy's default (json.dumps), except for JsonText.
    return value if isinstance(value, JsonText) else json.dumps(value)


def json_text(value: Any) -> JsonText:
    """`value` for a JSON column, serialised once (a run's lake rows are the largest values
    a commit writes): the same text as `_jsonable` then the column's own json.dumps."""
    text = json.dumps(value, default=plain)
    if "\\u0000" in text:
        text = json.dumps(without_nul(json.loads(text)))
    return JsonText(text)


def _jsonable(value: Any) -> Any:
    """Round-trip through JSON so datetimes and enums land as ISO strings and plain values."""
    text = json.dumps(value, default=plain)
    # JSON writes a NUL as the escape \u0000: without one, no walk over the rows is needed.
    return without_nul(json.loads(text)) if "\\u0000" in text else json.loads(text)


@dataclass(frozen=True)
class PreparedRuns:
    """The values `StateStore.apply_runs` writes for a group of runs (`prepare_runs`)."""

    updates: list[tuple[str, Any]]  # each run's sensor update: its statement and row
    outbox: list[dict[str, Any]]  # the outbox rows of all the runs


@dataclass(frozen=True)
class DriverStatement:
    """A statement compiled for the dialect once, run through the driver's executemany:
    its rows come converted as each column's type converts a value (datetimes to
    SQLite's text, JSON to its text), so executing it converts nothing row by row.
    SQLAlchemy did that inside the transaction, for every value of every row, and it cost
    three times the SQLite update itself."""

    sql: str
    names: tuple[str, ...]  # the bound values, in the statement's order when positional
    converters: tuple[Callable[[Any], Any] | None, ...]
    positional: bool

    @classmethod
    def of(cls, statement: Any, dialect: Dialect, columns: Sequence[str]) -> DriverStatement:
        compiled = statement.compile(dialect=dialect, column_keys=list(columns))
        names = (
            tuple(compiled.positiontup or ())
            if dialect.positional
            else tuple(compiled.bind_names.values())
        )
        types = {name: bind.type for bind, name in compiled.bind_names.items()}
        converters = tuple(types[n].dialect_impl(dialect).bind_processor(dialect) for n in names)
        return cls(compiled.string, names, converters, dialect.positional)

    def row(self, values: Mapping[str, Any]) -> Any:
        """`values` (by bound name) as the driver takes them: a tuple or a dict."""
        converted = [
            value if convert is None else convert(value)
            for value, convert in zip((values[n] for n in self.names), self.converters, strict=True)
        ]
        return (
            tuple(converted) if self.positional else dict(zip(self.names, converted, strict=True))
        )

    def execute_many(self, conn: Connection, rows: Iterable[Mapping[str, Any]]) -> None:
        """The statement once for each of `rows`, in one call to the driver."""
        conn.exec_driver_sql(self.sql, [self.row(values) for values in rows])


def _outbox_rows(
    runs: Iterable[tuple[str, Mapping[str, list[Row]], datetime]],
) -> list[dict[str, Any]]:
    """The lake rows of committed runs (run id, rows by table, when) as outbox rows: per
    run id (a tick's, usually one), each table's rows converted to Arrow once and packed
    (`lake_batches`)."""
    tables: dict[str, dict[str, list[Row]]] = {}
    latest: dict[str, datetime] = {}
    for run_id, lake_rows, now in runs:
        if not lake_rows:
            continue
        by_table = tables.setdefault(run_id, {})
        for name, rows in lake_rows.items():
            by_table.setdefault(name, []).extend(rows)
        latest[run_id] = max(latest.get(run_id, now), now)
    return [
        {
            "run_id": run_id,
            "payload": {},
            "arrow": pack({name: to_arrow(TABLES[name], rows) for name, rows in by_table.items()}),
            "created_at": latest[run_id],
        }
        for run_id, by_table in tables.items()
    ]


def add_to_inbox(conn: Connection, entry: InboxEntry, *, webpage_id: int | None = None) -> None:
    """A pending change waits in the inbox; a webpage's change names the page, not a sensor
    (`entry.sensor_id` is then the page's id, as `observe` saw it)."""
    conn.execute(
        insert(change_inbox).values(
            change_id=entry.change_id,
            sensor_id=None if webpage_id is not None else entry.sensor_id,
            webpage_id=webpage_id,
            company_id=entry.company_id,
            surface=entry.surface,
            kind=entry.kind,
            significance=entry.significance,
            summary=without_nul(entry.summary),
            detected_at=entry.detected_at,
            status="pending",
        )
    )

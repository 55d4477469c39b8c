"""The site-crawl side of the state store: configs, the `webpages` queue and run events.

Every query that reads or rewrites queue rows takes the scope as data: `hosts` (the
`host IN (...)` list the caller's ConfigScope admitted) and, for a path-scoped run, the
PathScope's anchored regex. Insertion never re-queues (insert-or-ignore).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from catlas_assets.domain.pipeline_data import InboxEntry
from catlas_assets.domain.vocabulary import CrawlStatus, ProcessingStatus
from resources.state.schema import (
    companies,
    crawl_configs,
    crawl_runs,
    lake_outbox,
    run_events,
    webpages,
)
from resources.state.store import StateStore, _jsonable, add_to_inbox

Row = dict[str, Any]

FORCE_RESET = (
    CrawlStatus.CRAWLED,
    CrawlStatus.CRAWL_FAILED,
    CrawlStatus.SKIPPED,
    CrawlStatus.CRAWLING,
)
RETRY_RESET = (CrawlStatus.CRAWL_FAILED, CrawlStatus.CRAWLING)


# -- configs ---------------------------------------------------------------------------
def add_config(store: StateStore, **values: Any) -> int:
    with store.transaction() as conn:
        return int(conn.execute(insert(crawl_configs).values(**values)).inserted_primary_key[0])


def config_by_name(store: StateStore, name: str) -> Row | None:
    query = (
        select(crawl_configs, companies.c.name.label("company"))
        .join(companies, companies.c.id == crawl_configs.c.company_id)
        .where(crawl_configs.c.name == name)
    )
    with store.engine.connect() as conn:
        row = conn.execute(query).mappings().first()
        return dict(row) if row else None


def list_configs(store: StateStore) -> list[Row]:
    query = (
        select(crawl_configs, companies.c.name.label("company"))
        .join(companies, companies.c.id == crawl_configs.c.company_id)
        .order_by(crawl_configs.c.name)
    )
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


# -- scope -----------------------------------------------------------------------------
def distinct_hosts(store: StateStore) -> list[str | None]:
    with store.engine.connect() as conn:
        return [r[0] for r in conn.execute(select(webpages.c.host).distinct())]


def _scoped(hosts: Sequence[str], path_regex: str | None) -> ColumnElement[bool]:
    condition = webpages.c.host.in_(list(hosts))
    if path_regex is not None:
        condition = and_(condition, webpages.c.url.regexp_match(path_regex, flags="i"))
    return condition


# -- the queue -------------------------------------------------------------------------
def insert_urls(store: StateStore, urls: Iterable[str], now: datetime) -> None:
    """Insert-or-ignore: a URL that already has a row keeps whatever status it had.

    In sorted order: pages crawled at once insert overlapping links, and on PostgreSQL two
    transactions taking the same keys in opposite orders would deadlock.
    """
    rows = [
        {"url": u, "crawl_status": CrawlStatus.PENDING.value, "snapshot_version": 0,
         "created_at": now, "updated_at": now}
        for u in sorted(set(urls))
    ]  # fmt: skip
    if not rows:
        return
    dialect_insert = pg_insert if store.is_postgres else sqlite_insert
    with store.transaction() as conn:
        conn.execute(
            dialect_insert(webpages).values(rows).on_conflict_do_nothing(index_elements=["url"])
        )


def page_by_url(store: StateStore, url: str) -> Row | None:
    with store.engine.connect() as conn:
        row = conn.execute(select(webpages).where(webpages.c.url == url)).mappings().first()
        return dict(row) if row else None


def page(store: StateStore, page_id: int) -> Row:
    with store.engine.connect() as conn:
        return dict(conn.execute(select(webpages).where(webpages.c.id == page_id)).mappings().one())


def reset(
    store: StateStore,
    statuses: Sequence[CrawlStatus],
    hosts: Sequence[str],
    path_regex: str | None,
    now: datetime,
) -> int:
    """Move scoped rows back to PENDING, clearing the redirect target (re-determined live)."""
    if not hosts:
        return 0
    with store.transaction() as conn:
        result = conn.execute(
            update(webpages)
            .where(
                webpages.c.crawl_status.in_([s.value for s in statuses]),
                _scoped(hosts, path_regex),
            )
            .values(
                crawl_status=CrawlStatus.PENDING.value,
                redirects_to=None,
                skip_reason=None,
                updated_at=now,
            )
        )
        return result.rowcount


def take_pending(
    store: StateStore,
    hosts: Sequence[str],
    path_regex: str | None,
    *,
    limit: int,
    exclude: Iterable[int] = (),
    now: datetime,
) -> list[Row]:
    """The next batch of scoped PENDING rows, marked CRAWLING (orphans if the run dies)."""
    if not hosts:
        return []
    query = (
        select(webpages)
        .where(
            webpages.c.crawl_status == CrawlStatus.PENDING.value,
            _scoped(hosts, path_regex),
            webpages.c.id.not_in(list(exclude)),
        )
        .order_by(webpages.c.id)
        .limit(limit)
    )
    with store.transaction(write_lock=True) as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
        if rows:
            conn.execute(
                update(webpages)
                .where(webpages.c.id.in_([r["id"] for r in rows]))
                .values(crawl_status=CrawlStatus.CRAWLING.value, updated_at=now)
            )
    return rows


def count_pending(store: StateStore, hosts: Sequence[str], path_regex: str | None) -> int:
    if not hosts:
        return 0
    query = select(func.count()).where(
        webpages.c.crawl_status == CrawlStatus.PENDING.value, _scoped(hosts, path_regex)
    )
    with store.engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def files_to_process(
    store: StateStore,
    status: ProcessingStatus,
    hosts: Sequence[str],
    path_regex: str | None,
) -> list[Row]:
    if not hosts:
        return []
    query = (
        select(webpages)
        .where(
            webpages.c.processing_status == status.value,
            webpages.c.object_key.is_not(None),
            _scoped(hosts, path_regex),
        )
        .order_by(webpages.c.id)
    )
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def list_pages(
    store: StateStore, hosts: Sequence[str], status: str | None = None, limit: int = 10_000
) -> list[Row]:
    if not hosts:
        return []
    query = select(webpages).where(webpages.c.host.in_(list(hosts)))
    if status:
        query = query.where(webpages.c.crawl_status == status)
    with store.engine.connect() as conn:
        return [
            dict(r) for r in conn.execute(query.order_by(webpages.c.id).limit(limit)).mappings()
        ]


def all_pages(store: StateStore) -> list[Row]:
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(webpages).order_by(webpages.c.id)).mappings()]


# -- processing hand-off ----------------------------------------------------------------
def flip_processing(store: StateStore, page_id: int, prior: Row, run_id: str) -> bool:
    """Mark a file as handed to processing, only if nobody advanced it meanwhile."""
    with store.transaction() as conn:
        result = conn.execute(
            update(webpages)
            .where(
                webpages.c.id == page_id,
                webpages.c.processing_status == prior["processing_status"],
            )
            .values(processing_status=ProcessingStatus.PROCESSING.value, last_run_id=run_id)
        )
        return result.rowcount == 1


def restore_processing(store: StateStore, page_id: int, prior: Row, run_id: str) -> bool:
    """Put back the prior status, only where this run's flip is still in place."""
    with store.transaction() as conn:
        result = conn.execute(
            update(webpages)
            .where(
                webpages.c.id == page_id,
                webpages.c.processing_status == ProcessingStatus.PROCESSING.value,
                webpages.c.last_run_id == run_id,
            )
            .values(processing_status=prior["processing_status"], last_run_id=prior["last_run_id"])
        )
        return result.rowcount == 1


# -- one processed URL -----------------------------------------------------------------
def commit_page(
    store: StateStore,
    *,
    page_id: int,
    update_values: Mapping[str, Any],
    events: Sequence[Row],
    lake_rows: Mapping[str, list[Row]],
    run_id: str,
    now: datetime,
    inbox: Sequence[InboxEntry] = (),
    only_if_processing: bool = False,
) -> bool:
    """One URL's outcome in one transaction: its row, its run events, its lake rows and
    the pending changes it adds to the inbox (delivered like a sensor's).

    `only_if_processing` makes the row update conditional on this run's hand-off still
    being in place, so a row a worker already advanced is never overwritten.
    """
    with store.transaction() as conn:
        query = update(webpages).where(webpages.c.id == page_id)
        if only_if_processing:
            query = query.where(
                webpages.c.processing_status == ProcessingStatus.PROCESSING.value,
                webpages.c.last_run_id == run_id,
            )
        if conn.execute(query.values(**update_values, updated_at=now)).rowcount != 1:
            conn.rollback()
            return False
        if events:
            conn.execute(insert(run_events), [dict(e) for e in events])
        payload = {table: rows for table, rows in lake_rows.items() if rows}
        if payload:
            conn.execute(
                insert(lake_outbox).values(
                    run_id=run_id, payload=_jsonable(payload), created_at=now
                )
            )
        for entry in inbox:
            add_to_inbox(conn, entry, webpage_id=page_id)
    return True


def run_events_of(store: StateStore, run_id: str, *, transition: str | None = None) -> list[Row]:
    query = select(run_events).where(run_events.c.run_id == run_id)
    if transition:
        query = query.where(run_events.c.transition == transition)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(query.order_by(run_events.c.id)).mappings()]


def update_run(store: StateStore, run_id: str, **values: Any) -> None:
    with store.transaction() as conn:
        conn.execute(update(crawl_runs).where(crawl_runs.c.id == run_id).values(**values))


def requeue(store: StateStore, page_ids: Sequence[int], now: datetime) -> None:
    """Rows a stopped run had taken but not reached go back to PENDING at once."""
    if not page_ids:
        return
    with store.transaction() as conn:
        conn.execute(
            update(webpages)
            .where(
                webpages.c.id.in_(list(page_ids)),
                webpages.c.crawl_status == CrawlStatus.CRAWLING.value,
            )
            .values(crawl_status=CrawlStatus.PENDING.value, updated_at=now)
        )


def requeue_orphans(store: StateStore, now: datetime) -> int:
    """Every CRAWLING row back to PENDING (no crawl is running: a dead one took them)."""
    with store.transaction() as conn:
        result = conn.execute(
            update(webpages)
            .where(webpages.c.crawl_status == CrawlStatus.CRAWLING.value)
            .values(crawl_status=CrawlStatus.PENDING.value, updated_at=now)
        )
        return int(result.rowcount)


def take_page(store: StateStore, page_id: int, now: datetime) -> Row:
    """One row taken now whatever its status (a single-page run)."""
    with store.transaction() as conn:
        conn.execute(
            update(webpages)
            .where(webpages.c.id == page_id)
            .values(crawl_status=CrawlStatus.CRAWLING.value, updated_at=now)
        )
        return dict(conn.execute(select(webpages).where(webpages.c.id == page_id)).mappings().one())

"""Several sensor runs committed in one transaction, with the same guarantees as one.

Each run's writes (its sensor row, outbox rows, inbox, review) are applied inside one
transaction, in a few statements for the whole group (`StateStore.apply_runs`); a run
whose claim was lost writes nothing and is reported as not committed, the others go on.
What many runs add to the same few rows is summed first and written once per group: the
cost ledger (per day, company and connector) and the connector stats (their tallies
summed, then one read-modify-write per connector). Those rows are written in a fixed
order, so two PostgreSQL workers committing groups at once cannot deadlock on them. A
caller may also hold the connector stats of committed runs back and hand them to a later
group (`stats`) or write them alone (`record_stats`): they are counters for people, read
by no decision.

Crash guarantees are those of a single run: a run counts only once its group's
transaction has committed; until then its claim stands, and a worker killed before the
commit leaves nothing of the group behind (its claims time out and are run again) but the
packs its runs wrote, which no row names and no reader finds. The places of the runs'
packed objects (`archive_objects`) are recorded in the same transaction as the rows that
name them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from catlas_assets.domain.connector_tally import StatsTally
from catlas_assets.domain.pipeline_data import InboxEntry, LedgerCharge, PackedObject, ReviewItem
from resources.state import archive_index, connector_stats
from resources.state.store import PreparedRuns, StateStore


@dataclass(frozen=True)
class ConnectorChange:
    """What runs of one connector add to its stats row."""

    name: str
    kind: str
    version: str
    tally: StatsTally


@dataclass(frozen=True)
class RunCommit:
    """What one sensor run writes to the state store."""

    sensor_id: int
    worker: str
    sensor_update: Mapping[str, Any]
    run_id: str
    lake_rows: Mapping[str, list[dict[str, Any]]]
    now: datetime
    inbox: Sequence[InboxEntry] = ()
    review: Sequence[ReviewItem] = ()
    ledger: LedgerCharge | None = None
    connector: ConnectorChange | None = field(default=None)
    archived: Sequence[PackedObject] = ()  # where the run's packed objects lie


def commit_runs(
    store: StateStore,
    runs: Sequence[RunCommit],
    *,
    wait: bool = True,
    prepared: PreparedRuns | None = None,
    stats: Sequence[ConnectorChange] = (),
    own_stats: bool = True,
) -> list[bool]:
    """Apply `runs` in one transaction; for each, whether it was committed. With
    `wait=False`, `WriterBusy` (nothing written) when the write lock is not free now.
    `prepared`: `store.prepare_runs(runs)`, when the caller has it already; `stats`: connector
    stats of runs committed earlier, written before the group's own (none with
    `own_stats=False`: the caller holds them back)."""
    if not runs:
        return []
    # What the statements write is computed first: SQLite's write lock is held for them alone.
    prepared = prepared or store.prepare_runs(runs)
    charges = merged_charges([r.ledger for r in runs if r.ledger is not None])
    with store.transaction(write_lock=True, wait=wait) as conn:
        applied = store.apply_runs(conn, runs, prepared)
        # Every run's, a lost claim's too: its packs are durable, and a run that found one
        # of its objects packed by another may be the first to commit its place.
        archive_index.record(conn, [place for run in runs for place in run.archived])
        kept = [run for run, ok in zip(runs, applied, strict=True) if ok]
        if len(kept) < len(runs):  # a lost claim charges nothing
            charges = merged_charges([r.ledger for r in kept if r.ledger is not None])
        store.charge(conn, charges)
        own = [run.connector for run in kept if run.connector is not None] if own_stats else []
        if own or stats:
            now = max(r.now for r in kept) if kept else max(r.now for r in runs)
            _apply_stats(conn, store, [*stats, *own], now)
    return applied


def record_stats(
    store: StateStore, changes: Sequence[ConnectorChange], now: datetime, *, wait: bool = True
) -> None:
    """Write connector stats held back from the groups of committed runs, in one transaction."""
    if changes:
        with store.transaction(write_lock=True, wait=wait) as conn:
            _apply_stats(conn, store, changes, now)


def summed(changes: Sequence[ConnectorChange]) -> list[ConnectorChange]:
    """One change per connector, its runs' tallies summed in order (kind and version of
    the last), in name order: the order the rows are written in, so that two workers cannot
    deadlock on them."""
    by_name: dict[str, ConnectorChange] = {}
    for change in changes:
        total = by_name.get(change.name)
        if total is None:
            total = by_name[change.name] = ConnectorChange(
                change.name, change.kind, change.version, StatsTally()
            )
        elif (total.kind, total.version) != (change.kind, change.version):
            total = by_name[change.name] = ConnectorChange(
                change.name, change.kind, change.version, total.tally
            )
        total.tally.add(change.tally)
    return [by_name[name] for name in sorted(by_name)]


def _apply_stats(
    conn: Connection, store: StateStore, changes: Sequence[ConnectorChange], now: datetime
) -> None:
    """One read-modify-write per connector."""
    for change in summed(changes):
        connector_stats.apply_change(
            conn,
            store,
            name=change.name,
            kind=change.kind,
            version=change.version,
            now=now,
            tally=change.tally,
        )


def merged_charges(charges: Sequence[LedgerCharge]) -> list[LedgerCharge]:
    """One charge per (day, company, connector), summed, in a fixed order."""
    sums: dict[tuple[str, int | None, str], list[int]] = {}
    for c in charges:
        total = sums.setdefault((c.day, c.company_id, c.connector), [0, 0])
        total[0] += c.fetch_units
        total[1] += c.bytes_stored
    return [
        LedgerCharge(
            day=day, company_id=company, connector=connector, fetch_units=u, bytes_stored=b
        )
        for (day, company, connector), (u, b) in sorted(
            sums.items(), key=lambda item: (item[0][0], item[0][1] or 0, item[0][2])
        )
    ]

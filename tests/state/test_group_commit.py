"""Sensor runs committed in groups: one transaction, each run as if alone (both backends)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from state_rows import NOW, SensorFactory

from catlas_assets.domain.connector_tally import StatsTally
from catlas_assets.domain.pipeline_data import LedgerCharge
from catlas_assets.domain.vocabulary import FailureClass, SensorStatus
from catlas_assets.services.commit_groups import GroupCommitter
from resources.lake_batches import unpack
from resources.state.connector_stats import all_stats
from resources.state.group_commit import ConnectorChange, RunCommit, commit_runs
from resources.state.schema import cost_ledger
from resources.state.store import StateStore
from resources.state.writer_queue import WriterBusy

DAY = "2026-01-05"


def _run(sensor_id: int, company_id: int, *, worker: str = "w1", units: int = 1) -> RunCommit:
    return RunCommit(
        sensor_id=sensor_id,
        worker=worker,
        sensor_update={"consecutive_unchanged": 3, "claimed_by": None, "claimed_at": None},
        run_id="run_1",
        lake_rows={"observations": [{"observation_id": f"obs_{sensor_id}", "fetched_at": NOW}]},
        now=NOW,
        ledger=LedgerCharge(DAY, company_id, "generic_html", units, 10),
        connector=ConnectorChange(
            "generic_html",
            "html",
            "1",
            StatsTally.of_run(outcome="unchanged", failure_class=None, entities=None, now=NOW),
        ),
    )


def _claim(store: StateStore, add_sensor: SensorFactory, n: int) -> list[int]:
    ids = [add_sensor() for _ in range(n)]
    rows = store.claim_due(now=NOW, worker="w1", limit=n, claim_timeout_s=900)
    assert sorted(r["id"] for r in rows) == sorted(ids)
    return ids


def _waiting(store: StateStore) -> list[list[str]]:
    """The observation ids each outbox row holds (stamped with a throwaway flush id and
    handed back: `take_outbox` only stamps)."""
    return [
        unpack(p)["observations"].column("observation_id").to_pylist()
        for _, payloads in store.take_outbox("fl_look")
        for p in payloads
    ]


def _ledger(store: StateStore) -> list[tuple]:
    query = select(cost_ledger.c.company_id, cost_ledger.c.fetch_units, cost_ledger.c.bytes_stored)
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(query)]


def test_a_group_commits_every_run_and_sums_the_shared_rows(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    ids = _claim(store, add_sensor, 3)
    applied = commit_runs(store, [_run(i, company_id, units=2) for i in ids])
    assert applied == [True, True, True]
    assert all(store.sensor(i)["claimed_by"] is None for i in ids)
    assert _waiting(store) == [[f"obs_{i}" for i in ids]]  # one outbox row for the group
    assert _ledger(store) == [(company_id, 6, 30)]  # one row, the group's sum
    assert all_stats(store)["generic_html"]["stats"]["runs"] == 3


def test_a_groups_sensor_rows_are_stored_as_a_single_runs_update_stores_them(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    """A group's sensor updates reach the driver with their values converted beforehand
    (`DriverStatement`); every kind of column is stored exactly as the one-run update,
    which SQLAlchemy converts itself, stores it: compared as the database holds it."""
    ids = _claim(store, add_sensor, 2)
    update = {
        "next_run_at": datetime(2026, 1, 6, 9, 30, 0, 123456, tzinfo=timezone(timedelta(hours=1))),
        "last_success_at": NOW,
        "last_change_at": None,
        "status": SensorStatus.ACTIVE,
        "last_failure_class": FailureClass.TIMEOUT,
        "quality_score": 61.25,
        "consecutive_unchanged": 4,
        "simhash": -(2**63) + 5,
        "etag": 'W/"\u00e9\x00x"',
        "config": {"max_pages": [1, "b"], "note": None},
        "claimed_by": None,
        "claimed_at": None,
    }
    group = replace(_run(ids[0], company_id), sensor_update=update, lake_rows={})
    assert commit_runs(store, [group]) == [True]
    with store.transaction() as conn:
        assert store.apply_run(
            conn, sensor_id=ids[1], worker="w1", sensor_update=update, run_id="run_1",
            lake_rows={}, inbox=(), review=(), now=NOW,
        )  # fmt: skip
    columns = ", ".join(update)
    with store.engine.connect() as conn:
        stored = conn.exec_driver_sql(
            f"SELECT id, {columns} FROM sensors WHERE id IN ({ids[0]}, {ids[1]}) ORDER BY id"
        ).all()
    assert stored[0][1:] == stored[1][1:]
    row = store.sensor(ids[0])
    assert row["next_run_at"] == datetime(2026, 1, 6, 8, 30, 0, 123456, tzinfo=UTC)
    assert row["etag"] == 'W/"\u00e9x"'  # NUL removed, as from every value
    assert row["config"] == {"max_pages": [1, "b"], "note": None}


def test_a_lost_claim_writes_nothing_of_its_run_and_the_others_commit(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    ids = _claim(store, add_sensor, 3)
    runs = [
        _run(ids[0], company_id),
        _run(ids[1], company_id, worker="other"),
        _run(ids[2], company_id),
    ]
    assert commit_runs(store, runs) == [True, False, True]
    assert store.sensor(ids[1])["claimed_by"] == "w1"  # untouched: still claimed
    assert _waiting(store) == [[f"obs_{ids[0]}", f"obs_{ids[2]}"]]
    assert _ledger(store) == [(company_id, 2, 20)]  # the lost run is not charged
    assert all_stats(store)["generic_html"]["stats"]["runs"] == 2


def test_the_committer_groups_runs_and_answers_each(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    ids = _claim(store, add_sensor, 5)

    async def go() -> list[bool]:
        committer = GroupCommitter(store, max_runs=2, max_wait_ms=10_000)
        first = [asyncio.create_task(committer.commit(_run(i, company_id))) for i in ids[:4]]
        done = await asyncio.gather(*first)  # two full groups: no wait for the timer
        last = asyncio.create_task(committer.commit(_run(ids[4], company_id)))
        await asyncio.sleep(0)
        await committer.aclose()  # the last, alone, committed on close
        return [*done, await last]

    assert asyncio.run(go()) == [True] * 5
    assert 1 < store.outbox_size() < 5  # a row per group (the last came alone), not per run
    assert sorted(x for group in _waiting(store) for x in group) == sorted(f"obs_{i}" for i in ids)
    assert _ledger(store) == [(company_id, 5, 50)]


def test_a_group_is_written_at_once_when_every_run_in_flight_waits_for_it(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    """Three runs under way, all three waiting: nothing else could join the group, so it
    is written without waiting for the timer (20 s, far beyond any commit of a loaded
    machine); a fourth run still fetching keeps the group open until the timer (0.3 s)."""
    ids = _claim(store, add_sensor, 6)

    async def go(in_flight: int, group: list[int], max_wait_ms: int) -> float:
        committer = GroupCommitter(
            store, max_runs=32, max_wait_ms=max_wait_ms, in_flight=lambda: in_flight
        )
        started = time.monotonic()
        done = await asyncio.gather(*(committer.commit(_run(i, company_id)) for i in group))
        await committer.aclose()
        assert done == [True] * 3
        return time.monotonic() - started

    assert asyncio.run(go(3, ids[:3], 20_000)) < 10  # at once, not after the timer
    assert asyncio.run(go(4, ids[3:], 300)) >= 0.3  # the timer


def test_runs_with_different_columns_each_get_their_own_values(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    ids = _claim(store, add_sensor, 4)
    released = {"claimed_by": None, "claimed_at": None}
    updates = [
        {**released, "consecutive_unchanged": 7},
        {**released, "etag": '"v2"', "consecutive_unchanged": 1},
        {**released, "consecutive_unchanged": 9},
        {**released, "etag": 'W/"x\x00y"', "consecutive_unchanged": 2},  # a NUL goes
    ]
    runs = [
        RunCommit(
            sensor_id=i,
            worker="w1",
            sensor_update=u,
            run_id="run_1",
            lake_rows={}
            if n == 2
            else {"observations": [{"observation_id": f"obs_{i}", "fetched_at": NOW}]},
            now=NOW,
        )
        for n, (i, u) in enumerate(zip(ids, updates, strict=True))
    ]
    lost = RunCommit(
        sensor_id=ids[0], worker="other", sensor_update=updates[2], run_id="run_2",
        lake_rows={"observations": [{"observation_id": "obs_lost", "fetched_at": NOW}]}, now=NOW,
    )  # fmt: skip

    assert commit_runs(store, [lost, *runs]) == [False, True, True, True, True]

    rows = [store.sensor(i) for i in ids]
    assert [r["consecutive_unchanged"] for r in rows] == [7, 1, 9, 2]
    assert [r["etag"] for r in rows] == [None, '"v2"', None, 'W/"xy"']
    assert all(r["claimed_by"] is None for r in rows)
    # The lost run's rows and the row-less run's (none) are not there.
    assert _waiting(store) == [[f"obs_{i}" for n, i in enumerate(ids) if n != 2]]


def test_lake_rows_reach_the_outbox_as_arrow_without_nul(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    ids = _claim(store, add_sensor, 2)
    rows = {
        "observations": [
            {"observation_id": "obs_1", "fetched_at": NOW, "etag": 'W/"v1\x00"'},
            {"observation_id": "obs_2", "fetched_at": NOW.isoformat(), "etag": '"é"'},
        ],
        "snapshots": [
            {"snapshot_id": "snp_1", "captured_at": NOW, "extracted": {"t": "a\x00b", "n": [1]}}
        ],
    }
    runs = [
        RunCommit(
            sensor_id=i, worker="w1", sensor_update={"claimed_by": None}, run_id="run_1",
            lake_rows=rows, now=NOW,
        )
        for i in ids
    ]  # fmt: skip
    assert commit_runs(store, runs) == [True, True]

    [(_, [payload])] = store.take_outbox("flush_1")
    tables = unpack(payload)
    observations = tables["observations"]
    assert observations.column("etag").to_pylist() == ['W/"v1"', '"é"', 'W/"v1"', '"é"']
    assert observations.column("fetched_at").to_pylist() == [NOW] * 4  # an ISO text too
    assert tables["snapshots"].column("extracted").to_pylist() == ['{"n": [1], "t": "ab"}'] * 2


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_group_never_waits_on_the_loop_for_another_writer(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    """A writer outside the queue holds the SQLite file for 0.4 s: the loop goes on all the
    while (a group is tried on it, then waits in a thread), and the runs commit after."""
    ids = _claim(store, add_sensor, 4)
    outsider = sqlite3.connect(store.engine.url.database or "", isolation_level=None)
    outsider.execute("BEGIN IMMEDIATE")

    async def go() -> tuple[list[bool], int]:
        committer = GroupCommitter(store, max_runs=2, max_wait_ms=0)
        turns = 0

        async def beat() -> None:
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0.01)

        beating = asyncio.create_task(beat())
        runs = [asyncio.create_task(committer.commit(_run(i, company_id))) for i in ids]
        await asyncio.sleep(0.4)
        seen = turns  # the loop's turns while the file was held
        outsider.execute("COMMIT")
        done = await asyncio.gather(*runs)
        await committer.aclose()
        beating.cancel()
        return done, seen

    try:
        done, turns = asyncio.run(go())
    finally:
        outsider.close()
    assert done == [True] * 4
    assert turns >= 20  # ~40 at 10 ms; a loop waiting for the lock would show none
    assert all(store.sensor(i)["claimed_by"] is None for i in ids)
    assert sorted(x for group in _waiting(store) for x in group) == sorted(f"obs_{i}" for i in ids)


def test_only_a_sqlite_write_transaction_starts_without_waiting(store: StateStore) -> None:
    with pytest.raises(WriterBusy), store.transaction(wait=False):
        pass
    if store.is_postgres:  # its statements may wait for other workers' row locks
        with pytest.raises(WriterBusy), store.transaction(write_lock=True, wait=False):
            pass
    else:
        with store.transaction(write_lock=True, wait=False) as conn:
            assert conn.exec_driver_sql("SELECT 1").scalar_one() == 1


def _stats_runs(store: StateStore) -> int:
    return int(all_stats(store).get("generic_html", {}).get("stats", {}).get("runs", 0))


def test_the_committer_holds_connector_stats_back_until_its_close(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    """Within a second, three groups write no connector stats; the close writes them all in
    one read-modify-write (a tick's groups were one each on the connector's row). A lost
    claim's run counts in none."""
    ids = _claim(store, add_sensor, 6)
    written: list[int] = []

    async def go() -> None:
        committer = GroupCommitter(store, max_runs=2, max_wait_ms=10_000)
        runs = [_run(i, company_id, worker="other" if i == ids[5] else "w1") for i in ids]
        for pair in (runs[0:2], runs[2:4], runs[4:6]):
            await asyncio.gather(*(committer.commit(r) for r in pair))
        written.append(_stats_runs(store))
        await committer.aclose()

    asyncio.run(go())
    assert written == [0]
    assert _stats_runs(store) == 5
    assert _ledger(store) == [(company_id, 5, 50)]  # the ledger is the groups' own still


def test_drain_commits_a_cancelled_runs_waiting_commit_and_leaves_the_stats_to_close(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    """A lane says it is done once `drain` returns: a run whose task was cancelled while
    its commit waited for the group is committed by then (the commit goes on without its
    task), and the connector stats wait for `aclose`."""
    ids = _claim(store, add_sensor, 2)
    seen: dict[str, object] = {}

    async def go() -> None:
        committer = GroupCommitter(store, max_runs=32, max_wait_ms=10_000)
        waiting = [asyncio.create_task(committer.commit(_run(i, company_id))) for i in ids]
        await asyncio.sleep(0)
        waiting[0].cancel()  # the tick gave this run up while its group waited
        await asyncio.gather(waiting[0], return_exceptions=True)
        assert waiting[0].cancelled() and store.outbox_size() == 0  # nothing written yet
        await committer.drain()  # not the 10 s of the group's timer
        seen["observations"] = sorted(x for group in _waiting(store) for x in group)
        seen["other"] = await waiting[1]
        seen["stats"] = _stats_runs(store)
        await committer.aclose()

    asyncio.run(go())
    assert seen == {"other": True, "observations": sorted(f"obs_{i}" for i in ids), "stats": 0}
    assert _stats_runs(store) == 2


def test_held_back_stats_go_with_the_first_group_once_due_and_survive_a_failed_one(
    store: StateStore,
    company_id: int,
    add_sensor: SensorFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from catlas_assets.services import commit_groups

    monkeypatch.setattr(commit_groups, "STATS_EVERY_S", 0.0)  # due at every group
    ids = _claim(store, add_sensor, 6)
    real = commit_groups.commit_runs
    tries: list[int] = []

    def second_fails(*args: object, **kwargs: object) -> list[bool]:
        held: list[ConnectorChange] = kwargs["stats"]  # type: ignore[assignment]
        tries.append(sum(change.tally.runs for change in held))
        if len(tries) == 2:
            raise OSError("disk full")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(commit_groups, "commit_runs", second_fails)
    seen: list[int] = []

    async def go() -> None:
        committer = GroupCommitter(store, max_runs=2, max_wait_ms=10_000)
        for pair in (ids[0:2], ids[2:4], ids[4:6]):
            results = await asyncio.gather(
                *(committer.commit(_run(i, company_id)) for i in pair), return_exceptions=True
            )
            seen.append(_stats_runs(store))
            assert all(r is True for r in results) or all(isinstance(r, OSError) for r in results)
        await committer.aclose()

    asyncio.run(go())
    # The first group's stats wait for the second, which fails: they go with the third.
    assert tries == [0, 2, 2]
    assert seen == [0, 0, 2]
    assert _stats_runs(store) == 4  # the failed group's runs never committed


def test_stats_that_cannot_be_written_at_close_leave_the_runs_committed(
    store: StateStore,
    company_id: int,
    add_sensor: SensorFactory,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from catlas_assets.services import commit_groups

    def broken(*_args: object, **_kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(commit_groups, "record_stats", broken)
    ids = _claim(store, add_sensor, 2)

    async def go() -> list[bool]:
        committer = GroupCommitter(store, max_runs=2, max_wait_ms=10_000)
        done = await asyncio.gather(*(committer.commit(_run(i, company_id)) for i in ids))
        await committer.aclose()  # does not raise: the runs stand
        return list(done)

    assert asyncio.run(go()) == [True, True]
    assert "connector stats of 2 runs not written (disk full)" in caplog.text
    assert all(store.sensor(i)["claimed_by"] is None for i in ids)
    assert _stats_runs(store) == 0

"""The outbox between the state store and the lake: crash safety on SQLite and PostgreSQL."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from catlas_assets.domain.pipeline_data import LedgerCharge
from catlas_assets.services import catalog, lake_sync
from catlas_assets.services.runtime import Runtime
from resources.lake_batches import unpack
from resources.state.schema import cost_ledger

MakeRuntime = Callable[..., Runtime]


class Sensor:
    """One company with one careers sensor, and a way to commit a run's lake rows for it."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.company_id = catalog.add_company(
            runtime, name="Northwind Robotics", website="http://northwind-robotics.com"
        )
        self.sensor_id = catalog.add_sensor(
            runtime,
            company_id=self.company_id,
            surface="careers",
            url="http://northwind-robotics.com/careers",
        )
        self.count = 0

    def claim(self, worker: str, *, after: timedelta = timedelta(0)) -> bool:
        store, clock = self.runtime.store, self.runtime.clock
        claimed = store.claim_due(
            now=clock.now() + after,
            worker=worker,
            limit=10,
            claim_timeout_s=self.runtime.settings.claim_timeout_s,
        )
        return [row["id"] for row in claimed] == [self.sensor_id]

    def rows(self, run_id: str) -> dict[str, list[dict[str, Any]]]:
        self.count += 1
        now = self.runtime.clock.now()
        obs_id = f"obs_{run_id}_{self.count}"
        common = {"sensor_id": self.sensor_id, "company_id": self.company_id, "surface": "careers"}
        return {
            "observations": [
                {
                    "observation_id": obs_id,
                    "run_id": run_id,
                    **common,
                    "url": "http://northwind-robotics.com/careers",
                    "fetched_at": now,
                    "outcome": "ok",
                    "http_status": 200,
                }
            ],
            "snapshots": [
                {
                    "snapshot_id": f"snp_{obs_id}",
                    "run_id": run_id,
                    **common,
                    "version": self.count,
                    "observation_id": obs_id,
                    "captured_at": now,
                    "extracted": {"jobs": ["Junior QA Analyst"]},
                }
            ],
        }

    def commit(self, run_id: str, *, worker: str | None = None) -> bool:
        now = self.runtime.clock.now()
        return self.runtime.store.commit_sensor_run(
            sensor_id=self.sensor_id,
            worker=worker or self.runtime.worker,
            sensor_update={"claimed_at": None, "claimed_by": None, "last_fetched_at": now},
            run_id=run_id,
            lake_rows=self.rows(run_id),
            inbox=[],
            review=[],
            ledger=LedgerCharge(f"{now:%Y-%m-%d}", self.company_id, "generic_html", 1, 100),
            now=now,
        )


def lake_ids(runtime: Runtime) -> dict[str, list[str]]:
    con = runtime.lake.connect()
    return {
        "observations": [
            r[0]
            for r in con.execute("SELECT observation_id FROM observations ORDER BY 1").fetchall()
        ],
        "snapshots": [
            r[0] for r in con.execute("SELECT snapshot_id FROM snapshots ORDER BY 1").fetchall()
        ],
    }


def batch_names(runtime: Runtime) -> list[str]:
    keys = runtime.lake.files("observations") + runtime.lake.files("snapshots")
    return sorted(posixpath.basename(k) for k in keys)


def test_rows_committed_before_a_crash_are_flushed_once_by_the_next_process(
    make_runtime: MakeRuntime, database_url: str
) -> None:
    dead = make_runtime(database_url)
    sensor = Sensor(dead)
    assert sensor.claim(dead.worker)
    assert sensor.commit("run_dead")
    fetched_at = dead.clock.now()
    dead.close()  # the process ends here: nothing was flushed
    assert dead.lake.files("observations") == []

    runtime = make_runtime(database_url)
    assert runtime.store.outbox_size() == 1
    written = lake_sync.flush(runtime)

    assert sorted(w.table for w in written) == ["observations", "snapshots"]
    assert runtime.store.outbox_size() == 0
    assert lake_ids(runtime) == {
        "observations": ["obs_run_dead_1"],
        "snapshots": ["snp_obs_run_dead_1"],
    }
    con = runtime.lake.connect()
    assert con.execute("SELECT fetched_at, run_id FROM observations").fetchall() == [
        (fetched_at, "run_dead")
    ]
    assert con.execute("SELECT extracted->>'$.jobs[0]' FROM snapshots").fetchone() == (
        "Junior QA Analyst",
    )

    assert lake_sync.flush(runtime) == []  # nothing twice
    assert lake_ids(runtime)["observations"] == ["obs_run_dead_1"]


@pytest.mark.parametrize("written_before_crash", ["all tables", "first table only"])
def test_a_flusher_that_died_before_dropping_its_group_is_replaced_not_duplicated(
    make_runtime: MakeRuntime, database_url: str, written_before_crash: str
) -> None:
    runtime = make_runtime(database_url)
    sensor = Sensor(runtime)
    assert sensor.claim(runtime.worker)
    assert sensor.commit("run_1")

    # The dead flusher: stamped the group and wrote Parquet, then died before drop_outbox.
    groups = runtime.store.take_outbox("fl_dead")
    assert [group_id for group_id, _ in groups] == ["fl_dead"]
    (payload,) = groups[0][1]
    data = unpack(payload)
    tables = sorted(data)
    if written_before_crash == "first table only":
        tables = tables[:1]
    for table in tables:
        runtime.lake.write_arrow(table, data[table], batch_id="fl_dead")
    assert runtime.store.outbox_size() == 1

    # Meanwhile another run commits, and the next flush comes.
    runtime.clock.advance(timedelta(minutes=5))
    assert sensor.claim(runtime.worker)
    assert sensor.commit("run_2")
    written = lake_sync.flush(runtime)

    dead_files = sorted(w.key for w in written if w.key.endswith("part-fl_dead.parquet"))
    assert len(dead_files) == 2  # the stamped group is written again under its own name
    assert runtime.store.outbox_size() == 0
    names = batch_names(runtime)
    assert names.count("part-fl_dead.parquet") == 2
    assert len(names) == 4  # plus one file per table for the new group
    assert lake_ids(runtime) == {
        "observations": ["obs_run_1_1", "obs_run_2_2"],
        "snapshots": ["snp_obs_run_1_1", "snp_obs_run_2_2"],
    }
    assert lake_sync.flush(runtime) == []


def test_a_lost_claim_writes_nothing(make_runtime: MakeRuntime, database_url: str) -> None:
    runtime = make_runtime(database_url)
    sensor = Sensor(runtime)
    assert sensor.claim("worker-slow")
    # the slow worker's claim times out and another worker takes the sensor over
    timeout = timedelta(seconds=runtime.settings.claim_timeout_s + 1)
    assert sensor.claim("worker-fast", after=timeout)

    assert sensor.commit("run_slow", worker="worker-slow") is False

    assert runtime.store.outbox_size() == 0
    assert lake_sync.flush(runtime) == []
    assert runtime.lake.files("observations") == []
    assert runtime.store.sensor(sensor.sensor_id)["claimed_by"] == "worker-fast"
    with runtime.store.engine.connect() as conn:
        assert conn.execute(select(cost_ledger)).all() == []

    # the worker that holds the claim commits normally
    assert sensor.commit("run_fast", worker="worker-fast") is True
    assert runtime.store.outbox_size() == 1
    lake_sync.flush(runtime)
    assert lake_ids(runtime)["observations"] == ["obs_run_fast_2"]


def test_a_flush_scoped_to_a_run_leaves_other_runs_waiting(
    make_runtime: MakeRuntime, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    sensor = Sensor(runtime)
    for run_id in ("run_a", "run_b"):
        assert sensor.claim(runtime.worker)
        assert sensor.commit(run_id)

    lake_sync.flush(runtime, run_id="run_b")
    assert lake_ids(runtime)["observations"] == ["obs_run_b_2"]
    assert runtime.store.outbox_size() == 1

    lake_sync.flush(runtime)
    assert lake_ids(runtime)["observations"] == ["obs_run_a_1", "obs_run_b_2"]
    assert runtime.store.outbox_size() == 0

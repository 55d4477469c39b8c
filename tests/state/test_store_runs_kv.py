"""Run records (start, finish, last, list) and the key/value table."""

from __future__ import annotations

from datetime import timedelta

from state_rows import NOW

from resources.state.store import StateStore


def _run(store: StateStore, run_id: str, kind: str = "tick", *, finish: bool = True) -> None:
    store.start_run(run_id=run_id, kind=kind, worker="w1", now=NOW)
    if finish:
        store.finish_run(
            run_id,
            completed_at=NOW + timedelta(seconds=5),
            stop="queue_empty",
            outcome="success",
            claimed=3,
            ok=2,
        )


def test_started_run_reads_back_open_with_zero_counters(store: StateStore) -> None:
    store.start_run(
        run_id="run_a", kind="tick", worker="w7", now=NOW, launcher="dagster", launch_handle="d1"
    )
    [run] = store.runs()
    assert (run["id"], run["kind"], run["worker"]) == ("run_a", "tick", "w7")
    assert (run["launcher"], run["launch_handle"]) == ("dagster", "d1")
    assert run["started_at"] == NOW
    assert run["completed_at"] is None and run["stop"] is None and run["outcome"] is None
    assert (run["claimed"], run["failed"], run["empty_streak"]) == (0, 0, 0)
    assert run["productive"] is False
    assert run["counters"] == {}


def test_finish_run_records_the_verdict_and_counters(store: StateStore) -> None:
    store.start_run(run_id="run_a", kind="tick", worker="w1", now=NOW)
    store.finish_run(
        "run_a",
        completed_at=NOW + timedelta(seconds=2),
        stop="max_requests",
        outcome="partial",
        detail="Reached max requests limit (20)",
        claimed=20,
        failed=4,
        productive=True,
        counters={"changed": 1},
    )
    run = store.last_run("tick")
    assert run is not None
    assert (run["stop"], run["outcome"], run["detail"]) == (
        "max_requests",
        "partial",
        "Reached max requests limit (20)",
    )
    assert (run["claimed"], run["failed"], run["productive"]) == (20, 4, True)
    assert run["counters"] == {"changed": 1}
    assert run["completed_at"] == NOW + timedelta(seconds=2)


def test_last_run_is_the_newest_completed_run_of_that_kind(store: StateStore) -> None:
    _run(store, "run_01")
    _run(store, "run_02", kind="repair")
    _run(store, "run_03")
    _run(store, "run_04", finish=False)
    last = store.last_run("tick")
    assert last is not None and last["id"] == "run_03"
    before = store.last_run("tick", before="run_03")
    assert before is not None and before["id"] == "run_01"
    assert store.last_run("tick", before="run_01") is None
    assert store.last_run("discovery") is None


def test_runs_list_newest_first_limited_and_filtered(store: StateStore) -> None:
    for i in range(1, 6):
        _run(store, f"run_0{i}", kind="tick" if i % 2 else "repair")
    assert [r["id"] for r in store.runs()] == ["run_05", "run_04", "run_03", "run_02", "run_01"]
    assert [r["id"] for r in store.runs(limit=2)] == ["run_05", "run_04"]
    assert [r["id"] for r in store.runs(kind="repair")] == ["run_04", "run_02"]


def test_put_kv_updates_the_value_in_place(store: StateStore) -> None:
    assert store.get_kv("scheduler:heartbeat") is None
    store.put_kv("scheduler:heartbeat", {"at": "2026-01-05T08:00:00+00:00", "n": 1}, NOW)
    store.put_kv("scheduler:heartbeat", {"at": "2026-01-05T08:01:00+00:00", "n": 2}, NOW)
    store.put_kv("scheduler:w2", [1, 2], NOW)
    assert store.get_kv("scheduler:heartbeat") == {"at": "2026-01-05T08:01:00+00:00", "n": 2}
    assert store.get_kv("scheduler:w2") == [1, 2]
    with store.engine.connect() as conn:
        count = conn.exec_driver_sql(
            "SELECT count(*) FROM settings_kv WHERE key = 'scheduler:heartbeat'"
        ).scalar_one()
    assert count == 1

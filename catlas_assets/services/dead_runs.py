"""Every run gets a verdict: a run row left open by a process that died is closed.

A run's row is opened when it starts and closed by its own process at the end; a process
killed in between (kill -9, a power cut) leaves it open. The next worker closes it: stop
`error`, detail "process died", and the counters of what that run did reach the lake —
its outbox rows are flushed first, then its observations are counted by outcome.

A run is dead when its worker is a process of this host that no longer exists, or, for
another host's worker, when neither the run nor the worker's heartbeat moved for
`claim_timeout_s` (its claims have expired by then too).

A dead writer may also have left a half-written temp file in the local lake or archive;
the first run of each process removes those (`remove_stale_tmp`). Every kind of run settles
the dead at its start (`settle`): a killed site crawl or reprocess is closed by the next
run of any kind, not only by a scheduler tick.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import Any

from catlas_assets.domain.verdict import Tally, decide_outcome
from catlas_assets.domain.vocabulary import SUCCESSES, Outcome, RunStatus, Stop
from catlas_assets.services import lake_sync
from catlas_assets.services.runtime import Runtime
from resources.process_alive import alive, local_worker_gone

DETAIL = "process died"
# A write takes seconds: a temp file this old, whoever wrote it, will never be renamed.
TMP_MAX_AGE_S = 3600
_swept: set[str] = set()


def settle(runtime: Runtime) -> None:
    """What a run does first: close the runs whose process died, remove their temp files."""
    close_dead_runs(runtime)
    remove_stale_tmp(runtime)


def remove_stale_tmp(runtime: Runtime) -> list[str]:
    """Once per process and lake: delete the temp files of writes that never finished."""
    url = runtime.settings.resolved_lake_url
    if url in _swept:
        return []
    _swept.add(url)
    stale = runtime.storage.stale_tmp_files(alive, TMP_MAX_AGE_S)
    runtime.storage.remove_files(stale)
    return stale


def close_dead_runs(runtime: Runtime) -> list[str]:
    """Close the open runs whose process died; their ids."""
    now = runtime.clock.now()
    dead = [
        row
        for row in runtime.store.open_runs()
        if row["worker"] != runtime.worker and _is_dead(runtime, row, now)
    ]
    if not dead:
        return []
    lake_sync.flush(runtime)  # what the dead run committed but never flushed goes out first
    closed = []
    for row in dead:
        counters = observed_counters(runtime, row["id"])
        tally = Tally(
            succeeded=sum(counters.get(o.value, 0) for o in SUCCESSES),
            failures=counters.get("failed", 0) + counters.get("redirected", 0),
            coverage_gaps=counters.get("failed", 0) + counters.get("skipped", 0),
            productive=any(counters.get(o.value, 0) for o in SUCCESSES),
        )
        if runtime.store.close_open_run(
            row["id"],
            completed_at=now,
            stop=Stop.ERROR,
            outcome=decide_outcome(Stop.ERROR, tally),
            detail=DETAIL,
            coverage_gaps=tally.coverage_gaps,
            productive=tally.productive,
            counters=counters,
            **_status(row),
            **{k: v for k, v in counters.items() if k != "claimed"},
        ):
            closed.append(row["id"])
    return closed


def _status(row: dict[str, Any]) -> dict[str, str]:
    # A site crawl's row also says it is running: it no longer is.
    if row.get("status") == RunStatus.RUNNING.value:
        return {"status": RunStatus.FAILED.value, "error_message": DETAIL}
    return {}


def observed_counters(runtime: Runtime, run_id: str) -> dict[str, int]:
    """The run's observations in the lake, counted by outcome (every outcome present)."""
    con = runtime.lake.connect()
    try:
        rows = con.execute(
            "SELECT outcome, count(*) FROM observations WHERE run_id = ? GROUP BY outcome",
            [run_id],
        ).fetchall()
    finally:
        con.close()
    found = {str(outcome): int(n) for outcome, n in rows}
    return {o.value: found.get(o.value, 0) for o in Outcome}


def _is_dead(runtime: Runtime, row: dict[str, Any], now: datetime) -> bool:
    gone = local_worker_gone(row["worker"])
    if gone is not None:
        return gone
    beat = runtime.store.get_kv(f"scheduler:heartbeat:{row['worker']}") or {}
    last = row["started_at"]
    with contextlib.suppress(KeyError, TypeError, ValueError):
        last = max(last, datetime.fromisoformat(beat["at"]))
    return now - last > timedelta(seconds=runtime.settings.claim_timeout_s)

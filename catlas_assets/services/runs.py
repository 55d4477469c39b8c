"""Run bookkeeping: one `crawl_runs` row per run, its verdict, and `.last_run.json`.

The verdict is computed once (domain/verdict.py) and the same values go to the row, the
local `.last_run.json`, the CLI's summary line and exit code, and Dagster metadata.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from catlas_assets.domain.masking import masked
from catlas_assets.domain.verdict import Tally, decide_outcome, next_empty_streak
from catlas_assets.domain.vocabulary import RunKind, RunOutcome, Stop
from catlas_assets.ids import new_id
from catlas_assets.services.runtime import Runtime

COUNTERS = (
    "claimed",
    "ok",
    "changed",
    "meaningful",
    "failed",
    "not_modified",
    "unchanged",
    "skipped",
    "redirected",
    "requests",
)


@dataclass
class RunReport:
    """The library's view of a finished run (what `catlas report` and Dagster show)."""

    run_id: str
    kind: str
    stop: Stop
    outcome: RunOutcome
    detail: str
    started_at: datetime
    completed_at: datetime
    counters: dict[str, int] = field(default_factory=dict)
    coverage_gaps: int = 0
    empty_streak: int = 0
    productive: bool = False

    @property
    def summary_line(self) -> str:
        c = self.counters
        return (
            f"{self.kind} {self.run_id}: {self.outcome.value} (stop: {self.stop.value}"
            + (f" - {self.detail}" if self.detail else "")
            + f") claimed={c.get('claimed', 0)} ok={c.get('ok', 0)} changed={c.get('changed', 0)}"
            f" unchanged={c.get('unchanged', 0)} not_modified={c.get('not_modified', 0)}"
            f" failed={c.get('failed', 0)} redirected={c.get('redirected', 0)}"
            f" skipped={c.get('skipped', 0)} gaps={self.coverage_gaps}"
        )

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["stop"], data["outcome"] = self.stop.value, self.outcome.value
        data["started_at"] = self.started_at.isoformat()
        data["completed_at"] = self.completed_at.isoformat()
        return data


class RunRecorder:
    def __init__(
        self,
        runtime: Runtime,
        kind: RunKind,
        launch_handle: str | None = None,
        extra: dict[str, Any] | None = None,
        launcher: str | None = None,
        run_id: str | None = None,
    ) -> None:
        self.runtime = runtime
        self.kind = kind
        self.started_at = runtime.clock.now()
        self.run_id = run_id or new_id("run", self.started_at)
        runtime.store.start_run(
            run_id=self.run_id,
            kind=kind,
            worker=runtime.worker,
            now=self.started_at,
            launcher=launcher or ("dagster" if launch_handle else "local"),
            launch_handle=launch_handle,
            **(extra or {}),
        )

    def finish(
        self,
        *,
        stop: Stop,
        tally: Tally,
        counters: dict[str, int],
        detail: str = "",
        tick_ms: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> RunReport:
        store = self.runtime.store
        detail = masked(detail)  # stored, printed, logged and shown in Dagster from here
        outcome = decide_outcome(stop, tally)
        previous = store.last_run(self.kind, before=self.run_id)
        streak = next_empty_streak(
            previous["empty_streak"] if previous else 0,
            productive=tally.productive,
            claimed=counters.get("claimed", 1),
        )
        completed = self.runtime.clock.now()
        store.finish_run(
            self.run_id,
            completed_at=completed,
            stop=stop,
            outcome=outcome,
            detail=detail,
            coverage_gaps=tally.coverage_gaps,
            productive=tally.productive,
            empty_streak=streak,
            tick_ms=tick_ms,
            counters=counters,
            **{k: v for k, v in counters.items() if k in COUNTERS},
            **(extra or {}),
        )
        report = RunReport(
            run_id=self.run_id,
            kind=self.kind.value,
            stop=stop,
            outcome=outcome,
            detail=detail,
            started_at=self.started_at,
            completed_at=completed,
            counters=counters,
            coverage_gaps=tally.coverage_gaps,
            empty_streak=streak,
            productive=tally.productive,
        )
        write_last_run(self.runtime.settings.state_path, report)
        return report


def write_last_run(state_dir: Path, report: RunReport) -> None:
    """Mirror this machine's last run of each kind; replaced atomically."""
    path = state_dir / ".last_run.json"
    state_dir.mkdir(parents=True, exist_ok=True)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data[report.kind] = report.as_json()
    # Unique per writer: two workers of one process may finish runs at the same moment.
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk leaves no half-written file behind
        raise


def unstarted_report(
    kind: RunKind, now: datetime, *, stop: Stop = Stop.INTERRUPTED, detail: str = "Not started"
) -> RunReport:
    """The verdict of a run that never started: failed, and written nowhere.

    `.last_run.json` and `catlas report` keep describing the last run that did start.
    """
    return RunReport(
        run_id="-",
        kind=kind.value,
        stop=stop,
        outcome=RunOutcome.FAILED,
        detail=masked(detail),
        started_at=now,
        completed_at=now,
    )


def refused_report(kind: RunKind, now: datetime, error: BlockingIOError) -> RunReport:
    """A run whose storage another process holds: failed with the `error` stop, naming it."""
    return unstarted_report(kind, now, stop=Stop.ERROR, detail=error.strerror or str(error))

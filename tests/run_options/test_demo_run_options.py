"""--deadline and -n on the demo: its daemon run stops early with `interrupted` or
`max_requests`, and a demo stopped before it starts resets nothing. The demo keeps its own
embedded SQLite state by design (it resets the state dir), so it runs on SQLite only."""

from __future__ import annotations

import json
from pathlib import Path

from catlas_assets.services.demo import run_demo
from catlas_assets.services.run_control import RunControl
from catlas_assets.settings import Settings
from tests.cli.cli_harness import db_rows


class Deadline(RunControl):
    """A deadline the test makes pass (time as an input, never a wait)."""

    def __init__(self) -> None:
        super().__init__(deadline_s=600)
        self.expired = False

    def deadline_passed(self) -> bool:
        return self.expired


def test_a_deadline_passed_during_the_demo_stops_the_simulation_with_interrupted(
    tmp_path: Path,
) -> None:
    state = tmp_path / ".catlas"
    control = Deadline()

    def after_tick(now, end) -> None:
        control.expired = True  # the wall clock ran out during the first tick

    result = run_demo(
        Settings(state_dir=str(state)), days=14, on_progress=after_tick, control=control
    )

    report = result.report
    assert result.ticks == 1
    assert (report.kind, report.stop.value) == ("daemon", "interrupted")
    assert report.detail.startswith("Reached the deadline (600 s); lived 0.")
    assert report.detail.endswith(" h of 14 simulated days in 1 ticks")
    # The first tick fetched every new sensor: stored data, so the stopped run is partial.
    assert report.outcome.value == "partial" and report.productive
    last = json.loads((state / ".last_run.json").read_text())
    assert (last["daemon"]["stop"], last["daemon"]["run_id"]) == ("interrupted", report.run_id)
    rows = db_rows(state, "SELECT stop, outcome FROM crawl_runs WHERE kind = 'daemon'")
    assert rows == [("interrupted", "partial")]


def test_a_spent_request_budget_ends_the_demo_with_max_requests(tmp_path: Path) -> None:
    state = tmp_path / ".catlas"
    control = RunControl(max_requests=1)

    result = run_demo(Settings(state_dir=str(state)), days=14, control=control)

    # Onboarding's first company spent the budget; the others wait and no tick starts.
    assert result.ticks == 0
    assert result.report.stop.value == "max_requests"
    assert result.report.detail.startswith("Reached max requests limit (1)")
    assert control.requests_used > 1


def test_a_demo_stopped_before_it_starts_resets_nothing(tmp_path: Path) -> None:
    state = tmp_path / ".catlas"
    state.mkdir()
    previous = state / "state.db"
    previous.write_bytes(b"a previous demo")

    result = run_demo(Settings(state_dir=str(state)), days=14, control=RunControl(deadline_s=0))

    assert (result.report.stop.value, result.report.outcome.value, result.report.detail) == (
        "interrupted",
        "failed",
        "Not started",
    )
    assert result.reset is False and result.ticks == 0
    assert previous.read_bytes() == b"a previous demo"
    assert not (state / ".last_run.json").exists()

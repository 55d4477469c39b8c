"""The demo's calendar shift: its weeks end on the day asked for, and `catlas ui` reads the
shift back from the demo's marker."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

from catlas_assets.services.demo import DEMO_MARKER, demo_shift_days, shift_to_end_on
from fixture_web import DEFAULT_NOW


def test_the_shift_makes_the_simulated_weeks_end_on_the_given_day() -> None:
    today = date(2026, 12, 2)
    shift = shift_to_end_on(today, 21)
    assert (DEFAULT_NOW + timedelta(days=21 + shift)).date() == today
    assert shift_to_end_on((DEFAULT_NOW + timedelta(days=14)).date(), 14) == 0


def test_the_ui_reads_the_shift_of_the_last_demo(tmp_path: Path) -> None:
    assert demo_shift_days(tmp_path) == 0
    (tmp_path / DEMO_MARKER).write_text(json.dumps({"run_id": "r", "days": 21, "shift_days": 310}))
    assert demo_shift_days(tmp_path) == 310
    (tmp_path / DEMO_MARKER).write_text('{"run_id": "earlier", "days": 14}\n')
    assert demo_shift_days(tmp_path) == 0

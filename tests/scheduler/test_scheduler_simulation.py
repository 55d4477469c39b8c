"""Weeks of scheduling on the virtual clock against the fixture web, checked to the second.

The sensors watch cadence-works.com: a page that never changes, a newsroom with a big
change on day 3, a page removed (404) on day 2, and a price list that changes on day 4
while its validators keep answering 304. Intervals must follow the spec's formula exactly;
`next_run_at` must sit inside the ±10 % jitter band around each interval.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise

import pytest

from catlas_assets.domain.vocabulary import MEANINGFUL_OR_ABOVE
from catlas_assets.services import catalog
from catlas_assets.services.tick import run_tick
from fixture_web import DEFAULT_NOW, FixtureWeb, day_start
from tests.conftest import Sim

SITE = "http://cadence-works.com"
BURST = 1800


@dataclass(frozen=True)
class Seen:
    at: datetime
    outcome: str
    change_kind: str | None
    interval: int
    next_run_at: datetime
    status: str


def _add(sim: Sim, surface: str, path: str) -> int:
    runtime = sim.runtime
    company = runtime.store.company_by_name("Cadence Works")
    company_id = (
        company["id"]
        if company
        else catalog.add_company(runtime, name="Cadence Works", website=SITE, tier=3)
    )
    return catalog.add_sensor(runtime, company_id=company_id, surface=surface, url=SITE + path)


def live(sim: Sim, days: int) -> dict[int, list[Seen]]:
    """Tick, then jump the clocks to the next due sensor, until `days` have passed."""
    runtime, store = sim.runtime, sim.runtime.store
    end = DEFAULT_NOW + timedelta(days=days)
    seen: dict[int, list[Seen]] = defaultdict(list)
    while True:
        now = sim.clock.now()
        for run in run_tick(runtime).runs:
            row = store.sensor(run.sensor_id)
            seen[run.sensor_id].append(
                Seen(
                    now,
                    run.outcome.value,
                    run.change_kind.value if run.change_kind else None,
                    row["current_interval_s"],
                    row["next_run_at"],
                    row["status"],
                )
            )
        due = store.next_due_at()
        if due is None or due >= end:
            return seen
        sim.advance(max(due - now, timedelta(seconds=1)))


def assert_jitter_band(history: list[Seen]) -> None:
    for s in history:
        delay = (s.next_run_at - s.at).total_seconds()
        assert 0.9 * s.interval - 1e-3 <= delay <= 1.1 * s.interval + 1e-3, s


def test_a_stable_page_grows_its_interval_by_stability_growth(sim: Sim) -> None:
    sensor = _add(sim, "docs", "/stable")  # docs, tier 3: base 1 day
    history = live(sim, days=16)[sensor]
    assert [s.outcome for s in history][:2] == ["ok", "not_modified"]
    assert {s.outcome for s in history[1:]} <= {"unchanged", "not_modified"}
    # base, then x1.25 per unchanged run (rounded to the second)
    assert [s.interval for s in history][:6] == [86400, 108000, 135000, 168750, 210938, 263672]
    assert_jitter_band(history)
    assert all(s.status == "active" for s in history)


def test_a_meaningful_change_bursts_then_decays_back_to_base(sim: Sim) -> None:
    sensor = _add(sim, "newsroom", "/launches")  # newsroom, tier 3: base 6 h
    history = live(sim, days=6)[sensor]
    changed = [i for i, s in enumerate(history) if s.outcome == "changed"]
    assert len(changed) == 1, [s.outcome for s in history]
    k = changed[0]
    assert history[k - 1].at < day_start(3) <= history[k].at
    assert history[k].change_kind in {kind.value for kind in MEANINGFUL_OR_ABOVE}
    # Before: the base, then growth by 1.25 per unchanged run.
    growth = [21600, 27000, 33750, 42188, 52735, 65919, 82399, 102999]
    assert [s.interval for s in history[:k]] == growth[:k]
    # The burst, then one decay step (x2) per unchanged run back to base, then growth again.
    assert [s.interval for s in history[k : k + 6]] == [BURST, 3600, 7200, 14400, 21600, 27000]
    assert_jitter_band(history)


def test_failures_back_off_by_their_policy_multiplier(sim: Sim) -> None:
    sensor = _add(sim, "blog", "/retired-line")  # blog, tier 3: base 12 h; 404 from day 2
    history = live(sim, days=16)[sensor]
    assert [s.outcome for s in history] == [
        "ok",
        "not_modified",
        "not_modified",
        "failed",
        "failed",
        "failed",
    ]
    # PAGE_REMOVED multiplies by 4.0, capped at max_interval_s (7 days).
    assert [s.interval for s in history] == [43200, 54000, 67500, 270000, 604800, 604800]
    assert [s.status for s in history][3:] == ["active", "failing", "failing"]
    assert_jitter_band(history)


@pytest.mark.parametrize("full_refetch_days", [3, 30])
def test_a_server_that_answers_304_wrongly_is_caught_by_the_forced_full_refetch(
    make_runtime, web: FixtureWeb, database_url: str, full_refetch_days: int
) -> None:
    sim = Sim(make_runtime(database_url, full_refetch_interval_s=full_refetch_days * 86400), web)
    sensor = _add(sim, "pricing", "/cache")  # changes on day 4, validators never change
    history = live(sim, days=12)[sensor]
    requests = [r for r in web.requests if r.host == "cadence-works.com" and r.path == "/cache"]
    assert len(requests) == len(history)
    conditional = [r.if_none_match is not None or r.if_modified_since is not None for r in requests]
    after_change = [
        (s, cond) for s, cond in zip(history, conditional, strict=True) if s.at >= day_start(4)
    ]
    if full_refetch_days == 30:
        # Never fetched in full again: the lying 304s hide the new price list for good.
        assert all(cond and s.outcome == "not_modified" for s, cond in after_change)
        return
    # Every conditional request after the change got a 304; the first full fetch sees it.
    first_full = next(i for i, (_, cond) in enumerate(after_change) if not cond)
    assert all(s.outcome == "not_modified" for s, _ in after_change[:first_full])
    assert after_change[first_full][0].outcome == "changed"
    # Full fetches came at least once per full_refetch_interval_s, and not more often.
    fulls = [s.at for s, cond in zip(history, conditional, strict=True) if not cond]
    gaps = [b - a for a, b in pairwise(fulls)]
    assert gaps and all(gap >= timedelta(days=3) for gap in gaps)

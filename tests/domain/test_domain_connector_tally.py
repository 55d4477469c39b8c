"""Connector stats summed as tallies, then applied once, equal the runs applied one by one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.connector_tally import StatsTally

T0 = datetime(2026, 1, 5, 8, tzinfo=UTC)

Run = tuple[str, str | None, int | None]  # outcome, failure class, entities

runs_strategy = st.lists(
    st.tuples(
        st.sampled_from(["ok", "unchanged", "not_modified", "failed", "skipped"]),
        st.sampled_from([None, None, "SCHEMA", "HTTP_5XX", "TIMEOUT"]),
        st.one_of(st.none(), st.integers(0, 500)),
    ),
    max_size=12,
)


def one_run(stats: dict[str, Any], run: Run, now: datetime) -> dict[str, Any]:
    """What one run did to the stats JSON before tallies (the reference, written out)."""
    outcome, failure_class, entities = run
    out = dict(stats)
    out["runs"] = out.get("runs", 0) + 1
    out["outcomes"] = {
        **out.get("outcomes", {}),
        outcome: out.get("outcomes", {}).get(outcome, 0) + 1,
    }
    if failure_class:
        out["failures"] = out.get("failures", 0) + 1
        if failure_class == "SCHEMA":
            out["schema_failures"] = out.get("schema_failures", 0) + 1
        out["last_failure_class"] = failure_class
    else:
        out["last_success_at"] = now.isoformat()
    if entities is not None:
        out["entities_last"] = entities
    out["last_run_at"] = now.isoformat()
    return out


def tally(run: Run, now: datetime) -> StatsTally:
    outcome, failure_class, entities = run
    return StatsTally.of_run(
        outcome=outcome, failure_class=failure_class, entities=entities, now=now
    )


@settings(max_examples=400, deadline=None)
@given(earlier=runs_strategy, later=runs_strategy, split=st.integers(0, 12))
def test_summed_tallies_applied_once_equal_the_runs_applied_one_by_one(
    earlier: list[Run], later: list[Run], split: int
) -> None:
    stored: dict[str, Any] = {}
    for i, run in enumerate(earlier):  # what the row holds already
        stored = one_run(stored, run, T0 + timedelta(minutes=i))
    start = T0 + timedelta(days=1)
    expected = stored
    for i, run in enumerate(later):
        expected = one_run(expected, run, start + timedelta(seconds=i))
    # Summed in two parts, as a committer holds some back and sums them with a later group.
    first, second = StatsTally(), StatsTally()
    for i, run in enumerate(later):
        (first if i < split else second).add(tally(run, start + timedelta(seconds=i)))
    first.add(second)
    before = dict(stored)
    assert first.applied_to(stored) == expected
    assert stored == before  # the stored JSON is not changed in place


def test_an_empty_tally_changes_nothing_and_counters_appear_with_their_first_event() -> None:
    assert StatsTally().applied_to({"runs": 3}) == {"runs": 3}
    ok = tally(("ok", None, 4), T0).applied_to({})
    assert "failures" not in ok and "schema_failures" not in ok
    assert ok == {
        "runs": 1,
        "outcomes": {"ok": 1},
        "last_success_at": T0.isoformat(),
        "entities_last": 4,
        "last_run_at": T0.isoformat(),
    }

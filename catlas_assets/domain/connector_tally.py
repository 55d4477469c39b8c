"""What sensor runs add to their connector's `connectors.stats` JSON, as data (pure).

A run's tally is built where the run ends; tallies of the same connector are summed in run
order (`add`) and the sum is applied to the stored JSON once (`applied_to`). Summing then
applying gives the JSON that applying the runs one after another would: counts add up,
and each `last_*` field keeps the latest run's value that set it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class StatsTally:
    runs: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    schema_failures: int = 0
    last_failure_class: str | None = None
    last_success_at: str | None = None
    entities_last: int | None = None
    last_run_at: str | None = None

    @classmethod
    def of_run(
        cls, *, outcome: str, failure_class: str | None, entities: int | None, now: datetime
    ) -> StatsTally:
        """One run: its outcome, its failure class (None when it succeeded), the entities
        its snapshot extracted (None without a snapshot) and when it ran."""
        at = now.isoformat()
        return cls(
            runs=1,
            outcomes={outcome: 1},
            failures=1 if failure_class else 0,
            schema_failures=1 if failure_class == "SCHEMA" else 0,
            last_failure_class=failure_class,
            last_success_at=None if failure_class else at,
            entities_last=entities,
            last_run_at=at,
        )

    def add(self, later: StatsTally) -> None:
        """Fold in `later`, a tally of runs after these (in place)."""
        self.runs += later.runs
        for outcome, count in later.outcomes.items():
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + count
        self.failures += later.failures
        self.schema_failures += later.schema_failures
        if later.last_failure_class is not None:
            self.last_failure_class = later.last_failure_class
        if later.last_success_at is not None:
            self.last_success_at = later.last_success_at
        if later.entities_last is not None:
            self.entities_last = later.entities_last
        if later.last_run_at is not None:
            self.last_run_at = later.last_run_at

    def applied_to(self, stats: dict[str, Any]) -> dict[str, Any]:
        """The stored `stats` JSON after these runs (a new dict; `stats` is not changed)."""
        out = dict(stats)
        if not self.runs:
            return out
        out["runs"] = int(out.get("runs", 0)) + self.runs
        outcomes = dict(out.get("outcomes") or {})
        for outcome, count in self.outcomes.items():
            outcomes[outcome] = int(outcomes.get(outcome, 0)) + count
        out["outcomes"] = outcomes
        # A counter appears with its first event, as the connectors table has always shown.
        if self.failures:
            out["failures"] = int(out.get("failures", 0)) + self.failures
        if self.schema_failures:
            out["schema_failures"] = int(out.get("schema_failures", 0)) + self.schema_failures
        for key in ("last_failure_class", "last_success_at", "entities_last", "last_run_at"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out
